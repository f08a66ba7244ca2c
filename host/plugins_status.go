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
	resp.Generator = h.ProviderService.GeneratorStatus(ctx)
	return resp, err
}
