package federated

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/memhost/memhost/host/federation"
	"github.com/memhost/memhost/host/federation/gitrepo"
)

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
	repo     *federation.Repo
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
func NewCommitter(repo *federation.Repo, interval time.Duration, onCommit func(error)) *Committer {
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
	_, err := c.repo.Commit(ctx, Message(batch), gitrepo.Dedupe(paths)...)
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
