package host

import (
	"context"

	"github.com/memhost/memhost"
)

// PluginStatus reports the active provider and what search does with it.
func (h *Host) PluginStatus(ctx context.Context, _ memhost.PluginStatusRequest) (memhost.PluginStatusResponse, error) {
	var resp memhost.PluginStatusResponse
	st, err := h.Status(ctx, memhost.StatusRequest{})
	if err != nil {
		return resp, err
	}
	resp.Mode, resp.Reason, resp.Pending, resp.Embedded = st.Mode, st.Reason, st.Pending, st.Embedded
	resp.FailedDownloads = st.FailedDownloads
	resp.ProviderStatus, err = h.queue.ProviderStatus(ctx)
	resp.Generator = h.providers.GeneratorStatus(ctx)
	return resp, err
}

// Plugins: see providers.ProviderService.Plugins.
func (h *Host) Plugins(ctx context.Context, req memhost.PluginsRequest) (memhost.PluginsResponse, error) {
	return h.providers.Plugins(ctx, req)
}

// UsePlugin: see providers.ProviderService.UsePlugin.
func (h *Host) UsePlugin(ctx context.Context, req memhost.UsePluginRequest) (memhost.UseResponse, error) {
	return h.providers.UsePlugin(ctx, req)
}

// Models: see providers.ProviderService.Models.
func (h *Host) Models(ctx context.Context, req memhost.ModelsRequest) (memhost.ModelsResponse, error) {
	return h.providers.Models(ctx, req)
}

// PullModel: see providers.ProviderService.PullModel.
func (h *Host) PullModel(ctx context.Context, req memhost.PullModelRequest) (memhost.PullResponse, error) {
	return h.providers.PullModel(ctx, req)
}

// RemoveModel: see providers.ProviderService.RemoveModel.
func (h *Host) RemoveModel(ctx context.Context, req memhost.RemoveModelRequest) (memhost.RemoveModelResponse, error) {
	return h.providers.RemoveModel(ctx, req)
}
