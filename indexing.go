package memhost

import "time"

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

// StatusRequest asks for the home's status; it has no parameters.
type StatusRequest struct{}
