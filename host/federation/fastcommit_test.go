package federation

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost/host/federation/gitrepo"
	"github.com/memhost/memhost/host/federation/gitrepo/gitindex"
)

// fastPages is a small home with nested folders, files at several
// depths and names that sort around "/" ("a.md" < "a/" < "a0.md"); twin
// makes one page executable on disk.
var fastPages = map[string]string{
	"notebook/reference/contacts.md":     contacts,
	"notebook/reference/a.md":            "a\n",
	"notebook/reference/a/inner.md":      "inner\n",
	"notebook/reference/a0.md":           "a0\n",
	"notebook/knowledge/deep/er/page.md": "deep\n",
	"notebook/daily/2026-11-23.md":       "# 2026-11-23\n",
	"sessions/s1.jsonl":                  `{"id":"1"}` + "\n",
	"notebook/top.md":                    "top\n",
}

// twin makes two homes with the same files, one committed to by the fast
// path and one by git, so that their trees can be compared.
func twin(t *testing.T) (fast, slow *Repo) {
	t.Helper()
	fast, slow = newHome(t, "fast", fastPages), newHome(t, "slow", fastPages)
	for _, r := range []*Repo{fast, slow} {
		// The bit is never recorded (shared.go): the page stays 100644.
		if err := os.Chmod(filepath.Join(r.Dir, "notebook/reference/a0.md"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return fast, slow
}

func gitOut(t *testing.T, r *Repo, args ...string) string {
	t.Helper()
	out, err := r.Git(context.Background(), args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(out)
}

// checkRepo holds the repository to what git itself would have: every
// object sound, the index HEAD's tree, the work tree clean.
func checkRepo(t *testing.T, r *Repo) {
	t.Helper()
	gitOut(t, r, "fsck", "--strict", "--no-progress")
	if st := gitOut(t, r, "status", "--porcelain"); st != "" {
		t.Fatalf("status after a fast commit:\n%s", st)
	}
	if wt, head := gitOut(t, r, "write-tree"), gitOut(t, r, "rev-parse", "HEAD^{tree}"); wt != head {
		t.Fatalf("the index holds tree %s, HEAD %s", wt, head)
	}
}

// TestFastCommitMatchesGit: random edits committed by the fast path give
// the same trees as `git commit --only` gives on a twin home, with sound
// objects, the index in step, messages and reflogs as git writes them.
func TestFastCommitMatchesGit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fast, slow := twin(t)
	var files []string
	for p := range fastPages {
		files = append(files, p)
	}
	rng := rand.New(rand.NewSource(1))
	for round := range 12 {
		n := 1 + rng.Intn(3)
		var paths []string
		for range n {
			p := files[rng.Intn(len(files))]
			line := fmt.Sprintf("- round %d %s\n", round, strings.Repeat("x", rng.Intn(40)))
			appendTo(t, fast.Dir, p, line)
			appendTo(t, slow.Dir, p, line)
			paths = append(paths, p)
		}
		if round%3 == 2 { // a new page in a folder git tracks
			p := fmt.Sprintf("notebook/reference/new-%d.md", round)
			write(t, fast.Dir, p, "new\n")
			write(t, slow.Dir, p, "new\n")
			paths = append(paths, p)
			files = append(files, p)
		}
		msg := fmt.Sprintf("remember: round %d  \n\n\n- detail  \n", round)
		before := gitOut(t, fast, "rev-parse", "HEAD")
		id, err := fast.g().FastCommit(openedHome(t, fast), msg, paths, time.Now())
		if err != nil {
			t.Fatalf("round %d: fast path refused: %v", round, err)
		}
		if _, err := slow.Git(ctx, append([]string{"add", "--"}, paths...)...); err != nil {
			t.Fatal(err)
		}
		if _, err := slow.Git(ctx, "commit", "-q", "-m", msg); err != nil {
			t.Fatal(err)
		}
		checkRepo(t, fast)
		if head := gitOut(t, fast, "rev-parse", "HEAD"); head != id {
			t.Fatalf("HEAD %s, fast commit %s", head, id)
		}
		if got, want := gitOut(t, fast, "rev-parse", "HEAD^{tree}"), gitOut(t, slow, "rev-parse", "HEAD^{tree}"); got != want {
			t.Fatalf("round %d: fast tree %s, git's %s", round, got, want)
		}
		if got, want := gitOut(t, fast, "log", "-1", "--format=%B"), gitOut(t, slow, "log", "-1", "--format=%B"); got != want {
			t.Fatalf("message %q, git's %q", got, want)
		}
		if p := gitOut(t, fast, "rev-parse", "HEAD^"); p != before {
			t.Fatalf("parent %s, want %s", p, before)
		}
		if got := gitOut(t, fast, "reflog", "-1", "--format=%H %gs", "main"); got != id+" commit: remember: round "+fmt.Sprint(round) {
			t.Fatalf("reflog: %q", got)
		}
		if got := gitOut(t, fast, "log", "-1", "--format=%an <%ae>"); got != "fast <fast@test>" {
			t.Fatalf("author %q", got)
		}
	}
	if got := gitOut(t, fast, "ls-tree", "HEAD", "notebook/reference/a0.md"); !strings.HasPrefix(got, "100644 ") {
		t.Fatalf("an executable page is recorded as %q, want mode 100644", got)
	}
	// Nothing changed: no commit, no error.
	before := gitOut(t, fast, "rev-parse", "HEAD")
	if id, err := fast.g().FastCommit(openedHome(t, fast), "again", []string{"notebook/top.md"}, time.Now()); err != nil || id != "" {
		t.Fatalf("an unchanged file: %q %v", id, err)
	}
	if gitOut(t, fast, "rev-parse", "HEAD") != before {
		t.Fatal("an unchanged file was committed")
	}
}

// TestFastCommitRefusesWhatItCannotDo: each case falls back to git
// before the branch moves, and Commit still commits the change.
func TestFastCommitRefusesWhatItCannotDo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name  string
		setup func(t *testing.T, r *Repo) []string // returns the paths to commit
	}{
		{"a new file in a new folder", func(t *testing.T, r *Repo) []string {
			write(t, r.Dir, "notebook/projects/new.md", "new\n")
			return []string{"notebook/projects/new.md"}
		}},
		{"a new file this machine excludes", func(t *testing.T, r *Repo) []string {
			// .git/info/exclude, never shared; the shared .gitignore
			// does not keep pages out (TestRemoteGitignoreCannotHideLocalWork).
			write(t, r.Dir, ".git/info/exclude", "# mine\nsecret.md\n")
			write(t, r.Dir, "notebook/reference/secret.md", "secret\n")
			appendTo(t, r.Dir, "notebook/top.md", "more\n")
			return []string{"notebook/top.md", "notebook/reference/secret.md"}
		}},
		{"a removed file", func(t *testing.T, r *Repo) []string {
			os.Remove(filepath.Join(r.Dir, "notebook/top.md"))
			return []string{"notebook/top.md"}
		}},
		{"something staged by hand", func(t *testing.T, r *Repo) []string {
			appendTo(t, r.Dir, "notebook/top.md", "staged\n")
			gitOut(t, r, "add", "notebook/top.md")
			appendTo(t, r.Dir, "notebook/reference/a.md", "more\n")
			return []string{"notebook/reference/a.md"}
		}},
		{"the index locked", func(t *testing.T, r *Repo) []string {
			write(t, r.Dir, ".git/index.lock", "")
			t.Cleanup(func() { os.Remove(filepath.Join(r.Dir, ".git/index.lock")) })
			appendTo(t, r.Dir, "notebook/top.md", "more\n")
			return []string{"notebook/top.md"}
		}},
		{"HEAD in a pack", func(t *testing.T, r *Repo) []string {
			gitOut(t, r, "gc", "-q")
			appendTo(t, r.Dir, "notebook/top.md", "more\n")
			return []string{"notebook/top.md"}
		}},
		{"an index version 4", func(t *testing.T, r *Repo) []string {
			gitOut(t, r, "update-index", "--index-version", "4")
			appendTo(t, r.Dir, "notebook/top.md", "more\n")
			return []string{"notebook/top.md"}
		}},
		{"a detached HEAD", func(t *testing.T, r *Repo) []string {
			gitOut(t, r, "checkout", "-q", "--detach")
			appendTo(t, r.Dir, "notebook/top.md", "more\n")
			return []string{"notebook/top.md"}
		}},
		{"a .gitattributes", func(t *testing.T, r *Repo) []string {
			write(t, r.Dir, ".gitattributes", "*.md text eol=crlf\n")
			appendTo(t, r.Dir, "notebook/top.md", "more\n")
			return []string{"notebook/top.md"}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newHome(t, "home", fastPages)
			paths := c.setup(t, r)
			before := gitOut(t, r, "rev-parse", "HEAD")
			if _, err := r.g().FastCommit(openedHome(t, r), "m", paths, time.Now()); !errors.Is(err, gitindex.ErrSlowPath) {
				t.Fatalf("fast path: %v, want gitindex.ErrSlowPath", err)
			}
			if gitOut(t, r, "rev-parse", "HEAD") != before {
				t.Fatal("the refused fast path moved the branch")
			}
			os.Remove(filepath.Join(r.Dir, ".git/index.lock"))
			if ok, err := r.Commit(ctx, "m", paths...); err != nil || !ok {
				t.Fatalf("commit through git: %v %v", ok, err)
			}
			if got := gitOut(t, r, "diff", "--name-only", "HEAD^", "HEAD", "--", paths[0]); got != paths[0] {
				t.Fatalf("the change to %s is not in the commit: %q", paths[0], got)
			}
			if got := gitOut(t, r, "ls-files", "-ci", "--exclude-standard"); got != "" {
				t.Fatalf("ignored files committed: %s", got)
			}
		})
	}
}

// TestCommitUsesFastPathWithGitRunning: a user's git command holding the
// index lock meanwhile makes Commit wait for git, not fail or clobber.
func TestCommitWaitsForARunningGit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newHome(t, "home", fastPages)
	lock := filepath.Join(r.Dir, ".git/index.lock")
	write(t, r.Dir, ".git/index.lock", "")
	appendTo(t, r.Dir, "notebook/top.md", "more\n")
	done := make(chan error, 1)
	go func() { _, err := r.Commit(ctx, "m", "notebook/top.md"); done <- err }()
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("commit did not wait for the index lock: %v", err)
	default:
	}
	os.Remove(lock)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkRepo(t, r)
}

// BenchmarkFastCommit: one changed page committed in a home of 10k
// tracked pages, by the fast path and by `git commit --only`.
func BenchmarkFastCommit(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "home")
	for i := range 10000 {
		write(b, dir, fmt.Sprintf("notebook/knowledge/%03d/page-%05d.md", i/1000, i), fmt.Sprintf("# Page %d\n\n- fact %d\n", i, i))
	}
	r := &Repo{Dir: dir, Author: "b <b@test>"}
	if _, err := r.Init(context.Background(), InitOptions{}); err != nil {
		b.Fatal(err)
	}
	p := "notebook/knowledge/005/page-05000.md"
	home := openedHome(b, r)
	for _, mode := range []string{"fast", "git"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				appendTo(b, dir, p, fmt.Sprintf("- %s %d\n", mode, i))
				if mode == "fast" {
					if id, err := r.g().FastCommit(home, "m", []string{p}, time.Now()); err != nil || id == "" {
						b.Fatal(id, err)
					}
				} else if out, err := exec.Command("git", "-C", dir, "commit", "-q", "--only", "-m", "m", "--", p).CombinedOutput(); err != nil {
					b.Fatal(err, string(out))
				}
			}
		})
	}
}

// peerCommit clones r, lets change edit the clone, commits there and
// fetches the commit back into r, returning its id.
func peerCommit(t *testing.T, r *Repo, change func(dir string)) string {
	t.Helper()
	peer := filepath.Join(t.TempDir(), "peer")
	if out, err := exec.Command("git", "clone", "-q", r.Dir, peer).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v %s", err, out)
	}
	change(peer)
	p := &Repo{Dir: peer, Author: "peer <peer@test>"}
	gitOut(t, p, "add", "-A")
	gitOut(t, p, "commit", "-qm", "peer")
	gitOut(t, r, "fetch", "-q", peer, "+HEAD:refs/remotes/peer/main")
	return gitOut(t, r, "rev-parse", "refs/remotes/peer/main")
}

// TestFastForwardMatchesGit: the fast-forward writes exactly target's
// files (changed, added in new folders, removed with their folders, never
// executable), leaves a sound repository with the index in step,
// and commits made after it take the fast path again.
func TestFastForwardMatchesGit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newHome(t, "home", fastPages)
	head := gitOut(t, r, "rev-parse", "HEAD")
	target := peerCommit(t, r, func(dir string) {
		appendTo(t, dir, "notebook/reference/contacts.md", "- from the peer\n")
		appendTo(t, dir, "notebook/reference/a/inner.md", "- inner change\n")
		write(t, dir, "notebook/projects/new/idea.md", "idea\n")
		write(t, dir, "notebook/reference/a.5.md", "between\n")
		os.RemoveAll(filepath.Join(dir, "notebook/knowledge/deep"))
		os.Remove(filepath.Join(dir, "notebook/top.md"))
	})
	if err := r.g().FastForward(ctx, head, target, time.Now()); err != nil {
		t.Fatalf("fast-forward: %v", err)
	}
	checkRepo(t, r)
	if got := gitOut(t, r, "rev-parse", "HEAD"); got != target {
		t.Fatalf("HEAD %s, want %s", got, target)
	}
	if got := gitOut(t, r, "reflog", "-1", "--format=%gs"); got != "merge "+target+": Fast-forward" {
		t.Fatalf("reflog: %q", got)
	}
	for _, gone := range []string{"notebook/top.md", "notebook/knowledge/deep"} {
		if _, err := os.Stat(filepath.Join(r.Dir, gone)); !os.IsNotExist(err) {
			t.Fatalf("%s is still there: %v", gone, err)
		}
	}
	// 0600, not git's 0644: a home's files are its user's alone.
	if fi, err := os.Stat(filepath.Join(r.Dir, "notebook/projects/new/idea.md")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("idea.md written with mode %v (%v), want 0600", fi.Mode(), err)
	}
	mustContain(t, read(t, r.Dir, "notebook/reference/contacts.md"), "- from the peer")
	mustContain(t, read(t, r.Dir, "notebook/projects/new/idea.md"), "idea")
	// The next commit takes the fast path on target.
	appendTo(t, r.Dir, "notebook/projects/new/idea.md", "- more\n")
	if id, err := r.g().FastCommit(openedHome(t, r), "after", []string{"notebook/projects/new/idea.md"}, time.Now()); err != nil || id == "" {
		t.Fatalf("fast commit after a fast-forward: %q %v", id, err)
	}
	checkRepo(t, r)
}

// TestFastForwardKeepsLocalEdits: a file edited (or made) locally that
// target changes stops the fast-forward with gitrepo.ErrDirty before anything
// moves, as git merge refuses to overwrite it.
func TestFastForwardKeepsLocalEdits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, local := range map[string]func(dir string){
		"edited":          func(dir string) { appendTo(t, dir, "notebook/reference/contacts.md", "- local\n") },
		"deleted":         func(dir string) { os.Remove(filepath.Join(dir, "notebook/reference/contacts.md")) },
		"untracked there": func(dir string) { write(t, dir, "notebook/reference/added.md", "mine\n") },
	} {
		t.Run(name, func(t *testing.T) {
			r := newHome(t, "home", fastPages)
			head := gitOut(t, r, "rev-parse", "HEAD")
			target := peerCommit(t, r, func(dir string) {
				appendTo(t, dir, "notebook/reference/contacts.md", "- theirs\n")
				write(t, dir, "notebook/reference/added.md", "theirs\n")
				appendTo(t, dir, "notebook/top.md", "- theirs\n")
			})
			local(r.Dir)
			before := files(t, r.Dir)
			if err := r.g().FastForward(ctx, head, target, time.Now()); !errors.Is(err, gitrepo.ErrDirty) {
				t.Fatalf("fast-forward over a local change: %v", err)
			}
			if gitOut(t, r, "rev-parse", "HEAD") != head {
				t.Fatal("HEAD moved")
			}
			if after := files(t, r.Dir); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("files changed:\n%v\n%v", before, after)
			}
		})
	}
}

// files maps every file of the work tree (not .git) to its content.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[p] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMaintainPacksOnceADay: Maintain lets git pack loose objects past
// the threshold, then not again for MaintainEvery; commits keep working
// (through git once, while HEAD's commit is packed, then fast again).
func TestMaintainPacksOnceADay(t *testing.T) {
	ctx := context.Background()
	pages := map[string]string{}
	for i := range 1500 {
		pages[fmt.Sprintf("notebook/knowledge/p%04d.md", i)] = fmt.Sprintf("page %d\n", i)
	}
	r := newHome(t, "home", pages)
	old := gcAuto
	gcAuto = 256 // git estimates from objects/17: more than one object there
	defer func() { gcAuto = old }()
	now := time.Now()
	if ran, err := r.Maintain(ctx, now); err != nil || !ran {
		t.Fatalf("first maintenance: %v %v", ran, err)
	}
	counts := gitOut(t, r, "count-objects", "-v")
	if !strings.Contains(counts, "count: 0\n") || strings.Contains(counts, "in-pack: 0\n") {
		t.Fatalf("objects not packed:\n%s", counts)
	}
	if ran, err := r.Maintain(ctx, now.Add(time.Hour)); err != nil || ran {
		t.Fatalf("maintenance an hour later: %v %v", ran, err)
	}
	if ran, err := r.Maintain(ctx, now.Add(MaintainEvery+time.Minute)); err != nil || !ran {
		t.Fatalf("maintenance a day later: %v %v", ran, err)
	}
	for i := range 2 {
		appendTo(t, r.Dir, "notebook/knowledge/p0001.md", fmt.Sprintf("- more %d\n", i))
		if ok, err := r.Commit(ctx, "after gc", "notebook/knowledge/p0001.md"); err != nil || !ok {
			t.Fatalf("commit after gc: %v %v", ok, err)
		}
		checkRepo(t, r)
	}
}

// TestStaleLocksOfAKilledCommit: the index and branch locks a commit
// killed midway leaves are removed once stale, and the next commit lands.
func TestStaleLocksOfAKilledCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newHome(t, "home", fastPages)
	old := time.Now().Add(-2 * gitrepo.StaleLock)
	for _, l := range []string{".git/index.lock", ".git/refs/heads/main.lock"} {
		write(t, r.Dir, l, "")
		if err := os.Chtimes(filepath.Join(r.Dir, l), old, old); err != nil {
			t.Fatal(err)
		}
	}
	appendTo(t, r.Dir, "notebook/top.md", "- after the crash\n")
	if ok, err := r.Commit(ctx, "after", "notebook/top.md"); err != nil || !ok {
		t.Fatalf("commit after a killed one: %v %v", ok, err)
	}
	checkRepo(t, r)
}

// TestStateWriteErrorReturned: when .git/memhost/state.json cannot be
// replaced (a folder is in its place), Sync and Maintain say so instead
// of dropping the state their caller backs off by.
func TestStateWriteErrorReturned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := newBare(t)
	r := newHome(t, "home", fastPages)
	sync1(t, r, remote)
	state := r.statePath()
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(state, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Sync(ctx, SyncOptions{Remote: remote}); err == nil || !strings.Contains(err.Error(), state) {
		t.Errorf("Sync with the state file unwritable: %v, want an error naming %s", err, state)
	}
	if _, err := r.Maintain(ctx, time.Now()); err == nil || !strings.Contains(err.Error(), state) {
		t.Errorf("Maintain with the state file unwritable: %v, want an error naming %s", err, state)
	}
}
