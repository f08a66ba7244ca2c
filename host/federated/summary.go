package federated

import (
	"context"

	"github.com/memhost/memhost"
)

// FederationSummary is the federation part of Status on its own (nil when
// the home is not a memhost git repository): the remote, the branch, the
// last syncs and the open conflicts, read from .git without Status's look
// at every page. The dashboard's home shows it on each paint.
func (fd *FederationService) FederationSummary(ctx context.Context) *memhost.FederationStatus {
	return fd.status(ctx)
}
