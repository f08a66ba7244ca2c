// Package worktree reads a memhost home's files as a commit or a sync
// must see them: beneath the home's folder held open (fsx.Dir), with no
// symlink followed anywhere on the path (fsx.NoLinks: not a page that is
// one, not a folder on the way that is one) and without waiting on a
// FIFO, so that what a commit records is always a regular file inside the
// home, whatever is swapped in meanwhile.
package worktree

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/internal/fsx"
)

// FileKind is what a work-tree path holds, as a commit sees it.
type FileKind int

const (
	KindGone    FileKind = iota // nothing (or a file where a folder on the way should be)
	KindRegular                 // a regular file
	KindOther                   // a folder, a symlink (or one on the way), a FIFO, a socket, a device
)

// KindAt is what the work tree holds at p, not following any symlink;
// what says what an "other" is ("a FIFO", "a symlink is on its path").
func KindAt(home *fsx.Dir, p string) (kind FileKind, what string, err error) {
	dir, name := path.Split(p)
	parent := home
	if dir != "" {
		parent, err = home.Sub(strings.TrimSuffix(dir, "/"), false)
		switch {
		case errors.Is(err, fsx.ErrSymlink):
			return KindOther, "a symlink is on its path", nil
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			return KindGone, "", nil
		case err != nil:
			return KindOther, "", err
		}
		defer parent.Close()
	}
	m, err := parent.Mode(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return KindGone, "", nil
	case err != nil:
		return KindOther, "", err
	case m.IsRegular():
		return KindRegular, "", nil
	case m.IsDir():
		return KindOther, "a folder", nil
	}
	return KindOther, fsx.KindName(m), nil
}

// ReadWorkFile reads the regular file at p beneath home (no symlink
// followed, no FIFO waited on) with its stat data, checked unchanged
// while it was read (the descriptor's, so it is the file read).
func ReadWorkFile(home *fsx.Dir, p string) ([]byte, *syscall.Stat_t, error) {
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

// ReadStable reads p (ReadWorkFile), again while it changes as it is
// read, at most a few times.
func ReadStable(home *fsx.Dir, p string) ([]byte, error) {
	for try := 1; ; try++ {
		data, _, err := ReadWorkFile(home, p)
		if !errors.Is(err, errChanged) || try == 5 {
			return data, err
		}
	}
}

// NotRegularError is a path a pull would write where the work tree holds
// no regular file memhost may replace (a FIFO, a symlink, a folder): the
// sync stops there, one line naming it, instead of retrying.
func NotRegularError(p, what string) error {
	return &fault.Error{Kind: fault.Conflict, Field: "path", Err: fsx.ErrNotRegular,
		Message: fmt.Sprintf("%s is not a regular file (%s): the remote changed it, and a sync only replaces regular files; nothing was merged, local changes are kept and committed (remove it, or make it a page, to sync)", ShowPath(p), what)}
}

// ShowPath is p as an error message shows it: quoted when it holds
// anything a terminal would not print as is.
func ShowPath(p string) string {
	if !utf8.ValidString(p) || strings.IndexFunc(p, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		return strconv.Quote(p)
	}
	return p
}
