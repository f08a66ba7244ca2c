package fsx

import "golang.org/x/sys/unix"

// SameFile reports whether name in d and other in to are the same file
// (device and inode), neither followed if it is a symlink.
func (d *Dir) SameFile(name string, to *Dir, other string) (bool, error) {
	var a, b unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &a, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, err
	}
	if err := unix.Fstatat(to.fd, other, &b, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, err
	}
	return a.Dev == b.Dev && a.Ino == b.Ino, nil
}
