package memhost

// FilesResponse lists pages known to the index or on disk.
type FilesResponse struct {
	Files []FileInfo `json:"files"`
}

// FileInfo is one page. Stale means the index does not hold the page as it
// is on disk and a sync would change that: it is new, edited or deleted
// since the last sync. A page no sync can index is never stale, or it
// would stay stale for ever: its state says why instead.
type FileInfo struct {
	Path   string `json:"path"`
	Hash   string `json:"hash"` // as indexed; "" when not indexed
	Mtime  string `json:"mtime,omitempty"`
	Size   int64  `json:"size"`
	Chunks int    `json:"chunks"`
	Stale  bool   `json:"stale"`
	State  string `json:"state"` // see the states below
}

// SyncResult reports what a sync did.
type SyncResult struct {
	Scanned      int       `json:"scanned"`
	Indexed      int       `json:"indexed"`
	Unchanged    int       `json:"unchanged"`
	Removed      int       `json:"removed"`
	Chunks       int       `json:"chunks"`       // chunks written
	Paths        []string  `json:"paths"`        // pages indexed
	RemovedPaths []string  `json:"removedPaths"` // pages dropped from the index
	Problems     []Problem `json:"problems"`
	DurationMs   float64   `json:"durationMs"`
}

// Problem is a page that could not be indexed as it is, and why.
type Problem struct {
	Path    string `json:"path"`
	Problem string `json:"problem"`
}
