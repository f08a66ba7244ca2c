package memhost

import "time"

// InitResult reports Init.
type GitInitResult struct {
	Created bool   `json:"created"` // a new repository (else an existing one was adopted)
	Branch  string `json:"branch"`
	Commit  string `json:"commit"`
	// Untracked lists what the adopted repository tracked outside the
	// shared paths and no longer does (the files stay on disk): top
	// folders ("brain"), or files in the shared folders.
	Untracked []string `json:"untracked,omitempty"`
}

// Conflict is a file both sides changed in ways that cannot be merged:
// ours stays at Path, theirs is in Sibling (home-relative paths), or, when
// the other side made Path a folder, the file's version is in Sibling.
// A file changed on one side and deleted on the other is kept (no
// Sibling): the conflict says so while Path still holds the version
// kept (Kept, its blob id), until the person changes or removes it.
type Conflict struct {
	Path    string `json:"path"`
	Sibling string `json:"sibling"`
	Time    string `json:"time"`
	Reason  string `json:"reason"`
	Kept    string `json:"kept,omitempty"`
}

// State is what the last syncs left, for status and health: kept in
// .git/memhost/state.json (never committed).
type GitState struct {
	LastSync    string `json:"lastSync,omitempty"`    // last attempt, RFC 3339
	LastSuccess string `json:"lastSuccess,omitempty"` // last sync that pushed
	LastError   string `json:"lastError,omitempty"`   // "" after a success
	// Failures counts syncs failed in a row; the serve loop waits
	// pushIntervalSec × 2^(Failures-1), at most GitMaxBackoff, before the next.
	Failures int `json:"failures"`
	// Rewritten is set while the remote's history is refused.
	Rewritten bool `json:"rewritten,omitempty"`
	// Refused is set while the remote is refused for changing what is
	// not shared (ErrRefused; LastError says what).
	Refused bool `json:"refused,omitempty"`
	// Conflicts are the merges that kept both sides, until their sibling
	// page is removed.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// LastMaintenance is when Maintain last ran `git gc --auto`.
	LastMaintenance string `json:"lastMaintenance,omitempty"`
	// HeldBack are the shared files not committed (so never pushed)
	// because they hold a secret, until a commit finds them clean.
	HeldBack []HeldBack `json:"heldBack,omitempty"`
}

// HeldBack is a file federation did not commit: it holds a secret. The
// secret itself is never recorded.
type HeldBack struct {
	Path        string `json:"path"` // home-relative
	Rule        string `json:"rule"`
	Line        int    `json:"line"`
	Fingerprint string `json:"fingerprint"`
}

// Backoff is how long to wait before the next sync after s.
func (s GitState) Backoff(interval time.Duration) time.Duration {
	d := interval
	for i := 1; i < s.Failures && d < GitMaxBackoff; i++ {
		d *= 2
	}
	if d > GitMaxBackoff {
		d = GitMaxBackoff
	}
	return d
}

// SyncResult reports a Sync.
type GitSyncResult struct {
	Remote string `json:"remote"`
	Branch string `json:"branch"`
	// Before and After are HEAD's commit before and after.
	Before string `json:"before"`
	After  string `json:"after"`
	// Merged is how theirs came in: "" (nothing new), "fast-forward" or
	// "merge".
	Merged string `json:"merged,omitempty"`
	// Changed lists the home-relative files the sync changed on disk.
	Changed   []string   `json:"changed"`
	Conflicts []Conflict `json:"conflicts,omitempty"`
	Pushed    bool       `json:"pushed"`
	// Recovered says what an interrupted earlier operation had left and
	// how it was recovered.
	Recovered []string `json:"recovered,omitempty"`
	// PushError is why the push failed (the merge, if any, stands).
	PushError string `json:"pushError,omitempty"`
}

// GitMaxBackoff bounds the wait after failed syncs.
const GitMaxBackoff = 15 * time.Minute
