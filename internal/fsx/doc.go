// Package fsx is the one place that locks files, writes them atomically
// and opens paths beneath a root without following symlinks out of it.
//
// # Paths beneath a root
//
// A Dir is an open directory (a descriptor). Every path given to its
// methods is resolved from that descriptor by the kernel, one component at
// a time, so there is no window between checking a path and using it: a
// folder swapped for a symlink while a write or read runs cannot send it
// elsewhere. On Linux a path is opened with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS); where openat2 is missing (old kernels, a seccomp
// filter, other systems) each component is opened with openat(O_NOFOLLOW)
// from the descriptor of the one before, which is equivalent.
//
// The directory itself is opened by the path the caller gives, following
// symlinks in it: the root may legitimately be a symlink the user made
// (a notebook kept elsewhere). A holder opens it once, at start, keeps
// that Dir and gives each operation a Dup of it, so that a root (or a
// folder above it) swapped for a symlink later never sends an operation
// elsewhere; Here tells it when the path no longer leads to the folder
// held, so that it can refuse rather than act on a folder the user no
// longer sees there.
//
// Symlinks beneath the root:
//   - writes (WriteFile, Sub, Remove, Link, Rename) never follow one: a
//     folder on the way that is a symlink is ErrSymlink, and the last name
//     is replaced, removed or linked as the name it is, never through it;
//   - reads choose: NoLinks refuses every symlink, LinksInside follows a
//     symlink only while it leads to a place beneath the root (an absolute
//     target must name the root's path), resolving it here, component by
//     component, so that the kernel never follows one; ErrOutside when it
//     leads out, ELOOP after 40 links (a loop).
//
// # Only regular files
//
// Files are opened with O_NONBLOCK and O_NOFOLLOW and checked with fstat
// before a byte is read: a FIFO, a socket or a device is refused with a
// *NotRegularError (a FIFO would block the reader for ever, and a writer
// holding a lock with it) and a folder with EISDIR.
//
// # Locks
//
// Lock takes an exclusive flock on a lock file and waits for it honouring
// its context, so no lock wait is unbounded; TryLock does not wait
// (ErrLocked when held); LockFile and TryLockFile lock a file the caller
// holds open (and writes); Held tells whether another holds a lock.
//
// # Replacing files
//
// WriteFile (Dir) and WriteFileAtomic (a path) write a temporary file in
// the target's folder, flush it, rename it over the target and flush the
// folder: a crash leaves the old file or the new, whole. Rename moves a
// file its writer flushed into place and flushes both folders.
//
// No other package calls flock or rename itself: the test
// TestOnlyFsxLocksAndRenames fails on such a call.
package fsx
