package federation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/memhost/memhost/host/federation/filemerge"
)

// The remote is not trusted: these tests play an attacker with push
// access, who writes commits into the bare repository with git's
// plumbing (trees no memhost and no git porcelain would make).

// gitIn runs git in dir (a bare repository too) with stdin, failing the
// test on error.
func gitIn(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=mallory", "GIT_AUTHOR_EMAIL=m@evil", "GIT_COMMITTER_NAME=mallory", "GIT_COMMITTER_EMAIL=m@evil")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("git %v: %v %s", args, err, ee.Stderr)
		}
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// planted is one tree entry the attacker writes: the names of its path
// (any bytes, "..", a newline), its mode ("" removes it) and content (a
// symlink's target; a gitlink's commit id).
type planted struct {
	names   []string
	mode    string
	content string
}

func plant(names, mode, content string) planted {
	return planted{strings.Split(names, "/"), mode, content}
}

// setEntry returns tree with the entry at names set (or removed).
func setEntry(t testing.TB, repo, tree string, names []string, mode, oid string) string {
	t.Helper()
	var lines []string
	sub := emptyTree
	for _, l := range strings.Split(gitIn(t, repo, "", "ls-tree", "-z", tree), "\x00") {
		if l == "" {
			continue
		}
		meta, name, _ := strings.Cut(l, "\t")
		if name == names[0] {
			if f := strings.Fields(meta); f[1] == "tree" {
				sub = f[2]
			}
			continue
		}
		lines = append(lines, l)
	}
	switch {
	case len(names) > 1:
		if st := setEntry(t, repo, sub, names[1:], mode, oid); st != emptyTree {
			lines = append(lines, "040000 tree "+st+"\t"+names[0])
		}
	case mode == "160000":
		lines = append(lines, mode+" commit "+oid+"\t"+names[0])
	case mode != "":
		lines = append(lines, mode+" blob "+oid+"\t"+names[0])
	}
	if len(lines) == 0 {
		return emptyTree
	}
	return gitIn(t, repo, strings.Join(lines, "\x00")+"\x00", "mktree", "-z", "--missing")
}

// attack commits entries on top of the remote's main branch and moves
// the branch there, returning the commit.
func attack(t testing.TB, remote, msg string, entries ...planted) string {
	t.Helper()
	tip := gitIn(t, remote, "", "rev-parse", "refs/heads/main")
	tree := gitIn(t, remote, "", "rev-parse", tip+"^{tree}")
	for _, e := range entries {
		oid := e.content
		if e.mode != "160000" && e.mode != "" {
			oid = gitIn(t, remote, e.content, "hash-object", "-w", "--stdin")
		}
		tree = setEntry(t, remote, tree, e.names, e.mode, oid)
	}
	c := gitIn(t, remote, "", "commit-tree", tree, "-p", tip, "-m", msg)
	gitIn(t, remote, "", "update-ref", "refs/heads/main", c, tip)
	return c
}

// snapshot is every file of the home outside .git: its type, mode and
// content (a symlink's target).
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			m[rel] = "symlink " + target
		case fi.IsDir():
			m[rel] = "dir"
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = fmt.Sprintf("%v %s", fi.Mode(), data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sameSnapshot(t testing.TB, got, want map[string]string) {
	t.Helper()
	var diff []string
	for p, w := range want {
		if g, ok := got[p]; !ok {
			diff = append(diff, "gone: "+p)
		} else if g != w {
			diff = append(diff, fmt.Sprintf("changed: %s: %q, was %q", p, g, w))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diff = append(diff, "new: "+p)
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Fatalf("the refused sync changed the home:\n%s", strings.Join(diff, "\n"))
	}
}

// remoteFiles lists the files of the remote's main branch.
func remoteFiles(t testing.TB, remote string) []string {
	t.Helper()
	out := gitIn(t, remote, "", "ls-tree", "-r", "-z", "--name-only", "refs/heads/main")
	return strings.Split(strings.TrimRight(out, "\x00"), "\x00")
}

const plugin = "#!/bin/sh\necho pwned > /tmp/memhost-pwned\n"

// TestRemoteChangesOutsideSharedRefused: a remote commit that plants a
// plugin, an executable page, a symlink, a submodule, a file outside the
// notebook and the transcripts or a path with "..", "." or ".git" in it
// is refused before anything merges: the sync fails naming the commit,
// the path and the reason, the home's files are exactly as before, the
// state says refused (health fails on it), and local edits go on being
// committed, at the next sync too.
func TestRemoteChangesOutsideSharedRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		entry planted
		shown string // the path as the error shows it
		why   string // in the error
	}{
		{"a plugin binary", plant("plugins/memhost-embeddings-local", "100755", plugin), "plugins/memhost-embeddings-local", "outside the shared folders notebook/ and sessions/"},
		{"a plugin as a regular file", plant("plugins/memhost-embeddings-local", "100644", plugin), "plugins/memhost-embeddings-local", "outside the shared folders"},
		{"an executable page", plant("notebook/knowledge/run.md", "100755", plugin), "notebook/knowledge/run.md", "an executable file, mode 100755"},
		{"an executable transcript", plant("sessions/s2.jsonl", "100755", "{}\n"), "sessions/s2.jsonl", "mode 100755"},
		{"a page made executable", plant("notebook/reference/contacts.md", "100755", contacts), "notebook/reference/contacts.md", "mode 100755"},
		{"a symlink page to /etc/passwd", plant("notebook/reference/passwd.md", "120000", "/etc/passwd"), "notebook/reference/passwd.md", "a symlink, mode 120000"},
		{"a symlink page to the config", plant("notebook/reference/cfg.md", "120000", "../../config.yaml"), "notebook/reference/cfg.md", "a symlink"},
		{"a page replaced by a symlink", plant("notebook/reference/contacts.md", "120000", "../../brain/serve.token"), "notebook/reference/contacts.md", "a symlink"},
		{"a symlink transcript", plant("sessions/s1.jsonl", "120000", "/etc/passwd"), "sessions/s1.jsonl", "a symlink"},
		{"a submodule", plant("notebook/sub.md", "160000", "1234567890abcdef1234567890abcdef12345678"), "notebook/sub.md", "a submodule, mode 160000"},
		{"a '..' folder", plant("notebook/../evil.md", "100644", "# evil\n"), "notebook/..", `a ".." in the path`},
		{"a '..' file", plant("notebook/..", "100644", "x\n"), "notebook/..", `a ".." in the path`},
		{"a '.' folder", plant("notebook/./x.md", "100644", "x\n"), "notebook/.", `a "." in the path`},
		{"a .git folder", plant("notebook/.Git/hooks/post-checkout.md", "100644", plugin), "notebook/.Git", "a .git folder"},
		{"a backslash", plant(`notebook/..\..\x.md`, "100644", "x\n"), `notebook/..\..\x.md`, "a backslash"},
		{"a newline", plant("notebook/a\nb.md", "100644", "x\n"), `"notebook/a\nb.md"`, "a control character"},
		{"the config", plant("config.yaml", "100644", "federation:\n  remote: /tmp/evil\n"), "config.yaml", "outside the shared folders"},
		{"the index", plant("brain/memory.db", "100644", "x"), "brain/memory.db", "outside the shared folders"},
		{"a hidden folder in the notebook", plant("notebook/.obsidian/plugins/x/main.js", "100644", "x"), "notebook/.obsidian/plugins/x/main.js", "a hidden name"},
		{"not a page", plant("notebook/run.sh", "100644", plugin), "notebook/run.sh", "not a markdown page"},
		{"a folder in sessions", plant("sessions/sub/x.jsonl", "100644", "{}\n"), "sessions/sub/x.jsonl", "a folder in sessions/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			remote := newBare(t)
			a := newHome(t, "a", map[string]string{"notebook/reference/contacts.md": contacts, "sessions/s1.jsonl": `{"id":"1"}` + "\n"})
			sync1(t, a, remote)
			bad := attack(t, remote, "innocent", tc.entry)
			before := snapshot(t, a.Dir)
			head, _ := a.g().Rev(ctx, "HEAD")

			_, err := a.Sync(ctx, SyncOptions{Remote: remote})
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("sync: %v, want ErrRefused", err)
			}
			msg := err.Error()
			for _, want := range []string{"remote commit " + bad[:12], " " + tc.shown + " ", tc.why, ": refused"} {
				if !strings.Contains(msg, want) {
					t.Fatalf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Fatalf("error is not one line: %q", msg)
			}
			sameSnapshot(t, snapshot(t, a.Dir), before)
			if now, _ := a.g().Rev(ctx, "HEAD"); now != head {
				t.Fatalf("HEAD moved from %s to %s", head, now)
			}
			if st := a.ReadState(); !st.Refused || st.Failures != 1 || st.LastError != msg {
				t.Fatalf("state %+v, want refused, one failure, the error", st)
			}
			// Local work goes on being committed, by itself and by the
			// next sync, which is refused again.
			appendTo(t, a.Dir, "notebook/reference/contacts.md", "- local edit\n")
			if ok, err := a.CommitAll(ctx, "local"); err != nil || !ok {
				t.Fatalf("a local edit after the refusal: %v %v", ok, err)
			}
			appendTo(t, a.Dir, "notebook/reference/contacts.md", "- another\n")
			if _, err := a.Sync(ctx, SyncOptions{Remote: remote}); !errors.Is(err, ErrRefused) {
				t.Fatalf("second sync: %v, want ErrRefused", err)
			}
			if st := gitOut(t, a, "status", "--porcelain"); st != "" {
				t.Fatalf("left uncommitted:\n%s", st)
			}
			mustContain(t, gitOut(t, a, "show", "HEAD:notebook/reference/contacts.md"), "- local edit", "- another")
			if st := a.ReadState(); !st.Refused || st.Failures != 2 {
				t.Fatalf("state %+v, want refused twice", st)
			}
			if _, err := os.Lstat(filepath.Join(a.Dir, "plugins/memhost-embeddings-local")); !os.IsNotExist(err) {
				t.Fatalf("the plugin reached the home: %v", err)
			}
		})
	}
}

// TestRefusedRemoteRepaired: a later remote commit that takes the refused
// change back (nothing needs a force push) lets syncing go on: what else
// the remote changed meanwhile comes in, local work goes out, and the
// refused file never reached the disk.
func TestRefusedRemoteRepaired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/reference/contacts.md": contacts})
	sync1(t, a, remote)
	attack(t, remote, "plugin", plant("plugins/memhost-embeddings-local", "100755", plugin))
	attack(t, remote, "a page", plant("notebook/knowledge/fine.md", "100644", "# Fine\n"))
	if _, err := a.Sync(ctx, SyncOptions{Remote: remote}); !errors.Is(err, ErrRefused) {
		t.Fatalf("sync: %v, want ErrRefused", err)
	}
	appendTo(t, a.Dir, "notebook/reference/contacts.md", "- local\n")
	attack(t, remote, "remove the plugin", plant("plugins/memhost-embeddings-local", "", ""))
	res := sync1(t, a, remote)
	if !res.Pushed || res.Merged != "merge" {
		t.Fatalf("got %+v, want merged and pushed", res)
	}
	mustContain(t, read(t, a.Dir, "notebook/knowledge/fine.md"), "# Fine")
	if st := a.ReadState(); st.Refused || st.Failures != 0 {
		t.Fatalf("state %+v after the repair", st)
	}
	if _, err := os.Lstat(filepath.Join(a.Dir, "plugins/memhost-embeddings-local")); !os.IsNotExist(err) {
		t.Fatalf("the plugin reached the home: %v", err)
	}
	mustContain(t, gitIn(t, remote, "", "show", "main:notebook/reference/contacts.md"), "- local")
}

// TestGitignoreDoesNotWidenCommits: a remote that empties .gitignore
// (no /brain/, /config.yaml, *.token) is merged, .gitignore being shared,
// but the next commits still hold shared files only: the token, the
// settings, the index, plugins and models never reach the remote.
func TestGitignoreDoesNotWidenCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/reference/contacts.md": contacts})
	sync1(t, a, remote)
	attack(t, remote, "tidy up", plant(".gitignore", "100644", "# nothing to ignore\n"))
	sync1(t, a, remote)
	if got := read(t, a.Dir, ".gitignore"); got != "# nothing to ignore\n" {
		t.Fatalf(".gitignore is %q", got)
	}
	secrets := map[string]string{
		"brain/serve.token": "secret-token", "brain/memory.db": "index", "brain/serve.json": "{}",
		"config.yaml": "memory: {}\n", "cache/embeddings.db": "x", "models/m.gguf": "x",
		"plugins/memhost-embeddings-mine": plugin, "health/report.json": "{}", "top.token": "t",
		"notebook/.obsidian/app.json": "{}", "notebook/notes.txt": "x", "sessions/sub/x.jsonl": "{}\n",
	}
	for p, text := range secrets {
		write(t, a.Dir, p, text)
	}
	appendTo(t, a.Dir, "notebook/reference/contacts.md", "- local\n")
	write(t, a.Dir, "notebook/knowledge/new.md", "# New\n")
	if err := os.Chmod(filepath.Join(a.Dir, "notebook/knowledge/new.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../brain/serve.token", filepath.Join(a.Dir, "notebook/knowledge/token.md")); err != nil {
		t.Fatal(err)
	}
	// Staged by hand, too: still not committed by memhost.
	gitOut(t, a, "add", "-f", "brain/serve.token")
	if _, err := a.CommitAll(ctx, "local"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commit(ctx, "named", "config.yaml", "brain/serve.token", "notebook/knowledge/token.md"); err != nil {
		t.Fatal(err)
	}
	sync1(t, a, remote)
	files := remoteFiles(t, remote)
	for _, p := range files {
		if !a.Shares(p) {
			t.Errorf("%s reached the remote", p)
		}
	}
	if want := []string{".gitignore", "notebook/knowledge/new.md", "notebook/reference/contacts.md"}; fmt.Sprint(files) != fmt.Sprint(want) {
		t.Fatalf("the remote holds %v, want %v", files, want)
	}
	if mode := strings.Fields(gitIn(t, remote, "", "ls-tree", "main", "notebook/knowledge/new.md"))[0]; mode != "100644" {
		t.Fatalf("new.md committed with mode %s", mode)
	}
	mustContain(t, gitIn(t, remote, "", "show", "main:notebook/reference/contacts.md"), "- local")
}

// TestDotDotTreeRefusedBeforeMerge: tree entries named ".." on a remote
// that diverged from the home (a real merge, not a fast-forward) are
// refused before git merge-tree sees them, with the commit and the path
// named; local work is committed, and once the remote takes them back
// both sides' work syncs.
func TestDotDotTreeRefusedBeforeMerge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/reference/contacts.md": contacts})
	sync1(t, a, remote)
	bad := attack(t, remote, "dots", plant("notebook/../../evil.md", "100644", "# evil\n"), plant("notebook/knowledge/theirs.md", "100644", "# Theirs\n"))
	appendTo(t, a.Dir, "notebook/reference/contacts.md", "- local\n")
	before := snapshot(t, a.Dir)
	for i := 1; i <= 2; i++ {
		_, err := a.Sync(ctx, SyncOptions{Remote: remote})
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "remote commit "+bad[:12]+" adds notebook/.. (") {
			t.Fatalf("sync %d: %v, want ErrRefused naming %s and notebook/..", i, err, bad[:12])
		}
	}
	after := snapshot(t, a.Dir)
	sameSnapshot(t, after, before)
	mustContain(t, gitOut(t, a, "show", "HEAD:notebook/reference/contacts.md"), "- local")
	attack(t, remote, "undo", plant("notebook/..", "", ""))
	res := sync1(t, a, remote)
	if res.Merged != "merge" || !res.Pushed {
		t.Fatalf("after the repair: %+v", res)
	}
	mustContain(t, read(t, a.Dir, "notebook/knowledge/theirs.md"), "# Theirs")
	mustContain(t, gitIn(t, remote, "", "show", "main:notebook/reference/contacts.md"), "- local")
}

// siblings lists the files beside p in the home: what a merge may have
// put there (p.md~ID, p.conflict-ID.md).
func siblings(t testing.TB, dir, p string) []string {
	t.Helper()
	base := strings.TrimSuffix(filepath.Base(p), ".md")
	entries, err := os.ReadDir(filepath.Join(dir, filepath.Dir(p)))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), base) && e.Name() != filepath.Base(p) {
			out = append(out, filepath.ToSlash(filepath.Join(filepath.Dir(p), e.Name())))
		}
	}
	return out
}

// TestRemoteReplacingEditedFile: a page or transcript the remote replaces
// (by a symlink, a folder) or deletes while it has local edits never
// hides the local version: a symlink is refused and the edit stays where
// it is; a deletion keeps the edited page and reports a conflict until
// the page changes; a folder in its place keeps the local page in a
// sibling page (indexed like any page) and reports the conflict. Nothing
// is left under a name the indexer skips (page.md~ID).
func TestRemoteReplacingEditedFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const page = "notebook/reference/car.md"
	const car = "# Car\n- colour: red\n"
	setup := func(t *testing.T) (*Repo, string) {
		remote := newBare(t)
		a := newHome(t, "a", map[string]string{page: car, "sessions/s1.jsonl": `{"id":"1"}` + "\n"})
		sync1(t, a, remote)
		appendTo(t, a.Dir, page, "- doors: 4 (local)\n")
		appendTo(t, a.Dir, "sessions/s1.jsonl", `{"id":"2","content":"local turn"}`+"\n")
		return a, remote
	}

	t.Run("by a symlink", func(t *testing.T) {
		for _, p := range []string{page, "sessions/s1.jsonl"} {
			a, remote := setup(t)
			attack(t, remote, "link", plant(p, "120000", "/etc/passwd"))
			if _, err := a.Sync(ctx, SyncOptions{Remote: remote}); !errors.Is(err, ErrRefused) {
				t.Fatalf("%s: sync %v, want ErrRefused", p, err)
			}
			if fi, err := os.Lstat(filepath.Join(a.Dir, p)); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("%s is no longer a regular file: %v", p, err)
			}
			mustContain(t, read(t, a.Dir, page), "- doors: 4 (local)")
			mustContain(t, read(t, a.Dir, "sessions/s1.jsonl"), "local turn")
			mustContain(t, gitOut(t, a, "show", "HEAD:"+page), "- doors: 4 (local)")
			if s := siblings(t, a.Dir, p); len(s) != 0 {
				t.Fatalf("files beside %s: %v", p, s)
			}
		}
	})

	t.Run("deleted", func(t *testing.T) {
		a, remote := setup(t)
		attack(t, remote, "rm", plant(page, "", ""))
		res := sync1(t, a, remote)
		mustContain(t, read(t, a.Dir, page), "- doors: 4 (local)")
		if len(res.Conflicts) != 1 || res.Conflicts[0].Path != page || res.Conflicts[0].Sibling != "" || !strings.Contains(res.Conflicts[0].Reason, "deleted on the other side") {
			t.Fatalf("conflicts %+v, want one on %s, deleted there", res.Conflicts, page)
		}
		if st := a.ReadState(); len(st.Conflicts) != 1 {
			t.Fatalf("state conflicts %+v, want 1", st.Conflicts)
		}
		mustContain(t, gitIn(t, remote, "", "show", "main:"+page), "- doors: 4 (local)")
		// Settled once the page changes (or goes).
		appendTo(t, a.Dir, page, "- kept on purpose\n")
		if st := a.ReadState(); len(st.Conflicts) != 0 {
			t.Fatalf("state conflicts %+v after the page changed", st.Conflicts)
		}
	})

	t.Run("by a folder", func(t *testing.T) {
		a, remote := setup(t)
		attack(t, remote, "folder", plant(page, "", ""), plant(page+"/inside.md", "100644", "# Inside\n"))
		res := sync1(t, a, remote)
		mustContain(t, read(t, a.Dir, page+"/inside.md"), "# Inside")
		if len(res.Conflicts) != 1 || res.Conflicts[0].Path != page || !filemerge.IsConflictSibling(res.Conflicts[0].Sibling) {
			t.Fatalf("conflicts %+v, want one on %s with a sibling page", res.Conflicts, page)
		}
		sib := res.Conflicts[0].Sibling
		if !a.Shares(sib) {
			t.Fatalf("the sibling %s is not a shared page", sib)
		}
		mustContain(t, read(t, a.Dir, sib), "- doors: 4 (local)")
		for _, s := range siblings(t, a.Dir, page) {
			if strings.Contains(s, "~") {
				t.Fatalf("local version left as %s", s)
			}
		}
		if st := a.ReadState(); len(st.Conflicts) != 1 {
			t.Fatalf("state conflicts %+v, want 1", st.Conflicts)
		}
		mustContain(t, gitIn(t, remote, "", "show", "main:"+sib), "- doors: 4 (local)")
	})
}
