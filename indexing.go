package memhost

import (
	"time"

	"github.com/memhost/memhost/knowledge"
)

// InitRequest sets up a home; it has no parameters.
type InitRequest struct{}

// InitResponse describes the home.
type InitResponse struct {
	Home          string `json:"home"`
	Notebook      string `json:"notebook"`
	Config        string `json:"config"`
	ConfigCreated bool   `json:"configCreated"`
	Pages         int    `json:"pages"`
}

// SyncRequest asks for a sync; it has no parameters.
type SyncRequest struct{}

// RebuildRequest asks for a rebuild; it has no parameters.
type RebuildRequest struct{}

// FilesRequest asks for the file list; it has no parameters.
type FilesRequest struct{}

// EmbedRequest runs the embedding queue.
type EmbedRequest struct {
	// Budget bounds the run; 0 works through the whole queue, waiting for
	// a model that is downloading or loading.
	Budget time.Duration `json:"budget,omitempty"`
	// Wait, when another process is embedding this home, waits for it and
	// then embeds what it left, instead of returning with Busy set.
	Wait bool `json:"wait,omitempty"`
	// Sync indexes what changed on disk first.
	Sync bool `json:"sync,omitempty"`
}

// StatusRequest asks for the home's status.
type StatusRequest struct {
	// Quick answers only the index's counts and the search mode, without
	// what costs a look at every page or a git process (Stale,
	// Unindexable, flushes, links, federation stay empty): what the
	// dashboard's home shows on each paint, at 10k pages in a few
	// milliseconds rather than tens.
	Quick bool `json:"quick,omitempty"`
}

// StatusResponse summarises a home.
type StatusResponse struct {
	Home     string `json:"home"`
	Notebook string `json:"notebook"`
	Files    int    `json:"files"`  // indexed pages
	Chunks   int    `json:"chunks"` // indexed chunks
	Stale    int    `json:"stale"`  // pages new, edited or deleted since the last sync
	// Unindexable counts pages no sync can index: too large, unreadable,
	// or a symlink out of the notebook (see Files for which). They are
	// not stale.
	Unindexable int    `json:"unindexable"`
	LastSync    string `json:"lastSync,omitempty"`
	DBSizeBytes int64  `json:"dbSizeBytes"`
	Mode        string `json:"mode"`
	Reason      string `json:"reason"`             // why the mode is keyword; "" when hybrid
	Provider    string `json:"provider,omitempty"` // the active embeddings plugin
	Model       string `json:"model,omitempty"`    // its model id
	Dimensions  int    `json:"dimensions,omitempty"`
	Dead        int    `json:"dead,omitempty"` // chunks whose embedding failed too often (memhost health --repair retries them)
	Pending     int    `json:"pending"`        // chunks waiting for a vector of the model
	Embedded    int    `json:"embedded"`       // chunks with one
	// Pre-compaction flushes asked of agents.
	Flushes   int           `json:"flushes"`
	LastFlush *FlushReceipt `json:"lastFlush,omitempty"`
	// FailedDownloads are models whose last download failed, with the
	// error and when it is tried next (the search reason says it briefly).
	FailedDownloads []FailedDownload `json:"failedDownloads,omitempty"`
	// UnresolvedLinks counts the links that find no page or
	// attachment (Links with Unresolved lists them).
	UnresolvedLinks int `json:"unresolvedLinks"`
	// Federation is the git federation's state; nil when the home is not
	// a memhost git repository.
	Federation *FederationStatus `json:"federation,omitempty"`
	// Generator is the text model and the last consolidation
	// (host/semantic).
	Generator knowledge.ConsolidationStatus `json:"generator"`
}

// PluginStatusResponse is the active provider's state and what search
// does with it.
type PluginStatusResponse struct {
	ProviderStatus
	Mode     string `json:"mode"`
	Reason   string `json:"reason,omitempty"`
	Pending  int    `json:"pending"`
	Embedded int    `json:"embedded"`
	// FailedDownloads: as in StatusResponse.
	FailedDownloads []FailedDownload `json:"failedDownloads,omitempty"`
	// Generator is the configured generator's state (host/providers).
	Generator ProviderStatus `json:"generator"`
}

// FailedDownload is a model whose download keeps failing.
type FailedDownload struct {
	Name    string    `json:"name"`
	At      time.Time `json:"at"`      // the last attempt
	Err     string    `json:"error"`   // what it failed with
	Offline bool      `json:"offline"` // no network: the host was not found or not reachable
	Count   int       `json:"count"`   // failed attempts in a row
	NextTry string    `json:"nextTry"` // RFC 3339: not tried again before
}
