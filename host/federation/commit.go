package federation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// lockFile takes an exclusive flock on .git/memhost/NAME (other processes
// of the home too) until the returned function is called.
func (r *Repo) lockFile(ctx context.Context, name string) (func(), error) {
	dir := filepath.Join(r.gitDir(), "memhost")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Commit stages paths (home-relative; none means every change in the
// home) and commits them with msg. It reports whether a commit was made:
// nothing staged is not an error.
func (r *Repo) Commit(ctx context.Context, msg string, paths ...string) (bool, error) {
	unlock, err := r.lockFile(ctx, "commit.lock")
	if err != nil {
		return false, err
	}
	defer unlock()
	// Every memhost process commits under commit.lock, so a git index
	// lock now is a git left running by a killed memhost, or a dead one.
	if _, err := r.waitIndexLock(ctx); err != nil {
		return false, err
	}
	return r.commitLocked(ctx, msg, paths)
}

// CommitAll commits every change in the home. One `git status` finds
// them; the paths are committed like Commit's (the fast path when it
// applies), and anything staged by hand by `git add -A`.
func (r *Repo) CommitAll(ctx context.Context, msg string) (bool, error) {
	unlock, err := r.lockFile(ctx, "commit.lock")
	if err != nil {
		return false, err
	}
	defer unlock()
	if _, err := r.waitIndexLock(ctx); err != nil {
		return false, err
	}
	out, err := r.Git(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return r.commitLocked(ctx, msg, nil)
	}
	var paths []string
	for _, rec := range strings.Split(out, "\x00") {
		if len(rec) < 4 {
			continue
		}
		if rec[0] != ' ' && rec[0] != '?' {
			return r.commitLocked(ctx, msg, nil) // staged by hand
		}
		paths = append(paths, rec[3:])
	}
	if len(paths) == 0 {
		return false, nil
	}
	return r.commitLocked(ctx, msg, paths)
}

func (r *Repo) commitLocked(ctx context.Context, msg string, paths []string) (bool, error) {
	if len(paths) > 0 {
		// The common case, pages git already tracks: no git process.
		id, err := r.fastCommit(msg, paths, time.Now())
		if err == nil {
			return id != "", nil
		}
		// Then one process, which
		// stages and commits just these paths (git commit --only).
		args := append([]string{"commit", "-q", "--no-verify", "-m", msg, "--"}, paths...)
		if _, err := r.Git(ctx, args...); err == nil {
			return true, nil
		}
		// A new file (not tracked yet), or nothing to commit: below.
	}
	add := []string{"add", "-A"}
	if len(paths) > 0 {
		add = append(append(add, "--"), paths...)
	}
	if _, err := r.Git(ctx, add...); err != nil {
		if len(paths) == 0 {
			return false, err
		}
		// A path neither on disk nor tracked (a page made and removed
		// between two commits): stage everything instead.
		if _, err := r.Git(ctx, "add", "-A"); err != nil {
			return false, err
		}
	}
	_, err := r.Git(ctx, "commit", "-q", "--no-verify", "-m", msg)
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		if _, derr := r.Git(ctx, "diff", "--cached", "--quiet"); derr == nil {
			return false, nil // nothing to commit
		}
	}
	return false, err
}

// Change is one write to commit: what it did, and the home-relative files
// it touched (none: look at every file).
type Change struct {
	Message string
	Paths   []string
}

// Committer batches changes into commits: the first change after a quiet
// spell is committed at once (in the background), later ones at most
// once per Interval, all the changes of a batch in one commit whose
// message lists them. Close commits what is pending. It is safe for
// concurrent use (TestCommitterConcurrent).
type Committer struct {
	repo     *Repo
	interval time.Duration
	onCommit func(error) // called after each commit attempt, nil for none

	mu      sync.Mutex
	pending []Change
	timer   *time.Timer
	last    time.Time
	closed  bool
	running sync.WaitGroup
	flushMu sync.Mutex // one commit at a time in this process
}

// NewCommitter returns a Committer for repo that commits at most once per
// interval; onCommit, when not nil, hears of every commit attempt.
func NewCommitter(repo *Repo, interval time.Duration, onCommit func(error)) *Committer {
	return &Committer{repo: repo, interval: interval, onCommit: onCommit}
}

// Note queues a change; it does not wait for the commit.
func (c *Committer) Note(ch Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.pending = append(c.pending, ch)
	if c.timer != nil {
		return
	}
	wait := time.Until(c.last.Add(c.interval))
	if wait < 0 {
		wait = 0
	}
	c.running.Add(1)
	c.timer = time.AfterFunc(wait, func() {
		defer c.running.Done()
		c.mu.Lock()
		c.timer = nil
		c.mu.Unlock()
		c.Flush(context.Background())
	})
}

// Flush commits the pending changes now.
func (c *Committer) Flush(ctx context.Context) error {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	batch := c.pending
	c.pending = nil
	c.last = time.Now()
	c.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	var paths []string
	all := false
	for _, ch := range batch {
		if len(ch.Paths) == 0 {
			all = true
		}
		paths = append(paths, ch.Paths...)
	}
	if all {
		paths = nil
	}
	_, err := c.repo.Commit(ctx, Message(batch), dedupe(paths)...)
	if c.onCommit != nil {
		c.onCommit(err)
	}
	return err
}

// Close commits what is pending and stops; later Notes are dropped.
func (c *Committer) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	if c.timer != nil && c.timer.Stop() {
		c.timer = nil
		c.running.Done()
	}
	c.mu.Unlock()
	c.running.Wait()
	return c.Flush(ctx)
}

// Message is the commit message of a batch: the change's own message,
// or a summary line followed by one line per change.
func Message(batch []Change) string {
	if len(batch) == 1 {
		return batch[0].Message
	}
	var b strings.Builder
	fmt.Fprintf(&b, "memhost: %d changes\n\n", len(batch))
	for _, ch := range batch {
		b.WriteString("- " + strings.ReplaceAll(ch.Message, "\n", " ") + "\n")
	}
	return b.String()
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
