package host

import "github.com/memhost/memhost/host/browse"

// The dashboard's types, from package browse, until they move to the
// root package with the others.
type (
	PageRequest        = browse.PageRequest
	PageResponse       = browse.PageResponse
	SavePageRequest    = browse.SavePageRequest
	SavePageResponse   = browse.SavePageResponse
	PagesRequest       = browse.PagesRequest
	PageEntry          = browse.PageEntry
	FolderEntry        = browse.FolderEntry
	PagesResponse      = browse.PagesResponse
	TranscriptRequest  = browse.TranscriptRequest
	TranscriptResponse = browse.TranscriptResponse
	StorageRequest     = browse.StorageRequest
	Usage              = browse.Usage
	StorageResponse    = browse.StorageResponse
)

var (
	// StandardFolders are the notebook's folders of seed 000.
	StandardFolders = browse.StandardFolders
	// ErrPageChanged: see browse.ErrPageChanged.
	ErrPageChanged = browse.ErrPageChanged
	// PageHash: see browse.PageHash.
	PageHash = browse.PageHash
)
