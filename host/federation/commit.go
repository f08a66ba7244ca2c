package federation

import (
	"bytes"
	"context"
	"crypto/sha256"
	"path/filepath"
	"strings"
	"time"

	"github.com/memhost/memhost"
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
	if paths, err = r.holdBack(home, paths); err != nil {
		return false, err
	}
	if len(paths) == 0 {
		return false, nil
	}
	// The common case, pages git already tracks: no git process.
	if id, err := r.g().FastCommit(home, msg, paths, time.Now()); err == nil {
		return id != "", nil
	}
	return r.g().Commit(ctx, home, msg, paths, nil, false)
}

// holdBack leaves out of paths the files that hold a secret (r.Secret),
// recording them in the state's HeldBack, and takes off that list the
// paths that are clean now. Without r.Secret, paths are kept.
func (r *Repo) holdBack(home *fsx.Dir, paths []string) ([]string, error) {
	if r.Secret == nil && r.Private == nil || len(paths) == 0 {
		return paths, nil
	}
	var keep []string
	held := map[string]memhost.HeldBack{}
	for _, p := range paths {
		data, err := home.ReadFile(p, fsx.NoLinks)
		if err == nil && r.Private != nil && r.Private(p, data) {
			continue // never committed, and not a failure
		}
		if err == nil {
			from := r.cleanStart(p, data)
			if r.Secret == nil {
				keep = append(keep, p)
				continue
			}
			if f, ok := r.Secret(data[from:]); ok {
				f.Path = p
				f.Line += bytes.Count(data[:from], []byte("\n"))
				held[p] = f
				r.setClean(p, nil)
				continue
			}
			r.setClean(p, data)
		}
		keep = append(keep, p) // clean, gone or unreadable: as before
	}
	considered := map[string]bool{}
	for _, p := range paths {
		considered[p] = true
	}
	err := r.editState(func(s *memhost.GitState) {
		var next []memhost.HeldBack
		for _, h := range s.HeldBack {
			if !considered[h.Path] {
				next = append(next, h)
			}
		}
		for _, p := range paths {
			if h, ok := held[p]; ok {
				next = append(next, h)
			}
		}
		s.HeldBack = next
	})
	return keep, err
}

// cleanStart is how many bytes at the start of data a commit found clean
// before (0 when none, or when they changed since).
func (r *Repo) cleanStart(p string, data []byte) int {
	r.mu.Lock()
	c, ok := r.clean[p]
	r.mu.Unlock()
	if !ok || c.n > len(data) || sha256.Sum256(data[:c.n]) != c.sum {
		return 0
	}
	return c.n
}

// setClean records data (up to its last line's end) as clean for p; nil
// forgets p.
func (r *Repo) setClean(p string, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if data == nil {
		delete(r.clean, p)
		return
	}
	n := bytes.LastIndexByte(data, '\n') + 1
	if r.clean == nil {
		r.clean = map[string]scanned{}
	}
	r.clean[p] = scanned{n: n, sum: sha256.Sum256(data[:n])}
}
