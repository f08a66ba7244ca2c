package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost/internal/fsx"
)

// testRepo is a repository made by git init in a temporary folder, with
// its home opened; extra config lines (key value) go into .git/config.
func testRepo(t *testing.T, author string, config ...string) (*Repo, *fsx.Dir) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &Repo{Dir: t.TempDir(), Author: author}
	mustGit(t, r, "init", "-q", "-b", "main")
	for i := 0; i+1 < len(config); i += 2 {
		mustGit(t, r, "config", config[i], config[i+1])
	}
	home, err := r.OpenHome()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { home.Close() })
	return r, home
}

func mustGit(t *testing.T, r *Repo, args ...string) string {
	t.Helper()
	out, err := r.Git(context.Background(), args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(out)
}

func writeFile(t *testing.T, dir, p, content string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkGit holds the repository to what git accepts: git fsck --strict
// finds nothing, git status prints status (porcelain), and, with ident,
// HEAD's author and committer and the branch's last reflog entry are
// "name <email>" as given.
func checkGit(t *testing.T, r *Repo, step, status, ident string) {
	t.Helper()
	cmd := exec.Command("git", "-C", r.Dir, "fsck", "--strict", "--no-progress", "--no-dangling")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
		t.Fatalf("%s: git fsck --strict: %v\n%s", step, err, out)
	}
	got, err := r.Git(context.Background(), "status", "--porcelain")
	if err != nil {
		t.Fatalf("%s: git status: %v", step, err)
	}
	if got = strings.TrimRight(got, "\n"); got != status {
		t.Fatalf("%s: git status --porcelain:\n%s\nwant:\n%s", step, got, status)
	}
	if ident == "" {
		return
	}
	for _, f := range []string{"%an <%ae>", "%cn <%ce>"} {
		if got := mustGit(t, r, "log", "-1", "--format="+f); got != ident {
			t.Fatalf("%s: HEAD's %s is %q, want %q", step, f, got, ident)
		}
	}
	if got := mustGit(t, r, "log", "-g", "-1", "--format=%gn <%ge>", "main"); got != ident {
		t.Fatalf("%s: the reflog's identity is %q, want %q", step, got, ident)
	}
}

// TestFastPathIdents: every kind of commit the fast path makes (and the
// first commit, which git makes) gives objects git fsck --strict accepts
// and the author as git writes it, whatever the configured author holds:
// the characters that delimit an ident line (< > and newline) dropped,
// crud trimmed from both ends, an empty name the default one.
func TestFastPathIdents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		author string
		want   string
	}{
		{"Bob> <bob@test>", "Bob <bob@test>"},
		{"<x> <x@test>", "x <x@test>"},
		{"a\nb <ab@test>", "ab <ab@test>"},
		{"<empty@test>", "memhost <empty@test>"},
		{"<> <nothing@test>", "memhost <nothing@test>"},
		{"Zoë Ñandú 李雷 <zoë@test>", "Zoë Ñandú 李雷 <zoë@test>"},
		{"Eve <eve@te>st>", "Eve <eve@test>"},
		{`"Quoted, Name;" <'q@test'>`, "Quoted, Name <q@test>"},
		{"Nobody", "Nobody <>"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r, home := testRepo(t, tt.author)
			for _, p := range []string{"notebook/a.md", "notebook/b.md", "notebook/sub/c.md"} {
				writeFile(t, r.Dir, p, "# "+p+"\n")
			}
			if ok, err := r.Commit(ctx, home, "first", []string{"notebook/a.md", "notebook/b.md", "notebook/sub/c.md"}, nil, false); err != nil || !ok {
				t.Fatalf("first commit: %v, %v", ok, err)
			}
			checkGit(t, r, "first commit", "", tt.want)

			fast := func(step string, paths ...string) {
				t.Helper()
				id, err := r.FastCommit(home, step, paths, time.Now())
				if err != nil || id == "" {
					t.Fatalf("%s: fast commit %q, %v", step, id, err)
				}
				checkGit(t, r, step, "", tt.want)
			}
			writeFile(t, r.Dir, "notebook/a.md", "# a, changed\n")
			fast("a change", "notebook/a.md")
			writeFile(t, r.Dir, "notebook/new.md", "# new\n")
			fast("a new file", "notebook/new.md")

			// A peer changes a file, removes one and moves one into a new
			// folder; the fast-forward brings all three here.
			peer := &Repo{Dir: t.TempDir(), Author: "peer <peer@test>"}
			mustGit(t, peer, "clone", "-q", r.Dir, ".")
			writeFile(t, peer.Dir, "notebook/b.md", "# b, theirs\n")
			mustGit(t, peer, "rm", "-q", "notebook/sub/c.md")
			if err := os.Mkdir(filepath.Join(peer.Dir, "notebook", "moved"), 0o755); err != nil {
				t.Fatal(err)
			}
			mustGit(t, peer, "mv", "notebook/new.md", "notebook/moved/new.md")
			mustGit(t, peer, "commit", "-q", "-am", "theirs")
			head := mustGit(t, r, "rev-parse", "HEAD")
			mustGit(t, r, "fetch", "-q", peer.Dir, "main")
			target := mustGit(t, r, "rev-parse", "FETCH_HEAD")
			if err := r.FastForward(ctx, head, target, time.Now()); err != nil {
				t.Fatalf("fast-forward: %v", err)
			}
			checkGit(t, r, "fast-forward", "", "")
			if got := mustGit(t, r, "log", "-g", "-1", "--format=%gn <%ge>", "main"); got != tt.want {
				t.Fatalf("fast-forward: the reflog's identity is %q, want %q", got, tt.want)
			}
			if got := mustGit(t, r, "ls-files"); got != "notebook/a.md\nnotebook/b.md\nnotebook/moved/new.md" {
				t.Fatalf("fast-forward: the index holds\n%s", got)
			}
			writeFile(t, r.Dir, "notebook/moved/new.md", "# new, moved and changed\n")
			fast("a change after the fast-forward", "notebook/moved/new.md")
		})
	}
}

// TestAuthorIsGitsIdent: the name and email memhost writes are what git
// itself makes of them (git var GIT_AUTHOR_IDENT, ident.c). No case ends
// in a dot: git before 2.42 trimmed dots as crud, later ones keep them,
// as memhost does.
func TestAuthorIsGitsIdent(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, author := range []string{
		"Bob> <bob@test>", "<x> <x@test>", "a\nb <ab@test>", "Zoë <zoë@test>", " \t Tab\tInside ,; <\ttab@test >",
		`"Quoted, Name;" <'q'@test>`, "Eve <eve@te>st>", "Nobody",
	} {
		r := &Repo{Author: author}
		name, email := r.author()
		raw := strings.TrimSpace(author)
		rawName, rawEmail := raw, ""
		if i := strings.LastIndexByte(raw, '<'); i >= 0 && strings.HasSuffix(raw, ">") {
			rawName, rawEmail = raw[:i], raw[i+1:len(raw)-1]
		}
		cmd := exec.Command("git", "var", "GIT_AUTHOR_IDENT")
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME="+rawName, "GIT_AUTHOR_EMAIL="+rawEmail, "GIT_AUTHOR_DATE=@0 +0000")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git var for %q: %v", author, err)
		}
		if got, want := name+" <"+email+"> 0 +0000", strings.TrimSpace(string(out)); got != want {
			t.Errorf("Author %q: memhost writes %q, git %q", author, got, want)
		}
	}
}

// TestFastPathSmudgesRacyEntries: an entry whose mtime is not older than
// the index (racily clean) may hide a change of the same size made in the
// same tick; git re-reads such files, and before it writes a newer index
// it sets their recorded size to 0 when they changed, since the newer
// index would make the stale stat data look trustworthy. The fast paths
// write indexes too, and must do the same. ctime is not trusted here, as
// with core.trustctime=false: it is the one stat field a test cannot set.
func TestFastPathSmudgesRacyEntries(t *testing.T) {
	t.Parallel()
	// The tick the file and the index were written in: any time will do,
	// as long as both have it.
	tick := time.Unix(1_700_000_000, 500_000_000)
	setTimes := func(t *testing.T, paths ...string) {
		t.Helper()
		for _, p := range paths {
			if err := os.Chtimes(p, tick, tick); err != nil {
				t.Fatal(err)
			}
		}
	}
	// racy commits a.md as "two\n" with the tick as its mtime, gives the
	// index the same mtime, then rewrites a.md with content of the same
	// size and mtime: its stat data is as recorded, its content is not.
	racy := func(t *testing.T) (*Repo, *fsx.Dir) {
		r, home := testRepo(t, "t <t@test>", "core.trustctime", "false")
		writeFile(t, r.Dir, "notebook/a.md", "one\n")
		writeFile(t, r.Dir, "notebook/b.md", "b\n")
		if _, err := r.Commit(context.Background(), home, "first", []string{"notebook/a.md", "notebook/b.md"}, nil, false); err != nil {
			t.Fatal(err)
		}
		a := filepath.Join(r.Dir, "notebook", "a.md")
		writeFile(t, r.Dir, "notebook/a.md", "two\n")
		setTimes(t, a)
		if id, err := r.FastCommit(home, "two", []string{"notebook/a.md"}, time.Now()); err != nil || id == "" {
			t.Fatalf("fast commit: %q, %v", id, err)
		}
		setTimes(t, filepath.Join(r.GitDir(), "index"))
		writeFile(t, r.Dir, "notebook/a.md", "TWO\n")
		setTimes(t, a)
		return r, home
	}
	t.Run("git reads the index the fast path wrote", func(t *testing.T) {
		t.Parallel()
		r, _ := racy(t)
		checkGit(t, r, "racy entry", " M notebook/a.md", "")
	})
	t.Run("a fast commit of another file", func(t *testing.T) {
		t.Parallel()
		r, home := racy(t)
		writeFile(t, r.Dir, "notebook/b.md", "b, changed\n")
		if id, err := r.FastCommit(home, "b", []string{"notebook/b.md"}, time.Now()); err != nil || id == "" {
			t.Fatalf("fast commit: %q, %v", id, err)
		}
		checkGit(t, r, "after a fast commit", " M notebook/a.md", "")
	})
	t.Run("a fast commit of the file itself, unchanged", func(t *testing.T) {
		t.Parallel()
		r, home := racy(t)
		// The commit takes a.md's content now: nothing racy is left.
		if id, err := r.FastCommit(home, "TWO", []string{"notebook/a.md"}, time.Now()); err != nil || id == "" {
			t.Fatalf("fast commit: %q, %v", id, err)
		}
		checkGit(t, r, "after a fast commit", "", "")
	})
	t.Run("a fast-forward", func(t *testing.T) {
		t.Parallel()
		r, _ := racy(t)
		peer := &Repo{Dir: t.TempDir(), Author: "peer <peer@test>"}
		mustGit(t, peer, "clone", "-q", r.Dir, ".")
		writeFile(t, peer.Dir, "notebook/b.md", "b, theirs\n")
		mustGit(t, peer, "commit", "-q", "-am", "theirs")
		head := mustGit(t, r, "rev-parse", "HEAD")
		mustGit(t, r, "fetch", "-q", peer.Dir, "main")
		if err := r.FastForward(context.Background(), head, mustGit(t, r, "rev-parse", "FETCH_HEAD"), time.Now()); err != nil {
			t.Fatalf("fast-forward: %v", err)
		}
		checkGit(t, r, "after a fast-forward", " M notebook/a.md", "")
	})
}
