package federation

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/memhost/memhost/internal/fsx"
)

// lockFile takes an exclusive flock on .git/memhost/NAME (other processes
// of the home too) until the returned function is called.
func (r *Repo) lockFile(ctx context.Context, name string) (func(), error) {
	return fsx.Lock(ctx, filepath.Join(r.g().GitDir(), "memhost", name))
}

// Commit commits paths (home-relative; none means every change in the
// home) with msg, the shared ones only (shareable): it reports whether a
// commit was made; nothing to commit is not an error.
func (r *Repo) Commit(ctx context.Context, msg string, paths ...string) (bool, error) {
	unlock, err := r.lockFile(ctx, "commit.lock")
	if err != nil {
		return false, err
	}
	defer unlock()
	// Every memhost process commits under commit.lock, so a git index
	// lock now is a git left running by a killed memhost, or a dead one.
	if _, err := r.g().WaitIndexLock(ctx); err != nil {
		return false, err
	}
	return r.commitLocked(ctx, msg, paths)
}

// CommitAll commits every change to a shared path in the home: one `git
// status` finds them, and they are committed like Commit's (the fast
// path when it applies). What is staged by hand outside them is not.
func (r *Repo) CommitAll(ctx context.Context, msg string) (bool, error) {
	unlock, err := r.lockFile(ctx, "commit.lock")
	if err != nil {
		return false, err
	}
	defer unlock()
	if _, err := r.g().WaitIndexLock(ctx); err != nil {
		return false, err
	}
	paths, err := r.statusPaths(ctx)
	if err != nil || len(paths) == 0 {
		return false, err
	}
	return r.commitLocked(ctx, msg, paths)
}

// statusPaths lists the paths a commit of every change looks at: the
// tracked files git status reports changed or removed (staged or not),
// and every untracked file in the shared folders, whatever the shared
// .gitignore says (a remote can change it; the commit leaves out what
// .git/info/exclude keeps on this machine, see gitrepo's Excluded).
func (r *Repo) statusPaths(ctx context.Context) ([]string, error) {
	out, err := r.Git(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--no-renames")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range strings.Split(out, "\x00") {
		if len(rec) >= 4 {
			paths = append(paths, rec[3:])
		}
	}
	out, err = r.Git(ctx, "--literal-pathspecs", "ls-files", "-z", "--others", "--", r.notebookDir(), sessionsDir, ".gitignore")
	if err != nil {
		return nil, err
	}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

func (r *Repo) commitLocked(ctx context.Context, msg string, paths []string) (bool, error) {
	if len(paths) == 0 {
		var err error
		if paths, err = r.statusPaths(ctx); err != nil {
			return false, err
		}
	}
	home, err := r.g().OpenHome()
	if err != nil {
		return false, err
	}
	defer home.Close()
	paths = r.shareable(home, paths)
	if len(paths) == 0 {
		return false, nil
	}
	// The common case, pages git already tracks: no git process.
	if id, err := r.g().FastCommit(home, msg, paths, time.Now()); err == nil {
		return id != "", nil
	}
	return r.g().Commit(ctx, home, msg, paths, nil, false)
}
