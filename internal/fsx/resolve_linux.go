package fsx

import (
	"errors"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// errNoOpenat2 means openat2 cannot be used here: the caller walks.
var errNoOpenat2 = errors.New("openat2 is not available")

// noOpenat2 is set once openat2 has failed as missing or filtered.
var noOpenat2 atomic.Bool

// openBeneath opens rel beneath the folder dir with openat2, refusing
// every symlink and every way out (EXDEV): ELOOP when a symlink is on the
// way.
func openBeneath(dir int, rel string, flags int, mode uint32) (int, error) {
	if noOpenat2.Load() {
		return -1, errNoOpenat2
	}
	if rel == "" {
		rel = "."
	}
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	if flags&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
		how.Mode = uint64(mode)
	}
	for try := 1; ; try++ {
		fd, err := unix.Openat2(dir, rel, &how)
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR, unix.EAGAIN: // EAGAIN: a rename raced the lookup
			if try < 16 {
				continue
			}
			return -1, errNoOpenat2 // renames keep racing it: walk
		case unix.ENOSYS, unix.EPERM, unix.E2BIG:
			// Missing (Linux before 5.6) or refused by a seccomp filter
			// (some containers). EPERM may also be the file's own answer,
			// so only ENOSYS is remembered; the walk gives the real error.
			if err == unix.ENOSYS {
				noOpenat2.Store(true)
			}
			return -1, errNoOpenat2
		}
		return -1, err
	}
}
