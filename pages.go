package memhost

// GetRequest reads a page or a range of its lines (memory_get).
type GetRequest struct {
	Path      string `json:"path" jsonschema:"e.g. reference/contacts.md"`
	StartLine int    `json:"startLine,omitempty" jsonschema:"1-based"` // 0 means 1
	Lines     int    `json:"lines,omitempty"`                          // 0 means to the end
}

// GetResponse is the text read.
type GetResponse struct {
	Path       string `json:"path"`
	Text       string `json:"text"`
	Lines      Lines  `json:"lines"`
	TotalLines int    `json:"totalLines"`
}

// WriteRequest appends to a page or an H2 section, or replaces the section
// (the whole page when no section is given) (notebook_write).
type WriteRequest struct {
	Path    string `json:"path" jsonschema:"e.g. knowledge/projects.md; made when missing"`
	Text    string `json:"text"`
	Section string `json:"section,omitempty" jsonschema:"H2 section, made when missing; default the whole page"`
	Replace bool   `json:"replace,omitempty"`
	// RequestID, when set, makes the write idempotent: a run with the id
	// of one that landed writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
}

// WriteResponse says where text was written.
type WriteResponse struct {
	Path    string `json:"path"`
	Section string `json:"section,omitempty"`
	Lines   Lines  `json:"lines"`
	Created bool   `json:"created"` // the page did not exist before
	// Warnings are troubles after the write (the index could not be
	// updated, or was rebuilt): what was written is stored.
	Warnings []string `json:"warnings,omitempty"`
	// Redacted are the secrets replaced before the text was stored.
	Redacted []Redaction `json:"redacted,omitempty"`
}

// RemoveRequest names a page to delete.
type RemoveRequest struct {
	Path string `json:"path"`
	// RequestID, when set, makes the write idempotent: a run with the id
	// of one that landed writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
}

// RemoveResponse names the page removed.
type RemoveResponse struct {
	Path string `json:"path"`
	// Warnings are troubles after the write (the index could not be
	// updated, or was rebuilt): what was written is stored.
	Warnings []string `json:"warnings,omitempty"`
}
