package host

import "github.com/memhost/memhost/host/browse"

// The dashboard's types, from package browse, until they move to the
// root package with the others.

var (
	// StandardFolders are the notebook's folders of seed 000.
	StandardFolders = browse.StandardFolders
	// ErrPageChanged: see browse.ErrPageChanged.
	ErrPageChanged = browse.ErrPageChanged
	// PageHash: see browse.PageHash.
	PageHash = browse.PageHash
)
