package memhost

// DailyLogRequest appends an entry to today's daily log.
type DailyLogRequest struct {
	Text string `json:"text" jsonschema:"its first line is the heading"`
	// RequestID, when set, makes the write idempotent: a run with the id
	// of one that landed writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
}

// DailyLogResponse says where the entry went.
type DailyLogResponse struct {
	Path    string `json:"path"`
	Heading string `json:"heading"`
	Lines   Lines  `json:"lines"`
	Created bool   `json:"created"`
	// Warnings are troubles after the write (the index could not be
	// updated, or was rebuilt): what was written is stored.
	Warnings []string `json:"warnings,omitempty"`
	// Redacted are the secrets replaced before the text was stored.
	Redacted []Redaction `json:"redacted,omitempty"`
}
