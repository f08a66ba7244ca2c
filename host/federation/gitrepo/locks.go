package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/memhost/memhost/internal/fsx"
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

// Exists reports whether p (a conflict sibling) is still in the work
// tree.
func (r *Repo) Exists(p string) bool {
	_, err := os.Stat(filepath.Join(r.Dir, filepath.FromSlash(path.Clean(p))))
	return err == nil
}

// Holds reports whether the file at p still holds the blob oid: a
// regular file beneath the home, no symlink followed on its path.
func (r *Repo) Holds(p, oid string) bool {
	home, err := r.OpenHome()
	if err != nil {
		return false
	}
	defer home.Close()
	data, err := home.ReadFile(path.Clean(p), fsx.NoLinks)
	return err == nil && BlobID(data) == oid
}

// IsText: no NUL byte in the first 8000 bytes (git's own test).
func IsText(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return !bytes.ContainsRune(b, 0)
}
