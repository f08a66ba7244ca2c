package federation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memhost/memhost/host/federation/gitrepo"
	"github.com/memhost/memhost/internal/fsx"
)

// The work tree is read without following a symlink and without waiting
// on a FIFO: these tests put both at tracked paths and check that nothing
// outside the home is ever committed or pushed.

// secret is what the files outside the home hold: no object of the
// remote's (or of the home's history) may contain it.
const secret = "OUTSIDE-SECRET"

// noSecret fails when any object of the bare repository remote, or any
// commit of the home's history, holds secret.
func noSecret(t *testing.T, a *Repo, remote string) {
	t.Helper()
	if all := gitIn(t, remote, "", "cat-file", "--batch-all-objects", "--batch"); strings.Contains(all, secret) {
		t.Fatalf("the remote holds the outside file's content")
	}
	if log := gitOut(t, a, "log", "-p", "--all"); strings.Contains(log, secret) {
		t.Fatalf("the home's history holds the outside file's content")
	}
}

// outsideFiles makes a folder outside the home holding files named like
// the home's, each holding secret.
func outsideFiles(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	write(t, out, "reference/contacts.md", "# Contacts\n"+secret+" page\n")
	write(t, out, "k.md", "# K\n"+secret+" linked page\n")
	write(t, out, "sessions/s1.jsonl", `{"id":"9","content":"`+secret+` turn"}`+"\n")
	return out
}

// TestSymlinksInTheWorkTreeNeverCommitted: a tracked page replaced by a
// symlink to a file outside the home, a notebook folder and sessions/
// replaced by symlinks to folders outside: commits (named paths, every
// change, sync; memhost's own commit and git's) record none of the
// outside content, the remote never receives it, and the tracked
// versions stay.
func TestSymlinksInTheWorkTreeNeverCommitted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, slow := range []bool{false, true} {
		name := "fast path"
		if slow {
			name = "git"
		}
		t.Run(name, func(t *testing.T) {
			remote := newBare(t)
			a := newHome(t, "a", map[string]string{
				"notebook/reference/contacts.md": contacts,
				"notebook/knowledge/k.md":        "# K\n",
				"sessions/s1.jsonl":              `{"id":"1"}` + "\n",
			})
			sync1(t, a, remote)
			if slow {
				// fastPathAllowed refuses a home with attributes.
				write(t, a.Dir, ".gitattributes", "")
			}
			out := outsideFiles(t)
			for link, target := range map[string]string{
				"notebook/reference":      filepath.Join(out, "reference"),
				"notebook/knowledge/k.md": filepath.Join(out, "k.md"),
				"sessions":                filepath.Join(out, "sessions"),
			} {
				full := filepath.Join(a.Dir, link)
				if err := os.RemoveAll(full); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, full); err != nil {
					t.Fatal(err)
				}
			}
			named := []string{"notebook/reference/contacts.md", "notebook/knowledge/k.md", "sessions/s1.jsonl", "notebook/reference/new.md"}
			write(t, out, "reference/new.md", "# New\n"+secret+"\n")
			if _, err := a.Commit(ctx, "named", named...); err != nil {
				t.Fatalf("commit: %v", err)
			}
			if _, err := a.CommitAll(ctx, "all"); err != nil {
				t.Fatalf("commit all: %v", err)
			}
			sync1(t, a, remote)
			noSecret(t, a, remote)
			if got := gitIn(t, remote, "", "show", "main:notebook/reference/contacts.md"); got != strings.TrimSpace(contacts) {
				t.Fatalf("the remote's contacts.md is %q", got)
			}
		})
	}
}

// TestSymlinkSwappedInDuringCommits: while commits run, a tracked page
// and a tracked folder are swapped again and again (RENAME_EXCHANGE) with
// symlinks to outside files; no commit ever holds the outside content.
// (A FIFO swapped in and out again and again is left out: git's own index
// refresh, which memhost's commit runs, lstats a file before it opens it,
// and a FIFO swapped in between blocks that git — under load, often
// enough to reach the test's deadline. A FIFO that stays is
// TestFIFOAtATrackedPath's.)
func TestSymlinkSwappedInDuringCommits(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{
		"notebook/reference/contacts.md": contacts,
		"notebook/knowledge/k.md":        "# K\n",
		"notebook/knowledge/f.md":        "# F\n",
	})
	sync1(t, a, remote)
	out := outsideFiles(t)
	swaps := [][2]string{
		{filepath.Join(a.Dir, "notebook/knowledge/k.md"), filepath.Join(out, "k.md")},
		{filepath.Join(a.Dir, "notebook/reference"), filepath.Join(out, "reference")},
	}
	var links []string
	for i, s := range swaps {
		link := filepath.Join(a.Dir, "notebook", ".swap"+string(rune('0'+i)))
		var err error
		if s[1] == "" {
			err = syscall.Mkfifo(link, 0o644)
		} else {
			err = os.Symlink(s[1], link)
		}
		if err != nil {
			t.Fatal(err)
		}
		links = append(links, link)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s := i % len(swaps)
			if err := unix.Renameat2(unix.AT_FDCWD, swaps[s][0], unix.AT_FDCWD, links[s], unix.RENAME_EXCHANGE); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	rounds := 150
	if testing.Short() {
		rounds = 30 // scripts/test-dates.sh's runs on other days: the race is the same
	}
	for i := 0; i < rounds; i++ {
		appendTo(t, a.Dir, "notebook/knowledge/other.md", "- line\n")
		// Errors are fine (the file changed while read); what is
		// committed must never be the outside content.
		a.Commit(ctx, "named", "notebook/reference/contacts.md", "notebook/knowledge/k.md", "notebook/knowledge/f.md", "notebook/knowledge/other.md")
		if i%10 == 0 {
			a.CommitAll(ctx, "all")
		}
	}
	close(stop)
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("commits did not finish before the deadline")
	}
	noSecret(t, a, remote)
}

// TestFIFOAtATrackedPath: a FIFO where a tracked page was, which the
// remote changes: commits leave it out (its tracked version stays),
// syncs never wait on it, and the sync says in one line that the path is
// not a regular file instead of "files changed during the merge";
// local work is committed all the same.
func TestFIFOAtATrackedPath(t *testing.T) {
	t.Parallel()
	for _, slow := range []bool{false, true} {
		name := "fast path"
		if slow {
			name = "git"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			const page = "notebook/reference/contacts.md"
			remote := newBare(t)
			a := newHome(t, "a", map[string]string{page: contacts, "notebook/knowledge/k.md": "# K\n"})
			sync1(t, a, remote)
			attack(t, remote, "theirs", plant(page, "100644", contacts+"- theirs\n"), plant("notebook/knowledge/theirs.md", "100644", "# Theirs\n"))
			if slow {
				write(t, a.Dir, ".gitattributes", "")
			}
			full := filepath.Join(a.Dir, page)
			if err := os.Remove(full); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(full, 0o644); err != nil {
				t.Fatal(err)
			}
			appendTo(t, a.Dir, "notebook/knowledge/k.md", "- local\n")
			_, err := a.Sync(ctx, SyncOptions{Remote: remote})
			if err == nil || ctx.Err() != nil {
				t.Fatalf("sync: %v (context: %v), want an error naming %s", err, ctx.Err(), page)
			}
			msg := err.Error()
			for _, want := range []string{page, "not a regular file (a FIFO)"} {
				if !strings.Contains(msg, want) {
					t.Fatalf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") || errors.Is(err, gitrepo.ErrDirty) {
				t.Fatalf("error is not one clear line: %q", msg)
			}
			if fi, err := os.Lstat(full); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Fatalf("the FIFO was replaced: %v", err)
			}
			mustContain(t, gitOut(t, a, "show", "HEAD:notebook/knowledge/k.md"), "- local")
			if got := gitOut(t, a, "show", "HEAD:"+page); got != strings.TrimSpace(contacts) {
				t.Fatalf("HEAD's %s is %q", page, got)
			}
			if st := a.ReadState(); st.LastError != msg {
				t.Fatalf("state %+v, want the error", st)
			}
			// Once the FIFO is gone, the sync goes on.
			if err := os.Remove(full); err != nil {
				t.Fatal(err)
			}
			write(t, a.Dir, page, contacts+"- mine\n")
			sync1(t, a, remote)
			mustContain(t, read(t, a.Dir, "notebook/knowledge/theirs.md"), "# Theirs")
			mustContain(t, gitIn(t, remote, "", "show", "main:"+page), "- mine", "- theirs")
		})
	}
}

// TestRemoteGitignoreCannotHideLocalWork: a remote commit that adds
// notebook/ and sessions/ to the shared .gitignore does not stop new
// local pages and transcripts from being committed and pushed (what is
// shared is memhost's list, whatever the .gitignore says); a page this
// machine keeps to itself is listed in .git/info/exclude, which no
// remote can change.
func TestRemoteGitignoreCannotHideLocalWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := newBare(t)
	a := newHome(t, "a", map[string]string{"notebook/reference/contacts.md": contacts, "sessions/s1.jsonl": `{"id":"1"}` + "\n"})
	sync1(t, a, remote)
	ignore := gitIn(t, remote, "", "show", "main:.gitignore") + "\nnotebook/\nsessions/\n*.jsonl\n*.md\n"
	attack(t, remote, "ignore everything", plant(".gitignore", "100644", ignore))
	sync1(t, a, remote)
	mustContain(t, read(t, a.Dir, ".gitignore"), "\nnotebook/\n")

	// Named, as memhost's writes commit (the fast path), and found by
	// the sync's own look at the work tree.
	write(t, a.Dir, "notebook/knowledge/new.md", "# New\n- remembered after the .gitignore change\n")
	if ok, err := a.Commit(ctx, "remember: knowledge/new.md", "notebook/knowledge/new.md"); err != nil || !ok {
		t.Fatalf("commit of a new page: %v %v", ok, err)
	}
	write(t, a.Dir, "notebook/daily/2024-05-01.md", "# 2024-05-01\n- edited in an editor\n")
	write(t, a.Dir, "sessions/s2.jsonl", `{"id":"t1","content":"a new turn"}`+"\n")
	appendTo(t, a.Dir, "sessions/s1.jsonl", `{"id":"2","content":"another turn"}`+"\n")
	// This machine's own exclusion: kept here, never shared.
	write(t, a.Dir, ".git/info/exclude", "/notebook/private/\n")
	write(t, a.Dir, "notebook/private/diary.md", "# Diary\n")
	if _, err := a.Commit(ctx, "write: private/diary.md", "notebook/private/diary.md"); err != nil {
		t.Fatalf("commit of an excluded page: %v", err)
	}
	sync1(t, a, remote)
	got := strings.Join(remoteFiles(t, remote), " ")
	want := ".gitignore notebook/daily/2024-05-01.md notebook/knowledge/new.md notebook/reference/contacts.md sessions/s1.jsonl sessions/s2.jsonl"
	if got != want {
		t.Fatalf("the remote holds %s\nwant %s", got, want)
	}
	mustContain(t, gitIn(t, remote, "", "show", "main:sessions/s1.jsonl"), "another turn")
	mustContain(t, gitIn(t, remote, "", "show", "main:sessions/s2.jsonl"), "a new turn")
}

// TestExcludeKeepsPagesHereOnly: .git/info/exclude keeps pages out of
// commits, named one by one or among many (a command line of its own
// for up to 64, the shared folders looked at whole above that).
func TestExcludeKeepsPagesHereOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, n := range []int{3, 100} {
		a := newHome(t, "a", map[string]string{"notebook/top.md": "# Top\n"})
		write(t, a.Dir, ".git/info/exclude", "# this machine only\n/notebook/private/\n")
		var want []string
		for i := range n {
			p := fmt.Sprintf("notebook/k/p%03d.md", i)
			write(t, a.Dir, p, "# P\n")
			want = append(want, p)
		}
		write(t, a.Dir, "notebook/private/diary.md", "# Diary\n")
		if _, err := a.CommitAll(ctx, "all"); err != nil {
			t.Fatal(err)
		}
		got := strings.Fields(gitOut(t, a, "ls-files", "notebook/k", "notebook/private"))
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%d pages: committed %v", n, got)
		}
	}
}

// openedHome is r's work tree opened for the methods that read it,
// closed when the test ends.
func openedHome(t testing.TB, r *Repo) *fsx.Dir {
	t.Helper()
	home, err := r.g().OpenHome()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { home.Close() })
	return home
}
