package fsx

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

var (
	// ErrSymlink means a path holds a symlink where none may be followed.
	ErrSymlink = errors.New("a symlink is on the way, and memhost does not write or read through one here")
	// ErrOutside means a path, or a symlink on it, leads out of the root.
	ErrOutside = errors.New("it leads outside the folder")
	// ErrNotRegular is what every *NotRegularError is.
	ErrNotRegular = errors.New("not a regular file")
	// ErrMoved means the path a Dir was opened by leads to another folder
	// now, or to none (see Here).
	ErrMoved = errors.New("the folder there is not the one opened (it was moved or replaced since)")
)

// NotRegularError is a file that is neither a regular file nor a folder:
// a FIFO, a socket or a device.
type NotRegularError struct {
	Mode fs.FileMode // its type bits
}

func (e *NotRegularError) Error() string {
	return "not a regular file (" + KindName(e.Mode) + ")"
}

// Is makes errors.Is(err, ErrNotRegular) true.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// KindName says what a file of mode m that is not a regular file is ("a
// FIFO", "a symlink"), for messages.
func KindName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "a special file"
}

// Links says whether a read follows symlinks beneath its Dir.
type Links int

const (
	// NoLinks refuses every symlink beneath the Dir (ErrSymlink).
	NoLinks Links = iota
	// LinksInside follows a symlink while it leads beneath the Dir.
	LinksInside
)

// maxLinks bounds the symlinks one resolution follows, as the kernel's
// own 40.
const maxLinks = 40

// Dir is an open directory beneath which paths are resolved. A Dir is
// safe for concurrent use; Close it when done.
type Dir struct {
	fd   int
	name string // the path it was opened by, for messages and absolute links
}

// OpenDir opens the directory at path (symlinks in path are followed:
// pass a path resolved once, the way it should stay).
func OpenDir(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{fd: fd, name: filepath.Clean(path)}, nil
}

// Name is the path the directory was opened by.
func (d *Dir) Name() string { return d.name }

// Close closes the directory.
func (d *Dir) Close() error { return unix.Close(d.fd) }

// Dup returns a Dir of its own for the same folder (a duplicated
// descriptor, closed by the caller): a holder keeps one Dir open and
// gives each operation a Dup, which stays valid whatever the holder
// closes meanwhile.
func (d *Dir) Dup() (*Dir, error) {
	fd, err := unix.FcntlInt(uintptr(d.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "dup", Path: d.name, Err: err}
	}
	return &Dir{fd: fd, name: d.name}, nil
}

// Here reports whether the path d was opened by (Name, its symlinks
// followed as OpenDir followed them) still leads to d's folder: nil when it
// does, ErrMoved when it leads to another folder or to nothing. The Dir
// itself keeps naming the folder it opened wherever that went; Here lets a
// holder refuse to act on a folder the user no longer sees at the path
// (moved aside, or replaced by a symlink to somewhere else).
func (d *Dir) Here() error {
	var held, now unix.Stat_t
	if err := unix.Fstat(d.fd, &held); err != nil {
		return &fs.PathError{Op: "stat", Path: d.name, Err: err}
	}
	switch err := unix.Stat(d.name, &now); {
	case err == unix.ENOENT, err == unix.ENOTDIR:
		return ErrMoved
	case err != nil:
		return &fs.PathError{Op: "stat", Path: d.name, Err: err}
	}
	if held.Dev != now.Dev || held.Ino != now.Ino {
		return ErrMoved
	}
	return nil
}

// Sync flushes the directory (names made, renamed or removed in it).
func (d *Dir) Sync() error { return unix.Fsync(d.fd) }

func (d *Dir) join(rel string) string { return filepath.Join(d.name, filepath.FromSlash(rel)) }

// Sub opens the folder rel beneath d, never through a symlink; with
// create, missing folders are made (0755).
func (d *Dir) Sub(rel string, create bool) (*Dir, error) {
	fd, err := d.subFD(rel, create)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.join(rel), Err: err}
	}
	return &Dir{fd: fd, name: d.join(rel)}, nil
}

func (d *Dir) subFD(rel string, create bool) (int, error) {
	const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	fd, err := openBeneath(d.fd, rel, dirFlags, 0)
	switch {
	case err == nil:
		return fd, nil
	case err == unix.ELOOP:
		return -1, ErrSymlink
	case err == unix.EXDEV:
		return -1, ErrOutside
	case errors.Is(err, errNoOpenat2), create && err == unix.ENOENT:
	default:
		return -1, err
	}
	cur, owned := d.fd, false
	defer func() {
		if owned {
			unix.Close(cur)
		}
	}()
	parts, err := split(rel)
	if err != nil {
		return -1, err
	}
	for _, name := range parts {
		next, err := unix.Openat(cur, name, dirFlags|unix.O_NOFOLLOW, 0)
		if err == unix.ENOENT && create {
			if merr := unix.Mkdirat(cur, name, 0o700); merr != nil && merr != unix.EEXIST {
				return -1, merr
			}
			next, err = unix.Openat(cur, name, dirFlags|unix.O_NOFOLLOW, 0)
		}
		if err != nil {
			return -1, symlinkOr(cur, name, err)
		}
		if owned {
			unix.Close(cur)
		}
		cur, owned = next, true
	}
	if !owned {
		return unix.Openat(d.fd, ".", dirFlags, 0)
	}
	owned = false
	return cur, nil
}

// symlinkOr returns ErrSymlink when name in dir is a symlink (what made an
// O_NOFOLLOW open fail), err otherwise.
func symlinkOr(dir int, name string, err error) error {
	if err != unix.ELOOP && err != unix.ENOTDIR && err != unix.EMLINK {
		return err
	}
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return ErrSymlink
	}
	return err
}

// split checks a slash-separated relative path and returns its names.
// ".." is refused: nothing here needs it, and it could only lead out.
func split(rel string) ([]string, error) {
	if strings.HasPrefix(rel, "/") {
		return nil, ErrOutside
	}
	var out []string
	for _, p := range strings.Split(rel, "/") {
		switch p {
		case "", ".":
			continue
		case "..":
			return nil, ErrOutside
		}
		out = append(out, p)
	}
	return out, nil
}

// Open opens the regular file rel beneath d for reading. A FIFO, socket or
// device is a *NotRegularError, a folder EISDIR; neither blocks.
func (d *Dir) Open(rel string, links Links) (*os.File, error) {
	fd, err := d.openFD(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0, links)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.join(rel), Err: err}
	}
	return regular(fd, d.join(rel))
}

// ReadFile reads the regular file rel beneath d (see Open).
func (d *Dir) ReadFile(rel string, links Links) ([]byte, error) {
	f, err := d.Open(rel, links)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// Mode is the type and permission bits of name in d, not following a
// symlink.
func (d *Dir) Mode(name string) (fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, &fs.PathError{Op: "lstat", Path: d.join(name), Err: err}
	}
	return fileMode(st.Mode), nil
}

// Remove removes the name (a file or symlink, not a folder) from d.
func (d *Dir) Remove(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}

// Rename renames name in d to newname in to: the names themselves (a
// symlink is moved, or replaced, as itself; nothing is followed).
func (d *Dir) Rename(name string, to *Dir, newname string) error {
	if err := unix.Renameat(d.fd, name, to.fd, newname); err != nil {
		return &fs.PathError{Op: "rename", Path: to.join(newname), Err: err}
	}
	return nil
}

// Link makes newname in to a hard link of name in d (a symlink is linked
// as itself); EEXIST when newname is taken.
func (d *Dir) Link(name string, to *Dir, newname string) error {
	if err := unix.Linkat(d.fd, name, to.fd, newname, 0); err != nil {
		return &fs.PathError{Op: "link", Path: to.join(newname), Err: err}
	}
	return nil
}

// Names lists the names in d.
func (d *Dir) Names() ([]string, error) {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.name, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.name)
	defer f.Close()
	return f.Readdirnames(-1)
}

// openFD opens rel beneath d with flags (O_NOFOLLOW is added for the last
// name, so a symlink is never followed by the kernel).
func (d *Dir) openFD(rel string, flags int, mode uint32, links Links) (int, error) {
	fd, err := openBeneath(d.fd, rel, flags, mode)
	switch {
	case err == nil:
		return fd, nil
	case err == unix.EXDEV:
		return -1, ErrOutside
	case err == unix.ELOOP && links == NoLinks:
		return -1, ErrSymlink
	case err == unix.ELOOP, errors.Is(err, errNoOpenat2):
		fd, _, err := d.walk(rel, flags, mode, links, false)
		return fd, err
	}
	return -1, err
}

// walk resolves rel beneath d one name at a time, each opened with
// O_NOFOLLOW from the folder before; symlinks are resolved here (links
// permitting), ".." in a link's target by going back up the folders
// opened, never above d. linked reports an ENOENT met in a link's target
// (a dangling link). With probe, the last name is only looked at, not
// opened (fd is -1): opening a device may do things.
func (d *Dir) walk(rel string, flags int, mode uint32, links Links, probe bool) (fd int, linked bool, err error) {
	const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC | unix.O_NOFOLLOW
	var stack []int // folders opened, d's children first
	cur := func() int {
		if len(stack) == 0 {
			return d.fd
		}
		return stack[len(stack)-1]
	}
	defer func() {
		for _, fd := range stack {
			unix.Close(fd)
		}
	}()
	parts := strings.Split(rel, "/")
	if strings.HasPrefix(rel, "/") {
		return -1, false, ErrOutside
	}
	fromLink, followed := 0, 0 // names ahead that came from a link's target; links followed
	for len(parts) > 0 {
		name := parts[0]
		parts = parts[1:]
		inLink := fromLink > 0
		if fromLink > 0 {
			fromLink--
		}
		switch name {
		case "", ".":
			continue
		case "..":
			if len(stack) == 0 {
				return -1, false, ErrOutside
			}
			unix.Close(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			continue
		}
		last := true
		for _, p := range parts {
			if p != "" && p != "." {
				last = false
				break
			}
		}
		var next int
		if last && probe {
			var st unix.Stat_t
			err = unix.Fstatat(cur(), name, &st, unix.AT_SYMLINK_NOFOLLOW)
			if err == nil && st.Mode&unix.S_IFMT != unix.S_IFLNK {
				return -1, false, nil
			}
			if err == nil {
				err = unix.ELOOP // a symlink, followed below
			}
		} else if last {
			next, err = unix.Openat(cur(), name, flags|unix.O_NOFOLLOW, mode)
		} else {
			next, err = unix.Openat(cur(), name, dirFlags, 0)
		}
		if err == nil {
			if last {
				return next, false, nil
			}
			stack = append(stack, next)
			continue
		}
		if err == unix.ENOENT {
			return -1, inLink, err
		}
		if err = symlinkOr(cur(), name, err); err != ErrSymlink {
			return -1, false, err
		}
		if links == NoLinks {
			return -1, false, ErrSymlink
		}
		if followed++; followed > maxLinks {
			return -1, false, unix.ELOOP
		}
		target, err := readlinkat(cur(), name)
		if err != nil {
			return -1, false, err
		}
		if strings.HasPrefix(target, "/") {
			r, ok := strings.CutPrefix(filepath.Clean(target), d.name)
			if !ok || (r != "" && !strings.HasPrefix(r, "/")) {
				return -1, false, ErrOutside
			}
			for _, fd := range stack {
				unix.Close(fd)
			}
			stack = nil
			target = strings.TrimPrefix(r, "/")
		}
		tparts := strings.Split(target, "/")
		parts = append(tparts, parts...)
		fromLink += len(tparts)
	}
	// rel named d itself, or a folder reached through links.
	if probe {
		return -1, false, nil
	}
	next, err := unix.Openat(cur(), ".", flags&^unix.O_CREAT, 0)
	return next, false, err
}

func readlinkat(dir int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// Inside reports whether rel, resolved beneath d following symlinks while
// they lead beneath it, stays inside: ErrOutside when a symlink on its
// existing part leads out or dangles, ELOOP for a loop, nil otherwise
// (missing names are inside). It is a check for messages and listings;
// the opening methods hold the rule themselves.
func (d *Dir) Inside(rel string) error {
	_, linked, err := d.walk(rel, 0, 0, LinksInside, true)
	switch {
	case err == nil:
		return nil
	case err == ErrOutside, err == unix.ELOOP:
		return err
	case linked:
		return ErrOutside // a dangling link: its target may appear anywhere
	}
	return nil
}

// regular wraps fd as a file when it is a regular file, and closes it
// otherwise. O_NONBLOCK, which let the open return at once, is cleared.
func regular(fd int, name string) (*os.File, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: name, Err: unix.EISDIR}
	default:
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: name, Err: &NotRegularError{Mode: fileMode(st.Mode).Type()}}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// OpenFile opens the file at path (symlinks followed, as the caller's
// path says) when it is a regular file, without blocking on a FIFO: flag
// is os.O_RDONLY, os.O_RDWR or os.O_WRONLY with os.O_APPEND, os.O_CREATE,
// os.O_EXCL or O_NOFOLLOW. A file of another type is a *NotRegularError,
// and is not created, truncated or changed.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if flag&os.O_TRUNC != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("fsx.OpenFile does not truncate")}
	}
	fd, err := unix.Open(path, flag|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err == unix.ENXIO { // a FIFO opened to write with no reader, or a device
		var st unix.Stat_t
		if unix.Stat(path, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
			err = &NotRegularError{Mode: fileMode(st.Mode).Type()}
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return regular(fd, path)
}

// ReadFile reads the regular file at path (see OpenFile).
func ReadFile(path string) ([]byte, error) {
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

func readAll(f *os.File) ([]byte, error) {
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() < 1<<30 {
		size = int(fi.Size()) + 1
	}
	buf := make([]byte, 0, size)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
