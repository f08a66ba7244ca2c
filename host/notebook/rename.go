package notebook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memhost/memhost/host/fault"
)

// ErrExists means a page is already where a rename would put one.
var ErrExists = errors.New("a page already exists there")

// Rename moves the page at from to to (both cleaned paths), creating to's
// folders, under the update lock. It never replaces a page: the new name
// is made as a hard link, which fails when the name is taken, and only
// then is the old name removed, so that at every moment the page is under
// one name or both, never none.
func (n *Notebook) Rename(ctx context.Context, from, to string) error {
	unlock, err := n.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	fi, err := os.Lstat(n.Abs(from))
	if errors.Is(err, fs.ErrNotExist) {
		return &PathError{from, ErrNotFound}
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return &PathError{from, fmt.Errorf("%w: it is a folder", ErrBadPath)}
	}
	dst := n.Abs(to)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("rename %s: %w", from, err)
	}
	if err := os.Link(n.Abs(from), dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &PathError{to, fault.Errorf(fault.Conflict, "to", "%w", ErrExists)}
		}
		return fmt.Errorf("rename %s to %s: %w", from, to, err)
	}
	if err := os.Remove(n.Abs(from)); err != nil {
		os.Remove(dst)
		return fmt.Errorf("rename %s to %s: %w", from, to, err)
	}
	for _, d := range []string{filepath.Dir(dst), filepath.Dir(n.Abs(from))} {
		if f, err := os.Open(d); err == nil {
			f.Sync() // make the rename durable; best effort
			f.Close()
		}
	}
	return nil
}
