package notebook

import (
	"errors"
	"fmt"
	"io"

	"github.com/memhost/memhost/internal/fsx"
)

// ReadPrefix returns the first max bytes of a page (all of it when it is
// not longer) and whether that is the whole page, reading no more than
// max+1 bytes: the dashboard shows the start of a page too large to
// render without holding it in memory. It opens the page as Read does:
// beneath the root, following only symlinks that stay inside, a regular
// file only (a FIFO or device is refused without blocking).
func (n *Notebook) ReadPrefix(rel string, max int64) (data []byte, whole bool, err error) {
	d, err := n.open()
	if err != nil {
		return nil, false, err
	}
	defer d.Close()
	f, err := d.Open(rel, fsx.LinksInside)
	if err != nil {
		return nil, false, n.fault(rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	buf := make([]byte, min(max+1, fi.Size()+1))
	k, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("%s: %w", rel, err)
	}
	if int64(k) > max {
		return buf[:max], false, nil
	}
	return buf[:k], true, nil
}
