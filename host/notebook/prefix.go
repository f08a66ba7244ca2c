package notebook

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ReadPrefix returns the first max bytes of a page (all of it when it is
// not longer) and whether that is the whole page, reading no more than
// max+1 bytes: the dashboard shows the start of a page too large to
// render without holding it in memory. Only a regular file is read; a
// FIFO or device is refused without blocking.
func (n *Notebook) ReadPrefix(rel string, max int64) (data []byte, whole bool, err error) {
	f, err := os.OpenFile(n.Abs(rel), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, &PathError{rel, ErrNotFound}
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	switch {
	case fi.IsDir():
		return nil, false, &PathError{rel, fmt.Errorf("%w: it is a folder", ErrBadPath)}
	case !fi.Mode().IsRegular():
		return nil, false, &PathError{rel, fmt.Errorf("%w: it is not a regular file", ErrBadPath)}
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
