package federation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/federation/filemerge"
)

// newBare makes an empty bare repository: the shared remote.
func newBare(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v: %s", err, out)
	}
	return dir
}

// newHome makes a home with a notebook and the given pages, initialised
// for federation.
func newHome(t testing.TB, name string, pages map[string]string) *Repo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	for p, text := range pages {
		write(t, dir, p, text)
	}
	r := &Repo{Dir: dir, Author: name + " <" + name + "@test>"}
	if _, err := r.Init(context.Background(), InitOptions{}); err != nil {
		t.Fatalf("init %s: %v", name, err)
	}
	return r
}

func write(t testing.TB, dir, p, text string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t testing.TB, dir, p, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(p)), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, dir, p string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func sync1(t testing.TB, r *Repo, remote string) memhost.GitSyncResult {
	t.Helper()
	res, err := r.Sync(context.Background(), SyncOptions{Remote: remote})
	if err != nil {
		t.Fatalf("sync %s: %v", filepath.Base(r.Dir), err)
	}
	return res
}

// tree lists every committed file of HEAD with its content.
func tree(t testing.TB, r *Repo) map[string]string {
	t.Helper()
	out, err := r.Git(context.Background(), "ls-files", "-z")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			m[f] = read(t, r.Dir, f)
		}
	}
	return m
}

func sameTrees(t testing.TB, homes ...*Repo) {
	t.Helper()
	want := tree(t, homes[0])
	for _, h := range homes[1:] {
		got := tree(t, h)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s and %s differ:\n%v\n---\n%v", filepath.Base(homes[0].Dir), filepath.Base(h.Dir), want, got)
		}
	}
}

func mustContain(t testing.TB, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if strings.Count(text, w) != 1 {
			t.Fatalf("want %q exactly once in:\n%s", w, text)
		}
	}
}

const contacts = "# Contacts\n\n## Sarah Chen\n- works at Acme\n\n## Bob\n- likes tea\n"

func TestInitWritesGitignoreAndCommits(t *testing.T) {
	t.Parallel()
	r := newHome(t, "a", map[string]string{"notebook/reference/contacts.md": contacts, "brain/memory.db": "x",
		"brain/serve.json": "{}", "cache/embeddings.db": "x", "config.yaml": "memory: {}\n", "sessions/s1.jsonl": `{"id":"1"}` + "\n"})
	got := tree(t, r)
	for _, p := range []string{"notebook/reference/contacts.md", "sessions/s1.jsonl", ".gitignore"} {
		if _, ok := got[p]; !ok {
			t.Fatalf("%s not committed: %v", p, got)
		}
	}
	for p := range got {
		if strings.HasPrefix(p, "brain/") || strings.HasPrefix(p, "cache/") || p == "config.yaml" {
			t.Fatalf("%s committed: %v", p, got)
		}
	}
	if !Managed(r.Dir) {
		t.Fatal("not managed after init")
	}
	// Adopting again keeps the user's lines and one block.
	appendTo(t, r.Dir, ".gitignore", "mine/\n")
	if _, err := r.Init(context.Background(), InitOptions{}); err != nil {
		t.Fatal(err)
	}
	gi := read(t, r.Dir, ".gitignore")
	mustContain(t, gi, blockBegin, "mine/")
}

// Adopting a repository untracks what is not shared (derived folders,
// an editor's settings in the notebook, anything else), keeping it on disk.
func TestAdoptUntracksDerivedFolders(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "h")
	write(t, dir, "notebook/a.md", "# A\n")
	write(t, dir, "brain/memory.db", "index")
	write(t, dir, "notebook/.obsidian/app.json", "{}")
	write(t, dir, "tools/run.sh", "#!/bin/sh\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "mine"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	r := &Repo{Dir: dir}
	res, err := r.Init(context.Background(), InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || fmt.Sprint(res.Untracked) != "[brain notebook/.obsidian/app.json tools]" {
		t.Fatalf("got %+v, want adopted with what is not shared untracked", res)
	}
	if got := fmt.Sprint(tree(t, r)); got != "map[.gitignore:"+read(t, dir, ".gitignore")+" notebook/a.md:# A\n]" {
		t.Fatalf("tracked after adopting: %s", got)
	}
	if read(t, dir, "brain/memory.db") != "index" {
		t.Fatal("brain/memory.db removed from disk")
	}
}

// Two homes edit different pages, the same page in different places, the
// same page's same section (both append), the daily log and one
// transcript: after syncs both hold everything, nothing twice.
func TestTwoHomesConverge(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/reference/contacts.md": contacts,
		"notebook/daily/2026-01-30.md": "# 2026-01-30\n\n## Session Notes\n- [09:00] start\n",
		"sessions/s1.jsonl":            `{"id":"t1","content":"hello"}` + "\n"})
	sync1(t, a, remote)
	b := newHome(t, "b", nil)
	res := sync1(t, b, remote)
	if res.Merged == "" || len(res.Changed) == 0 {
		t.Fatalf("b's first sync merged nothing: %+v", res)
	}
	sameTrees(t, a, b)

	// Concurrent edits.
	write(t, a.Dir, "notebook/reference/contacts.md", strings.Replace(contacts, "- works at Acme\n", "- works at Acme\n- phone 555-0100\n", 1))
	write(t, b.Dir, "notebook/reference/contacts.md", strings.Replace(contacts, "- likes tea\n", "- likes tea\n- allergic to nuts\n", 1))
	appendTo(t, a.Dir, "notebook/daily/2026-01-30.md", "- [10:00] from a\n")
	appendTo(t, b.Dir, "notebook/daily/2026-01-30.md", "- [10:05] from b\n")
	appendTo(t, a.Dir, "sessions/s1.jsonl", `{"id":"t2","content":"from a"}`+"\n")
	appendTo(t, b.Dir, "sessions/s1.jsonl", `{"id":"t3","content":"from b"}`+"\n")
	write(t, a.Dir, "notebook/lists/todo.md", "# Todo\n- a's\n")
	write(t, b.Dir, "notebook/knowledge/go.md", "# Go\n- b's\n")
	for _, r := range []*Repo{a, b} {
		if _, err := r.CommitAll(context.Background(), "edits"); err != nil {
			t.Fatal(err)
		}
	}
	sync1(t, a, remote)
	res = sync1(t, b, remote)
	if res.Merged != "merge" || len(res.Conflicts) != 0 {
		t.Fatalf("b: got %+v, want a clean merge", res)
	}
	sync1(t, a, remote)
	sameTrees(t, a, b)
	mustContain(t, read(t, a.Dir, "notebook/reference/contacts.md"), "phone 555-0100", "allergic to nuts", "## Sarah Chen")
	mustContain(t, read(t, a.Dir, "notebook/daily/2026-01-30.md"), "from a", "from b", "[09:00] start", "## Session Notes")
	mustContain(t, read(t, a.Dir, "sessions/s1.jsonl"), `"t1"`, `"t2"`, `"t3"`)
	mustContain(t, read(t, a.Dir, "notebook/lists/todo.md"), "a's")
	mustContain(t, read(t, a.Dir, "notebook/knowledge/go.md"), "b's")
}

// Both sides append to the end of the same section: a pure insertion on
// both sides, merged as a union.
func TestSameSectionAppendsUnion(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/reference/contacts.md": contacts})
	sync1(t, a, remote)
	b := newHome(t, "b", nil)
	sync1(t, b, remote)
	appendTo(t, a.Dir, "notebook/reference/contacts.md", "- from a\n- same line\n")
	appendTo(t, b.Dir, "notebook/reference/contacts.md", "- from b\n- same line\n")
	a.CommitAll(context.Background(), "a")
	b.CommitAll(context.Background(), "b")
	sync1(t, a, remote)
	res := sync1(t, b, remote)
	if len(res.Conflicts) != 0 {
		t.Fatalf("conflicts: %+v", res.Conflicts)
	}
	sync1(t, a, remote)
	sameTrees(t, a, b)
	mustContain(t, read(t, b.Dir, "notebook/reference/contacts.md"), "from a", "from b", "same line")
}

// The same line changed on both sides cannot merge: ours stays, theirs
// is kept whole in a sibling page, the conflict is reported and both
// homes end up with both versions.
func TestConflictKeepsBothSides(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/reference/contacts.md": contacts})
	sync1(t, a, remote)
	b := newHome(t, "b", nil)
	sync1(t, b, remote)
	write(t, a.Dir, "notebook/reference/contacts.md", strings.Replace(contacts, "works at Acme", "works at Globex", 1))
	write(t, b.Dir, "notebook/reference/contacts.md", strings.Replace(contacts, "works at Acme", "works at Initech", 1))
	a.CommitAll(context.Background(), "a")
	b.CommitAll(context.Background(), "b")
	sync1(t, a, remote)
	res := sync1(t, b, remote)
	if len(res.Conflicts) != 1 || res.Conflicts[0].Path != "notebook/reference/contacts.md" {
		t.Fatalf("got conflicts %+v, want contacts.md", res.Conflicts)
	}
	sib := res.Conflicts[0].Sibling
	if !filemerge.IsConflictSibling(sib) {
		t.Fatalf("%s is not named as a sibling", sib)
	}
	mustContain(t, read(t, b.Dir, "notebook/reference/contacts.md"), "Initech")
	mustContain(t, read(t, b.Dir, sib), "Globex")
	if st := b.ReadState(); len(st.Conflicts) != 1 {
		t.Fatalf("state conflicts %+v, want 1", st.Conflicts)
	}
	sync1(t, a, remote)
	sameTrees(t, a, b)
	// Resolving: the person removes the sibling; the state forgets it.
	os.Remove(filepath.Join(b.Dir, sib))
	if st := b.ReadState(); len(st.Conflicts) != 0 {
		t.Fatalf("state conflicts %+v after removing the sibling", st.Conflicts)
	}
}

// A page created on both sides (no merge base) with different content is
// a conflict like the same line changed on both sides, not a union of the
// two; a daily log is an append-only log and a list a collection, so their
// entries are united, and a page one side only extended keeps the longer
// version.
func TestAddedOnBothSides(t *testing.T) {
	t.Parallel()
	const page = "notebook/reference/car.md"
	for _, tt := range []struct {
		name, path, a, b string
		conflict         bool
		want             []string // lines b's page holds exactly once afterwards
	}{
		{"different content", page, "# Car\n\n- colour: blue\n", "# Car\n\n- colour: green\n", true, []string{"colour: green"}},
		{"one side extended the other", page, "# Car\n\n- colour: blue\n", "# Car\n\n- colour: blue\n- doors: 4\n", false, []string{"colour: blue", "doors: 4"}},
		{"daily log", "notebook/daily/2026-11-23.md", "# 2026-11-23\n\n## 06:43 — from a\n", "# 2026-11-23\n\n## 06:44 — from b\n", false, []string{"from a", "from b", "# 2026-11-23"}},
		// Two machines that each remembered an item into a list neither had
		// yet (the simulator's second month): a list is a collection, so
		// both items stay in it, the title once.
		{"list", "notebook/lists/reading.md", "# Reading\n\n- Dune\n", "# Reading\n\n- Emma\n", false, []string{"Dune", "Emma", "# Reading"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			remote := newBare(t)
			a := newHome(t, "a", nil)
			sync1(t, a, remote)
			b := newHome(t, "b", nil)
			sync1(t, b, remote)
			write(t, a.Dir, tt.path, tt.a)
			write(t, b.Dir, tt.path, tt.b)
			a.CommitAll(context.Background(), "a")
			b.CommitAll(context.Background(), "b")
			sync1(t, a, remote)
			res := sync1(t, b, remote)
			got := read(t, b.Dir, tt.path)
			mustContain(t, got, tt.want...)
			if !tt.conflict {
				if len(res.Conflicts) != 0 {
					t.Fatalf("conflicts %+v, want none", res.Conflicts)
				}
				sync1(t, a, remote)
				sameTrees(t, a, b)
				return
			}
			if len(res.Conflicts) != 1 || res.Conflicts[0].Path != tt.path || !filemerge.IsConflictSibling(res.Conflicts[0].Sibling) {
				t.Fatalf("conflicts %+v, want one on %s", res.Conflicts, tt.path)
			}
			if got != tt.b {
				t.Fatalf("b's page is %q, want its own %q", got, tt.b)
			}
			if sib := read(t, b.Dir, res.Conflicts[0].Sibling); sib != tt.a {
				t.Fatalf("sibling holds %q, want a's %q", sib, tt.a)
			}
			if st := b.ReadState(); len(st.Conflicts) != 1 {
				t.Fatalf("state conflicts %+v, want 1", st.Conflicts)
			}
			sync1(t, a, remote)
			sameTrees(t, a, b)
		})
	}
}

// A page deleted on one side and edited on the other is kept, edited.
func TestEditWinsOverDelete(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/reference/contacts.md": contacts})
	sync1(t, a, remote)
	b := newHome(t, "b", nil)
	sync1(t, b, remote)
	os.Remove(filepath.Join(a.Dir, "notebook/reference/contacts.md"))
	appendTo(t, b.Dir, "notebook/reference/contacts.md", "- new\n")
	a.CommitAll(context.Background(), "rm")
	b.CommitAll(context.Background(), "edit")
	sync1(t, a, remote)
	sync1(t, b, remote)
	sync1(t, a, remote)
	sameTrees(t, a, b)
	mustContain(t, read(t, a.Dir, "notebook/reference/contacts.md"), "- new")
}

// Three homes, each appending to the same daily log and its own page,
// converge after a round of syncs each.
func TestThreeHomes(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	homes := []*Repo{newHome(t, "a", map[string]string{"notebook/daily/d.md": "# D\n\n## Notes\n"})}
	sync1(t, homes[0], remote)
	for _, n := range []string{"b", "c"} {
		h := newHome(t, n, nil)
		sync1(t, h, remote)
		homes = append(homes, h)
	}
	for i, h := range homes {
		appendTo(t, h.Dir, "notebook/daily/d.md", fmt.Sprintf("- entry %d\n", i))
		write(t, h.Dir, fmt.Sprintf("notebook/p%d.md", i), "# page\n")
		h.CommitAll(context.Background(), "x")
	}
	for round := 0; round < 2; round++ {
		for _, h := range homes {
			sync1(t, h, remote)
		}
	}
	sameTrees(t, homes...)
	mustContain(t, read(t, homes[2].Dir, "notebook/daily/d.md"), "entry 0", "entry 1", "entry 2", "## Notes")
}

// Syncs running at once in two homes against one remote (pushes
// rejected and retried) lose nothing.
func TestConcurrentSyncs(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/daily/d.md": "# D\n"})
	sync1(t, a, remote)
	b := newHome(t, "b", nil)
	sync1(t, b, remote)
	var wg sync.WaitGroup
	for _, h := range []*Repo{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				appendTo(t, h.Dir, "notebook/daily/d.md", fmt.Sprintf("- %s %d\n", filepath.Base(h.Dir), i))
				h.CommitAll(context.Background(), "x")
				h.Sync(context.Background(), SyncOptions{Remote: remote})
			}
		}()
	}
	wg.Wait()
	sync1(t, a, remote)
	sync1(t, b, remote)
	sync1(t, a, remote)
	sameTrees(t, a, b)
	text := read(t, a.Dir, "notebook/daily/d.md")
	for _, n := range []string{"a", "b"} {
		for i := 0; i < 5; i++ {
			mustContain(t, text, fmt.Sprintf("- %s %d\n", n, i))
		}
	}
}

// A `git merge` killed mid-way (conflict markers in the work tree,
// MERGE_HEAD on disk) and a stale index.lock: the next sync recovers and
// loses neither side.
func TestInterruptedMergeRecovers(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/reference/contacts.md": contacts})
	sync1(t, a, remote)
	b := newHome(t, "b", nil)
	sync1(t, b, remote)
	write(t, a.Dir, "notebook/reference/contacts.md", strings.Replace(contacts, "Acme", "Globex", 1))
	write(t, b.Dir, "notebook/reference/contacts.md", strings.Replace(contacts, "Acme", "Initech", 1))
	a.CommitAll(context.Background(), "a")
	b.CommitAll(context.Background(), "b")
	sync1(t, a, remote)
	// b fetches and starts a plain git merge, which stops on the conflict
	// and leaves its state on disk, as a killed merge does.
	ctx := context.Background()
	if _, err := b.Git(ctx, "fetch", "-q", remote, "+refs/heads/main:refs/remotes/memhost/main"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Git(ctx, "merge", "refs/remotes/memhost/main"); err == nil {
		t.Fatal("the merge did not stop on the conflict")
	}
	if !strings.Contains(read(t, b.Dir, "notebook/reference/contacts.md"), "<<<<<<<") {
		t.Fatal("no conflict markers left")
	}
	lock := filepath.Join(b.Dir, ".git", "index.lock")
	write(t, b.Dir, ".git/index.lock", "")
	old := time.Now().Add(-time.Minute)
	os.Chtimes(lock, old, old)

	res := sync1(t, b, remote)
	if len(res.Recovered) != 2 {
		t.Fatalf("recovered %q, want the lock and the merge", res.Recovered)
	}
	if len(res.Conflicts) != 1 {
		t.Fatalf("conflicts %+v, want 1", res.Conflicts)
	}
	mine := read(t, b.Dir, "notebook/reference/contacts.md")
	if strings.Contains(mine, "<<<<<<<") || !strings.Contains(mine, "Initech") {
		t.Fatalf("b's page after recovery:\n%s", mine)
	}
	mustContain(t, read(t, b.Dir, res.Conflicts[0].Sibling), "Globex")
	sync1(t, a, remote)
	sameTrees(t, a, b)
}

// A process killed between writing the merge and moving the work tree
// (simulated: the work tree half-updated to theirs, HEAD not moved)
// recovers on the next sync without loss.
func TestHalfAppliedMergeRecovers(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/x.md": "# X\n- one\n"})
	sync1(t, a, remote)
	b := newHome(t, "b", nil)
	sync1(t, b, remote)
	appendTo(t, a.Dir, "notebook/x.md", "- from a\n")
	write(t, a.Dir, "notebook/y.md", "# Y\n")
	a.CommitAll(context.Background(), "a")
	sync1(t, a, remote)
	appendTo(t, b.Dir, "notebook/z.md", "# Z\n")
	b.CommitAll(context.Background(), "b")
	// Half of a's change reached b's disk, HEAD did not move.
	write(t, b.Dir, "notebook/y.md", "# Y\n")
	sync1(t, b, remote)
	sync1(t, a, remote)
	sameTrees(t, a, b)
	mustContain(t, read(t, b.Dir, "notebook/x.md"), "from a")
}

// A remote whose history was rewritten (force-pushed) is refused, with
// nothing merged, pushed or lost; the rewritten history is kept.
func TestRewrittenRemoteRefused(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/x.md": "# X\n- one\n"})
	sync1(t, a, remote)
	b := newHome(t, "b", nil)
	sync1(t, b, remote)
	appendTo(t, a.Dir, "notebook/x.md", "- two\n")
	a.CommitAll(context.Background(), "a")
	sync1(t, a, remote)
	sync1(t, b, remote)
	// Someone rewrites the remote: a new root commit, force-pushed.
	ctx := context.Background()
	other := newHome(t, "other", map[string]string{"notebook/x.md": "# X\nrewritten\n"})
	if _, err := other.Git(ctx, "push", "-q", "-f", remote, "HEAD:refs/heads/main"); err != nil {
		t.Fatal(err)
	}
	appendTo(t, b.Dir, "notebook/x.md", "- three (b)\n")
	b.CommitAll(ctx, "b")
	before, _ := b.g().Rev(ctx, "HEAD")
	_, err := b.Sync(ctx, SyncOptions{Remote: remote})
	if !errors.Is(err, ErrRewritten) {
		t.Fatalf("got %v, want ErrRewritten", err)
	}
	after, _ := b.g().Rev(ctx, "HEAD")
	if before != after {
		t.Fatal("HEAD moved")
	}
	mustContain(t, read(t, b.Dir, "notebook/x.md"), "- one", "- two", "- three (b)")
	st := b.ReadState()
	if !st.Rewritten || st.Failures != 1 {
		t.Fatalf("state %+v, want rewritten and one failure", st)
	}
	out, _ := b.Git(ctx, "for-each-ref", "refs/memhost/rewritten/")
	if strings.TrimSpace(out) == "" {
		t.Fatal("the rewritten history was not kept")
	}
	tip, _ := other.g().Rev(ctx, "HEAD")
	remoteTip, _ := (&Repo{Dir: remote}).Git(ctx, "rev-parse", "refs/heads/main")
	if strings.TrimSpace(remoteTip) != tip {
		t.Fatal("the remote was changed by the refused sync")
	}
}

// A push that cannot reach the remote fails with the reason, counts a
// failure (the backoff grows), and local commits stand.
func TestUnreachableRemote(t *testing.T) {
	t.Parallel()
	a := newHome(t, "a", map[string]string{"notebook/x.md": "# X\n"})
	missing := filepath.Join(t.TempDir(), "gone.git")
	for i := 1; i <= 3; i++ {
		_, err := a.Sync(context.Background(), SyncOptions{Remote: missing})
		if err == nil || !strings.Contains(err.Error(), missing) {
			t.Fatalf("got %v, want an error naming %s", err, missing)
		}
		if st := a.ReadState(); st.Failures != i || st.LastError == "" {
			t.Fatalf("state %+v after %d failures", st, i)
		}
	}
	if got, want := a.ReadState().Backoff(time.Second), 4*time.Second; got != want {
		t.Fatalf("backoff %v, want %v", got, want)
	}
	appendTo(t, a.Dir, "notebook/x.md", "- still works\n")
	if ok, err := a.CommitAll(context.Background(), "local"); err != nil || !ok {
		t.Fatalf("commit while offline: %v %v", ok, err)
	}
	remote := newBare(t)
	res := sync1(t, a, remote)
	if !res.Pushed || a.ReadState().Failures != 0 {
		t.Fatalf("got %+v, state %+v", res, a.ReadState())
	}
}

// A git killed in the middle of moving refs/memhost/seen (memhost killed
// mid-sync) leaves its lock file; the next sync takes a stale one for
// the dead git's and merges (it failed with "cannot lock ref
// 'refs/memhost/seen': ... File exists").
func TestStaleSeenRefLockRecovers(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/x.md": "# X\n- one\n"})
	sync1(t, a, remote)
	b := newHome(t, "b", nil)
	sync1(t, b, remote)
	appendTo(t, a.Dir, "notebook/x.md", "- from a\n")
	a.CommitAll(context.Background(), "a")
	sync1(t, a, remote)
	write(t, b.Dir, ".git/refs/memhost/seen.lock", "")
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(b.Dir, ".git/refs/memhost/seen.lock"), old, old); err != nil {
		t.Fatal(err)
	}
	sync1(t, b, remote)
	mustContain(t, read(t, b.Dir, "notebook/x.md"), "- from a")
	sameTrees(t, a, b)
}
