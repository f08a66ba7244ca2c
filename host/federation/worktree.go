package federation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/internal/fsx"
)

// Files of the work tree are read and looked at beneath the home's
// folder, held open (fsx.Dir), with no symlink followed anywhere on the
// path (fsx.NoLinks: not a page that is one, not a folder on the way that
// is one) and without waiting on a FIFO: what a commit records is always
// a regular file inside the home, whatever is swapped in meanwhile.

// openHome opens the work tree's folder, the root every work-tree path
// is resolved beneath (the home's own path may be a symlink the user
// made: it is followed once, here).
func (r *Repo) openHome() (*fsx.Dir, error) {
	return fsx.OpenDir(r.Dir)
}

// fileKind is what a work-tree path holds, as a commit sees it.
type fileKind int

const (
	kindGone    fileKind = iota // nothing (or a file where a folder on the way should be)
	kindRegular                 // a regular file
	kindOther                   // a folder, a symlink (or one on the way), a FIFO, a socket, a device
)

// kindAt is what the work tree holds at p, not following any symlink;
// what says what an "other" is ("a FIFO", "a symlink is on its path").
func kindAt(home *fsx.Dir, p string) (kind fileKind, what string, err error) {
	dir, name := path.Split(p)
	parent := home
	if dir != "" {
		parent, err = home.Sub(strings.TrimSuffix(dir, "/"), false)
		switch {
		case errors.Is(err, fsx.ErrSymlink):
			return kindOther, "a symlink is on its path", nil
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			return kindGone, "", nil
		case err != nil:
			return kindOther, "", err
		}
		defer parent.Close()
	}
	m, err := parent.Mode(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return kindGone, "", nil
	case err != nil:
		return kindOther, "", err
	case m.IsRegular():
		return kindRegular, "", nil
	case m.IsDir():
		return kindOther, "a folder", nil
	}
	return kindOther, fsx.KindName(m), nil
}

// readWorkFile reads the regular file at p beneath home (no symlink
// followed, no FIFO waited on) with its stat data, checked unchanged
// while it was read (the descriptor's, so it is the file read).
func readWorkFile(home *fsx.Dir, p string) ([]byte, *syscall.Stat_t, error) {
	f, err := home.Open(p, fsx.NoLinks)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var before, after syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &before); err != nil {
		return nil, nil, err
	}
	var b bytes.Buffer
	b.Grow(int(min(before.Size, 1<<30)) + 1)
	if _, err := b.ReadFrom(f); err != nil {
		return nil, nil, err
	}
	data := b.Bytes()
	if err := syscall.Fstat(int(f.Fd()), &after); err != nil {
		return nil, nil, err
	}
	if after.Mtim != before.Mtim || after.Size != before.Size || int64(len(data)) != after.Size {
		return nil, nil, fmt.Errorf("%s: %w", p, errChanged)
	}
	return data, &after, nil
}

// errChanged means a file changed while it was read.
var errChanged = errors.New("changed while read")

// readStable reads p (readWorkFile), again while it changes as it is
// read, at most a few times.
func readStable(home *fsx.Dir, p string) ([]byte, error) {
	for try := 1; ; try++ {
		data, _, err := readWorkFile(home, p)
		if !errors.Is(err, errChanged) || try == 5 {
			return data, err
		}
	}
}

// notRegularError is a path a pull would write where the work tree holds
// no regular file memhost may replace (a FIFO, a symlink, a folder): the
// sync stops there, one line naming it, instead of retrying.
func notRegularError(p, what string) error {
	return &fault.Error{Kind: fault.Conflict, Field: "path", Err: fsx.ErrNotRegular,
		Message: fmt.Sprintf("%s is not a regular file (%s): the remote changed it, and a sync only replaces regular files; nothing was merged, local changes are kept and committed (remove it, or make it a page, to sync)", showPath(p), what)}
}

// checkWorkTree refuses a move of the work tree that would write or
// remove a file where the work tree holds something other than a regular
// file (or nothing).
func (r *Repo) checkWorkTree(changes []treeChange) error {
	home, err := r.openHome()
	if err != nil {
		return err
	}
	defer home.Close()
	for _, c := range changes {
		if c.newMode == modeTree || c.oldMode == modeTree && c.newMode == 0 {
			continue
		}
		kind, what, err := kindAt(home, c.path)
		if err != nil {
			return fmt.Errorf("%s: %w", showPath(c.path), err)
		}
		if kind == kindOther {
			return notRegularError(c.path, what)
		}
	}
	return nil
}

// excluded lists the paths among untracked ones that this machine keeps
// to itself: .git/info/exclude, which no remote can change. The shared
// .gitignore is not consulted: a remote could otherwise stop local pages
// from being shared by adding a line to it.
func (r *Repo) excluded(ctx context.Context, paths []string) (map[string]bool, error) {
	ex := filepath.Join(r.gitDir(), "info", "exclude")
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
		args = append(args, r.notebookDir(), sessionsDir, ".gitignore")
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
