package memhost

// ExportRequest writes the home's source of truth to an archive.
type ExportRequest struct {
	Path string `json:"path"` // the .tar.gz to write; must not exist
	// IncludeSecrets exports the files that hold a secret too; by
	// default they are left out and listed in LeftOut.
	IncludeSecrets bool `json:"includeSecrets,omitempty"`
}

// ExportResponse says what was written.
type ExportResponse struct {
	Path   string `json:"path"`
	Files  int    `json:"files"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"` // of the archive
	// LeftOut are the files not exported because they hold a secret.
	LeftOut []HeldBack `json:"leftOut,omitempty"`
}

// ImportRequest reads an archive made by Export into the home.
type ImportRequest struct {
	Path string `json:"path"`
	// WithConfig takes the archive's config.yaml when the home has none.
	// Off by default: a config can run commands (health.alerts.command),
	// name the URLs providers contact and move the notebook, so it is
	// taken only when the user asks.
	WithConfig bool `json:"withConfig,omitempty"`
}

// ImportResponse says what the import did to each file.
type ImportResponse struct {
	Path      string   `json:"path"`
	Files     int      `json:"files"`     // in the archive
	Added     []string `json:"added"`     // new in the home
	Merged    []string `json:"merged"`    // merged with the home's version
	Unchanged int      `json:"unchanged"` // the same in both
	// Conflicts are pages both versions of which are kept: the home's at
	// Path, the archive's in Sibling.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// Config is what happened to the archive's config.yaml: "imported"
	// (asked for, and the home had none), "kept" (the home's own stays),
	// "left out" (not asked for), or "" (none in the archive).
	Config  string `json:"config,omitempty"`
	Indexed int    `json:"indexed"`
	// Redacted are the secrets replaced (memory.privacy.secrets: redact)
	// in the archive's pages and transcripts before they were stored; a
	// Field is the file's path in the archive.
	Redacted []Redaction `json:"redacted,omitempty"`
	// Changed are the index paths the import wrote and ChangedFiles the
	// home's other files (not part of the answer's JSON).
	Changed      []string `json:"-"`
	ChangedFiles []string `json:"-"`
	// Warnings are troubles after the files were written (the index could
	// not be updated): what was imported is stored.
	Warnings []string `json:"warnings,omitempty"`
}

// GitInitRequest makes the home a git repository memhost commits to.
type GitInitRequest struct {
	// Remote, when set, is written to config.yaml (federation.remote) and
	// synced with at once.
	Remote string `json:"remote,omitempty"`
	Branch string `json:"branch,omitempty"` // default federation.branch
}

// GitInitResponse reports GitInit.
type GitInitResponse struct {
	GitInitResult
	Home   string `json:"home"`
	Remote string `json:"remote,omitempty"`
	// Sync is the first sync with the remote; SyncError why it failed
	// (the repository is made either way).
	Sync      *FedSyncResponse `json:"sync,omitempty"`
	SyncError string           `json:"syncError,omitempty"`
}

// FedSyncRequest syncs the home with its remote; it has no parameters.
type FedSyncRequest struct{}

// FedSyncResponse reports a sync and the re-indexing of what it changed.
type FedSyncResponse struct {
	GitSyncResult
	Indexed int `json:"indexed"` // files re-indexed (changed by the merge)
	// Paths are their index paths ("knowledge/x.md", "sessions/s.jsonl").
	Paths      []string `json:"paths,omitempty"`
	DurationMs float64  `json:"durationMs"`
	// HeldBack are the shared files not committed or pushed because they
	// hold a secret (the rest is synced).
	HeldBack []HeldBack `json:"heldBack,omitempty"`
	// Gone are the Paths the merge deleted (not part of the answer's
	// JSON): what the sync changed is Paths, less Gone, and Gone removed.
	Gone []string `json:"-"`
}

// FederationStatus is the federation part of status and health.
type FederationStatus struct {
	Remote    string     `json:"remote,omitempty"`
	Branch    string     `json:"branch"`
	Head      string     `json:"head,omitempty"`
	State     GitState   `json:"state"`
	Conflicts []Conflict `json:"conflicts,omitempty"`
}
