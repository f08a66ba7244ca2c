package memhost

// ModelsRequest asks for the models folder's list; it has no parameters.
type ModelsRequest struct{}

// ModelsResponse lists the models folder.
type ModelsResponse struct {
	Dir    string  `json:"dir"`
	Models []Model `json:"models"`
}

// Model is a file of the models folder.
type Model struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	Partial  bool   `json:"partial"` // an interrupted download (.part)
	Modified string `json:"modified"`
}

// PullModelRequest names a model to download: the default model by name
// (or ""), any GGUF by URL, or a local file to copy in.
type PullModelRequest struct {
	Model  string `json:"model"`
	SHA256 string `json:"sha256,omitempty"`
	// Progress, when not nil, is called as the download proceeds.
	Progress func(done, total int64) `json:"-"`
}

// PullResponse describes a model in place.
type PullResponse struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	Already bool   `json:"already"`        // it was there before
	From    string `json:"from,omitempty"` // the local file it was copied from
}

// RemoveModelRequest names a model to delete.
type RemoveModelRequest struct {
	Name string `json:"name"`
	// RequestID, when set, makes the write idempotent: a run with the id
	// of one that landed writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
}

// RemoveModelResponse names the model deleted.
type RemoveModelResponse struct {
	Removed string `json:"removed"`
}
