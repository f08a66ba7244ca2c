package host

import "context"

// FederationSummary is the federation part of Status on its own (nil when
// the home is not a memhost git repository): the remote, the branch, the
// last syncs and the open conflicts, read from .git without Status's look
// at every page. The dashboard's home shows it on each paint.
func (h *Host) FederationSummary(ctx context.Context) *FederationStatus {
	return h.federationStatus(ctx)
}
