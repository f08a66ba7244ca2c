package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"
)

// WaitLock waits for a git lock file to go away (a git left running by a
// killed memhost finishes and removes it), removing it once it is older
// than StaleLock (a killed git's). found says there was one, removed that
// it was stale and is gone.
func (r *Repo) WaitLock(ctx context.Context, p string) (found, removed bool, err error) {
	for {
		fi, err := os.Stat(p)
		if err != nil {
			return found, false, nil
		}
		found = true
		if time.Since(fi.ModTime()) > StaleLock {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return found, false, err
			}
			return found, true, nil
		}
		select {
		case <-ctx.Done():
			return found, false, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// StaleLock is how old an index.lock must be to be taken for a killed
// git's: git holds it for milliseconds.
const StaleLock = 10 * time.Second

// WaitIndexLock waits for git's index.lock to go away (WaitLock),
// reporting whether a stale one was removed. The branch's ref lock is
// taken after the index lock by git and by the fast paths alike: a stale
// one is removed too.
func (r *Repo) WaitIndexLock(ctx context.Context) (removed bool, err error) {
	if branch, err := HeadBranch(r.GitDir()); err == nil {
		ref := filepath.Join(r.GitDir(), "refs", "heads", filepath.FromSlash(branch)) + ".lock"
		if fi, err := os.Stat(ref); err == nil && time.Since(fi.ModTime()) > StaleLock {
			removed = os.Remove(ref) == nil
		}
	}
	_, gone, err := r.WaitLock(ctx, filepath.Join(r.GitDir(), "index.lock"))
	return removed || gone, err
}
