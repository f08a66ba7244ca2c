package fsx

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// TempPrefix starts the name of every temporary file WriteFile makes;
// readers of folders skip such (hidden) files.
const TempPrefix = ".memhost-tmp-"

// WriteFile replaces name in d with data, atomically: it writes a
// temporary file in d (made with O_EXCL and O_NOFOLLOW, so nothing already
// there is written through), sets perm, flushes it, renames it over name
// within d (the rename replaces name itself, never a symlink's target) and
// flushes d. On error the temporary file is removed and name is as it was.
func (d *Dir) WriteFile(name string, data []byte, perm fs.FileMode) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := TempPrefix + hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &fs.PathError{Op: "create", Path: d.join(tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), d.join(tmp))
	fail := func(err error) error {
		f.Close()
		unix.Unlinkat(d.fd, tmp, 0)
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm.Perm()); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		unix.Unlinkat(d.fd, tmp, 0)
		return err
	}
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		unix.Unlinkat(d.fd, tmp, 0)
		return &fs.PathError{Op: "rename", Path: d.join(name), Err: err}
	}
	if err := d.Sync(); err != nil {
		return fmt.Errorf("flushing %s after writing %s: %w", d.name, name, err)
	}
	return nil
}
