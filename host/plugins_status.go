package host

import (
	"context"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/embedq"
)

// PluginStatus reports the active provider and what search does with it.
func (o hostOps) PluginStatus(ctx context.Context, _ memhost.PluginStatusRequest) (memhost.PluginStatusResponse, error) {
	h := o.h
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
func (o hostOps) Plugins(ctx context.Context, req memhost.PluginsRequest) (memhost.PluginsResponse, error) {
	h := o.h
	return h.providers.Plugins(ctx, req)
}

// UsePlugin: see providers.ProviderService.UsePlugin.
func (o hostOps) UsePlugin(ctx context.Context, req memhost.UsePluginRequest) (memhost.UseResponse, error) {
	h := o.h
	return h.providers.UsePlugin(ctx, req)
}

// Models: see providers.ProviderService.Models.
func (o hostOps) Models(ctx context.Context, req memhost.ModelsRequest) (memhost.ModelsResponse, error) {
	h := o.h
	return h.providers.Models(ctx, req)
}

// PullModel: see providers.ProviderService.PullModel.
func (o hostOps) PullModel(ctx context.Context, req memhost.PullModelRequest) (memhost.PullResponse, error) {
	h := o.h
	resp, err := h.providers.PullModel(ctx, req)
	if err == nil && !resp.Already {
		// A local provider started before the model was there (a server
		// that found it missing, offline) waits out its download's
		// backoff: started again, it finds the file at once.
		if name, nerr := h.queue.ProviderName(); nerr == nil && name == embedq.DefaultPlugin {
			h.reg.Stop(name)
			h.queue.Wake()
		}
	}
	return resp, err
}

// RemoveModel: see providers.ProviderService.RemoveModel.
func (o hostOps) RemoveModel(ctx context.Context, req memhost.RemoveModelRequest) (memhost.RemoveModelResponse, error) {
	h := o.h
	return h.providers.RemoveModel(ctx, req)
}
