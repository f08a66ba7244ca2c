package notebook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/memhost/memhost/fault"
)

// ErrExists means a page is already where a rename would put one.
var ErrExists = errors.New("a page already exists there")

// Rename moves the page at from to to (both cleaned paths), creating to's
// folders, under the update lock. It never replaces a page: the new name
// is made as a hard link, which fails when the name is taken, and only
// then is the old name removed, so that at every moment the page is under
// one name or both, never none. Both folders are opened beneath the root
// without passing through a symlink; a symlink page moves as itself.
func (n *Notebook) Rename(ctx context.Context, from, to string) error {
	return n.RenameGuarded(ctx, from, to, nil)
}

// RenameGuarded is Rename with g deciding under the lock (nil: rename);
// g is told whether the page at from is there.
func (n *Notebook) RenameGuarded(ctx context.Context, from, to string, g Guard) error {
	unlock, err := n.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	src, name, err := n.parent(from, false)
	if err == nil {
		defer src.Close()
		err = n.fault(from, pageMode(src, name))
	}
	if act, err := g.decide(err); !act {
		return err
	}
	dst, newname, err := n.parent(to, true)
	if err != nil {
		return err
	}
	defer dst.Close()
	if err := src.Link(name, dst, newname); err != nil {
		// The new name already being this very file is a rename killed
		// between its link and its unlink: finish it.
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("rename %s to %s: %w", ShowPath(from), ShowPath(to), err)
		}
		if same, serr := src.SameFile(name, dst, newname); serr != nil || !same {
			return &PathError{to, fault.Errorf(fault.Conflict, "to", "%w", ErrExists)}
		}
	}
	if err := src.Remove(name); err != nil {
		dst.Remove(newname)
		return fmt.Errorf("rename %s to %s: %w", ShowPath(from), ShowPath(to), err)
	}
	dst.Sync() // make the rename durable; best effort
	src.Sync()
	return nil
}
