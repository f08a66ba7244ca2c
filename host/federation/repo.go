package federation

import (
	"context"
	"github.com/memhost/memhost"
	"sync"

	"github.com/memhost/memhost/host/federation/gitrepo"
)

// Repo is a memhost home as a git repository: what it shares (shared.go),
// its commits, its syncs. The git plumbing (commands, the index file,
// fast commits and fast-forwards, reading the work tree safely) is
// gitrepo's. Its methods are safe for concurrent use only in that git's
// own locks keep the repository consistent; callers serialise work that
// must not interleave with Lock.
type Repo struct {
	Dir string // the work tree (the memhost home)
	// Author is "Name <email>" for commits; "" uses "memhost <memhost@HOSTNAME>".
	Author string
	// Notebook is the notebook folder, relative to Dir (default
	// "notebook"): with sessions/, what federation shares (shared.go).
	Notebook string
	// Secret, when set, finds a secret in a file about to be committed:
	// such a file is held back (never committed, so never pushed) and
	// recorded in the state's HeldBack, as git hosts' push protection
	// refuses it. ok is false for a clean file.
	Secret func(data []byte) (found memhost.HeldBack, ok bool)
	// Private, when set, tells a file that never leaves the machine (a
	// private page or session; path home-relative): it is never
	// committed, and a remote that sends one is refused.
	Private func(path string, data []byte) bool

	mu    sync.Mutex
	clean map[string]scanned // per path, the start found clean (holdBack)
}

// scanned is a file's start that Secret found clean: its length (up to a
// line's end) and SHA-256. A transcript only grows, so the next commit
// scans only what was appended.
type scanned struct {
	n   int
	sum [32]byte
}

// g is the repository's git plumbing.
func (r *Repo) g() *gitrepo.Repo {
	return &gitrepo.Repo{Dir: r.Dir, Author: r.Author, Shared: []string{r.notebookDir(), sessionsDir, ".gitignore"}}
}

// Git runs git in the work tree and returns its output.
func (r *Repo) Git(ctx context.Context, args ...string) (string, error) {
	return r.g().Git(ctx, args...)
}

// Head is the current commit, "" when there is none yet.
func (r *Repo) Head(ctx context.Context) string { return r.g().Head(ctx) }
