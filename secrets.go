package memhost

import "github.com/memhost/memhost/knowledge"

// Redaction is a secret found in what a write was given and replaced
// (knowledge.Redaction: a fact's value is redacted too, and knowledge
// names none of the root's types).
type Redaction = knowledge.Redaction

// SecretsScanRequest lists the secrets already in the home: its notebook
// pages and transcripts and, with History, every version of them in the
// home's git history.
type SecretsScanRequest struct {
	History bool `json:"history,omitempty"`
}

// SecretFinding is a secret found in a file; never the secret itself.
type SecretFinding struct {
	Path        string `json:"path"` // home-relative ("notebook/x.md", "sessions/s.jsonl")
	Line        int    `json:"line"`
	Rule        string `json:"rule"`
	Fingerprint string `json:"fingerprint"`
	// History is set for a finding in a version the git history holds
	// (Path is the path it had there); Object is that version's blob.
	History bool   `json:"history,omitempty"`
	Object  string `json:"object,omitempty"`
}

// SecretsScanResponse is what a scan found.
type SecretsScanResponse struct {
	Findings   []SecretFinding `json:"findings"`
	Files      int             `json:"files"` // files (and history versions) scanned
	Bytes      int64           `json:"bytes"` // their size
	DurationMs float64         `json:"durationMs"`
}

// SecretsRedactRequest rewrites the home's pages and transcripts that
// hold a secret, each secret replaced by its marker. The git history is
// not rewritten.
type SecretsRedactRequest struct {
	RequestID string `json:"requestId,omitempty"`
}

// SecretsRedactResponse says what was rewritten.
type SecretsRedactResponse struct {
	Redacted []SecretFinding `json:"redacted"`
	Files    []string        `json:"files"` // home-relative files rewritten
	Indexed  int             `json:"indexed"`
	// Warnings are troubles after the files were rewritten (the index
	// could not be updated): what was rewritten is stored.
	Warnings []string `json:"warnings,omitempty"`
	// Changed are the index paths of Files (not part of the answer's
	// JSON).
	Changed []string `json:"-"`
}
