package federation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memhost/memhost/internal/fsx"
)

// lockFile takes an exclusive flock on .git/memhost/NAME (other processes
// of the home too) until the returned function is called.
func (r *Repo) lockFile(ctx context.Context, name string) (func(), error) {
	return fsx.Lock(ctx, filepath.Join(r.gitDir(), "memhost", name))
}

// Commit commits paths (home-relative; none means every change in the
// home) with msg, the shared ones only (shareable): it reports whether a
// commit was made; nothing to commit is not an error.
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

// CommitAll commits every change to a shared path in the home: one `git
// status` finds them, and they are committed like Commit's (the fast
// path when it applies). What is staged by hand outside them is not.
func (r *Repo) CommitAll(ctx context.Context, msg string) (bool, error) {
	unlock, err := r.lockFile(ctx, "commit.lock")
	if err != nil {
		return false, err
	}
	defer unlock()
	if _, err := r.waitIndexLock(ctx); err != nil {
		return false, err
	}
	paths, err := r.statusPaths(ctx)
	if err != nil || len(paths) == 0 {
		return false, err
	}
	return r.commitLocked(ctx, msg, paths)
}

// statusPaths lists the paths a commit of every change looks at: the
// tracked files git status reports changed or removed (staged or not),
// and every untracked file in the shared folders, whatever the shared
// .gitignore says (a remote can change it; gitCommit leaves out what
// .git/info/exclude keeps on this machine, see excluded).
func (r *Repo) statusPaths(ctx context.Context) ([]string, error) {
	out, err := r.Git(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--no-renames")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range strings.Split(out, "\x00") {
		if len(rec) >= 4 {
			paths = append(paths, rec[3:])
		}
	}
	out, err = r.Git(ctx, "--literal-pathspecs", "ls-files", "-z", "--others", "--", r.notebookDir(), sessionsDir, ".gitignore")
	if err != nil {
		return nil, err
	}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

func (r *Repo) commitLocked(ctx context.Context, msg string, paths []string) (bool, error) {
	if len(paths) == 0 {
		var err error
		if paths, err = r.statusPaths(ctx); err != nil {
			return false, err
		}
	}
	home, err := r.openHome()
	if err != nil {
		return false, err
	}
	defer home.Close()
	paths = r.shareable(home, paths)
	if len(paths) == 0 {
		return false, nil
	}
	// The common case, pages git already tracks: no git process.
	if id, err := r.fastCommit(home, msg, paths, time.Now()); err == nil {
		return id != "", nil
	}
	return r.gitCommit(ctx, home, msg, paths, nil, false)
}

// gitCommit commits, on top of HEAD, the files at paths as they are on
// disk beneath home (as regular files, mode 100644; a path gone from disk
// removed) and removes the paths in remove, through a separate index
// built from HEAD's tree: nothing else the index holds (staged by hand)
// gets in, and no executable bit or symlink is recorded. Files are read
// by memhost with no symlink followed on their path and no FIFO waited on
// (readWorkFile; git would follow both): a symlink, a FIFO or a folder at
// a path is left out, its tracked version kept. A new file
// .git/info/exclude keeps on this machine stays out; the shared
// .gitignore is not consulted. Paths must have passed shareable. Then the
// index is reset to the new HEAD (the work tree untouched). With
// allowEmpty a commit is made even when the tree does not change.
func (r *Repo) gitCommit(ctx context.Context, home *fsx.Dir, msg string, paths, remove []string, allowEmpty bool) (bool, error) {
	head, err := r.rev(ctx, "HEAD")
	if err != nil {
		return false, err
	}
	tmp := filepath.Join(r.gitDir(), "memhost", "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return false, err
	}
	ex, err := r.excluded(ctx, paths)
	if err != nil {
		return false, err
	}
	// Each file's content is copied into .git (git hash-object then
	// stores them all, in one process and the repository's object format).
	blobs, err := os.MkdirTemp(tmp, "blobs-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(blobs)
	var present, copies []string
	for _, p := range paths {
		if ex[p] {
			continue
		}
		data, err := readStable(home, p)
		switch {
		case err == nil:
			c := filepath.Join(blobs, strconv.Itoa(len(copies)))
			if err := os.WriteFile(c, data, 0o600); err != nil {
				return false, err
			}
			present, copies = append(present, p), append(copies, c)
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			remove = append(remove, p)
		case errors.Is(err, fsx.ErrSymlink), errors.Is(err, fsx.ErrNotRegular), errors.Is(err, syscall.EISDIR):
			// Not a regular file in the home: the tracked version stays.
		default:
			return false, err
		}
	}
	var lines []string
	if len(present) > 0 {
		out, err := r.gitIO(ctx, strings.NewReader(strings.Join(copies, "\n")+"\n"), nil, "hash-object", "-w", "--no-filters", "--stdin-paths")
		if err != nil {
			return false, err
		}
		oids := strings.Fields(string(out))
		if len(oids) != len(present) {
			return false, fmt.Errorf("git hash-object: %d ids for %d files", len(oids), len(present))
		}
		for i, p := range present {
			lines = append(lines, "100644 "+oids[i]+"\t"+p)
		}
	}
	for _, p := range remove {
		lines = append(lines, "0 "+strings.Repeat("0", 40)+"\t"+p)
	}
	idx := filepath.Join(tmp, "commit-index")
	os.Remove(idx)
	defer os.Remove(idx)
	env := []string{"GIT_INDEX_FILE=" + idx}
	readTree := []string{"read-tree", "--empty"}
	if head != "" {
		readTree = []string{"read-tree", head}
	}
	if _, err := r.gitIO(ctx, nil, env, readTree...); err != nil {
		return false, err
	}
	if len(lines) > 0 {
		if _, err := r.gitIO(ctx, strings.NewReader(strings.Join(lines, "\n")+"\n"), env, "update-index", "--index-info"); err != nil {
			return false, err
		}
	}
	out, err := r.gitIO(ctx, nil, env, "write-tree")
	if err != nil {
		return false, err
	}
	tree := strings.TrimSpace(string(out))
	if head != "" && !allowEmpty {
		if ht, err := r.Git(ctx, "rev-parse", head+"^{tree}"); err != nil {
			return false, err
		} else if strings.TrimSpace(ht) == tree {
			// Nothing to commit; an index an earlier commit could not
			// bring to HEAD (git held index.lock) is brought there now,
			// without reading the work tree (it may hold a FIFO).
			return false, r.indexToHead(ctx, head, false)
		}
	}
	args := []string{"commit-tree", tree, "-F", "-"}
	if head != "" {
		args = append(args, "-p", head)
	}
	out, err = r.gitIO(ctx, strings.NewReader(cleanMessage(msg)), nil, args...)
	if err != nil {
		return false, err
	}
	commit := strings.TrimSpace(string(out))
	subject, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	if _, err := r.Git(ctx, "update-ref", "-m", "commit: "+subject, "HEAD", commit, head); err != nil {
		return false, err
	}
	if err := r.indexToHead(ctx, commit, true); err != nil {
		return true, fmt.Errorf("commit %s made, but the index was not reset to it: %w", short(commit), err)
	}
	return true, nil
}

// indexToHead makes the index hold HEAD's tree (head): with refresh, its
// stat data refreshed (reset) and its cache tree whole (write-tree stores
// it), as the next fast commit needs, after a commit; without, by
// read-tree alone, which never reads the work tree, for an index found
// behind HEAD when there was nothing to commit (the next commit's reset
// refreshes it). Any git may hold index.lock for a moment (a person's git
// status, an editor's): it waits for it and tries again, since an index
// left behind HEAD reads as staged changes that no later commit cleared.
func (r *Repo) indexToHead(ctx context.Context, head string, refresh bool) error {
	steps := [][]string{{"reset", "-q"}, {"write-tree"}}
	if !refresh {
		// Compared without the work tree and without writing an object.
		if _, err := r.Git(ctx, "diff-index", "--cached", "--quiet", head); err == nil {
			return nil
		}
		steps = [][]string{{"read-tree", head}}
	}
	var err error
	for range 5 {
		if _, err = r.waitIndexLock(ctx); err != nil {
			return err
		}
		err = nil
		for _, args := range steps {
			if _, err = r.Git(ctx, args...); err != nil {
				break
			}
		}
		if err == nil {
			return nil
		}
	}
	return err
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
