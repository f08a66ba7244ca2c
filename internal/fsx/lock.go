package fsx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// lockPoll is how often a wait with a context tries again while another
// holds the lock.
const lockPoll = 5 * time.Millisecond

// ErrLocked means another process, or another open file of this one, holds
// the lock a TryLock asked for.
var ErrLocked = errors.New("the lock is held by another")

// Lock takes an exclusive flock on the file at path (made, with its
// folder, when missing) and returns the function that releases it. It
// waits while another process or descriptor holds the lock, until ctx
// ends (ctx.Err() then). flock is per open file, so two Locks of one path
// in one process exclude each other too.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := openLock(path)
	if err != nil {
		return nil, err
	}
	if err := LockFile(ctx, f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { UnlockFile(f); f.Close() }, nil
}

// TryLock takes an exclusive flock on the file at path (made when
// missing; its folder must exist) without waiting for a holder: an error
// that is ErrLocked when another holds it. Only shared locks in the way,
// Held's (taken and released at once by a process asking whether a
// holder runs), are waited out, up to heldWait: they hold no one's work.
func TryLock(path string) (unlock func(), err error) {
	f, err := openLock(path)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(heldWait)
	for {
		err := TryLockFile(f)
		if err == nil {
			return func() { UnlockFile(f); f.Close() }, nil
		}
		// A shared lock we can take too means no exclusive holder: only
		// Held's, passing.
		if !errors.Is(err, ErrLocked) || time.Now().After(deadline) || flock(f, unix.LOCK_SH|unix.LOCK_NB) != nil {
			f.Close()
			return nil, err
		}
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		time.Sleep(time.Millisecond)
	}
}

// heldWait is how long TryLock waits out shared locks: Held holds one for
// two system calls.
const heldWait = 200 * time.Millisecond

// Held reports whether another holds a lock on the file at path: false
// when there is no such file (no one ever locked it). It takes, and at
// once releases, a shared lock, so it never waits.
func Held(path string) bool {
	f, err := OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := flock(f, unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return errors.Is(err, ErrLocked)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}

// LockFile takes an exclusive flock on the open file f, waiting while
// another holds it until ctx ends (ctx.Err() then). A ctx that never ends
// (context.Background) waits in the kernel. Closing f releases the lock.
func LockFile(ctx context.Context, f *os.File) error {
	if ctx.Done() == nil {
		for {
			err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
			if err != unix.EINTR {
				return lockError(f, err)
			}
		}
	}
	var t *time.Timer
	for {
		err := TryLockFile(f)
		if !errors.Is(err, ErrLocked) {
			return err
		}
		if t == nil {
			t = time.NewTimer(lockPoll)
			defer t.Stop()
		} else {
			t.Reset(lockPoll)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// TryLockFile takes an exclusive flock on the open file f without
// waiting: an error that is ErrLocked when another holds it.
func TryLockFile(f *os.File) error {
	return flock(f, unix.LOCK_EX|unix.LOCK_NB)
}

// UnlockFile releases the flock f holds.
func UnlockFile(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// flock applies how (a non-blocking lock) to f, trying again when a
// signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EWOULDBLOCK:
			return fmt.Errorf("lock %s: %w", f.Name(), ErrLocked)
		}
		return lockError(f, err)
	}
}

func lockError(f *os.File, err error) error {
	if err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return nil
}

// openLock opens (making it) the lock file at path, never through a
// symlink and never a FIFO or device.
func openLock(path string) (*os.File, error) {
	f, err := OpenFile(path, os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
