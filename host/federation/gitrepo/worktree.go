package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/memhost/memhost/host/federation/worktree"
	"github.com/memhost/memhost/internal/fsx"
)

// Files of the work tree are read and looked at beneath the home's
// folder, held open (fsx.Dir), with no symlink followed anywhere on the
// path (fsx.NoLinks: not a page that is one, not a folder on the way that
// is one) and without waiting on a FIFO: what a commit records is always
// a regular file inside the home, whatever is swapped in meanwhile.

// OpenHome opens the work tree's folder, the root every work-tree path
// is resolved beneath (the home's own path may be a symlink the user
// made: it is followed once, here).
func (r *Repo) OpenHome() (*fsx.Dir, error) {
	return fsx.OpenDir(r.Dir)
}

// CheckWorkTree refuses a move of the work tree that would write or
// remove a file where the work tree holds something other than a regular
// file (or nothing).
func (r *Repo) CheckWorkTree(changes []TreeChange) error {
	home, err := r.OpenHome()
	if err != nil {
		return err
	}
	defer home.Close()
	for _, c := range changes {
		if c.NewMode == ModeTree || c.OldMode == ModeTree && c.NewMode == 0 {
			continue
		}
		kind, what, err := worktree.KindAt(home, c.Path)
		if err != nil {
			return fmt.Errorf("%s: %w", worktree.ShowPath(c.Path), err)
		}
		if kind == worktree.KindOther {
			return worktree.NotRegularError(c.Path, what)
		}
	}
	return nil
}

// Excluded lists the paths among untracked ones that this machine keeps
// to itself: .git/info/exclude, which no remote can change. The shared
// .gitignore is not consulted: a remote could otherwise stop local pages
// from being shared by adding a line to it.
func (r *Repo) Excluded(ctx context.Context, paths []string) (map[string]bool, error) {
	ex := filepath.Join(r.GitDir(), "info", "exclude")
	data, err := os.ReadFile(ex)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !hasPattern(data) || len(paths) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	args := []string{"--literal-pathspecs", "ls-files", "-z", "--others", "--ignored", "--exclude-from=" + ex, "--"}
	if len(paths) <= 64 {
		args = append(args, paths...)
	} else {
		// Many (git init adopting a home): the shared folders, whole,
		// rather than a command line that may be too long.
		args = append(args, r.Shared...)
	}
	out, err := r.Git(ctx, args...)
	if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			m[p] = true
		}
	}
	return m, nil
}

// hasPattern: an exclude file with a line that is not blank or a comment.
func hasPattern(data []byte) bool {
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}
