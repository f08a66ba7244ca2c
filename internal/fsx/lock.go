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

// lockPoll is how often Lock tries again while another holds the lock.
const lockPoll = 5 * time.Millisecond

// Lock takes an exclusive flock on the file at path (made, with its
// folder, when missing) and returns the function that releases it. It
// waits while another process or descriptor holds the lock, until ctx
// ends (ctx.Err() then). flock is per open file, so two Locks of one path
// in one process exclude each other too.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := OpenFile(path, os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	var t *time.Timer
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if t == nil {
			t = time.NewTimer(lockPoll)
			defer t.Stop()
		} else {
			t.Reset(lockPoll)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
