package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// fedHome makes a home with federation settings fast enough for a test.
func fedHome(t *testing.T, name string) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), name)
	if _, errOut, err := exe(home, "", nil, "init"); err != nil {
		t.Fatal(err, errOut)
	}
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(fedConfig(name)), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

func mustExe(t *testing.T, home string, args ...string) string {
	t.Helper()
	out, errOut, err := exe(home, "", nil, args...)
	if err != nil {
		t.Fatalf("memhost %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// notebookFiles reads every page of a home's notebook.
func notebookFiles(t *testing.T, home string) map[string]string {
	t.Helper()
	m := map[string]string{}
	root := filepath.Join(home, "notebook")
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			m[rel] = string(data)
		}
		return nil
	})
	return m
}

// TestFederatedServersConverge: two homes, each with memhost serve
// running and federation on, converge after concurrent remembers, daily
// logs, transcript turns and editor edits on both sides, with nothing
// lost or duplicated, each able to recall what the other remembered.
func TestFederatedServersConverge(t *testing.T) {
	t.Parallel() // a home and processes of its own
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	remote := filepath.Join(t.TempDir(), "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", remote).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	a, b := fedHome(t, "a"), fedHome(t, "b")
	mustExe(t, a, "remember", "--category", "reference", "--file", "contacts", "--section", "Sarah Chen", "Sarah Chen works at Acme")
	mustExe(t, a, "git", "init", "--remote", remote)
	mustExe(t, b, "git", "init", "--remote", remote)
	for _, h := range []string{a, b} {
		mustExe(t, h, "serve", "--detach")
		t.Cleanup(func() { exe(h, "", nil, "serve", "stop") })
	}

	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for _, h := range []struct{ home, name string }{{a, "a"}, {b, "b"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := func(args ...string) {
				if out, errOut, err := exe(h.home, "", nil, args...); err != nil {
					errs <- fmt.Errorf("%s: memhost %v: %v %s%s", h.name, args, err, out, errOut)
				}
			}
			for i := 0; i < n; i++ {
				run("remember", "--category", "reference", "--file", "contacts", "--section", "Sarah Chen", fmt.Sprintf("fact %s%d about Sarah", h.name, i))
				run("remember", "--category", "knowledge", "--file", "notes-"+h.name, fmt.Sprintf("zebrafact%s%d", h.name, i))
				run("daily-log", fmt.Sprintf("log entry %s%d", h.name, i))
				run("session", "append", "--session", "shared", "--role", "user", fmt.Sprintf("turn %s%d", h.name, i))
				if i == n/2 {
					// An edit made in an editor, seen by the server's watcher.
					p := filepath.Join(h.home, "notebook", "lists", "editor-"+h.name+".md")
					if err := os.WriteFile(p, []byte("# Edited by hand on "+h.name+"\n- editorline"+h.name+"\n"), 0o644); err != nil {
						errs <- err
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	var wants []string
	for _, name := range []string{"a", "b"} {
		for i := 0; i < n; i++ {
			wants = append(wants, fmt.Sprintf("fact %s%d about Sarah", name, i), fmt.Sprintf("zebrafact%s%d", name, i), fmt.Sprintf("log entry %s%d", name, i))
		}
		wants = append(wants, "editorline"+name)
	}
	count := func(files map[string]string, s string) int {
		c := 0
		for _, text := range files {
			c += strings.Count(text, s)
		}
		return c
	}
	// Every turn once in a home's transcript. The last turn is written
	// after the last page, so pages that agree say nothing of it.
	turnsOnce := func(home string) bool {
		data, _ := os.ReadFile(filepath.Join(home, "sessions", "shared.jsonl"))
		for _, name := range []string{"a", "b"} {
			for i := 0; i < n; i++ {
				if strings.Count(string(data), fmt.Sprintf("turn %s%d", name, i)) != 1 {
					return false
				}
			}
		}
		return true
	}
	deadline := time.Now().Add(180 * time.Second)
	var fa, fb map[string]string
	for {
		fa, fb = notebookFiles(t, a), notebookFiles(t, b)
		done := fmt.Sprint(fa) == fmt.Sprint(fb) && turnsOnce(a) && turnsOnce(b)
		for _, w := range wants {
			if count(fa, w) != 1 {
				done = false
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			var missing []string
			for _, w := range wants {
				if count(fa, w) != 1 || count(fb, w) != 1 {
					missing = append(missing, fmt.Sprintf("%q (a %d, b %d)", w, count(fa, w), count(fb, w)))
				}
			}
			t.Fatalf("the homes did not converge in 180 s; not exactly once on both: %s; every turn once in the transcript: a %v, b %v\na: %v\nb: %v",
				strings.Join(missing, ", "), turnsOnce(a), turnsOnce(b), fa, fb)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Transcripts: every turn once, on both sides.
	for _, h := range []string{a, b} {
		data, err := os.ReadFile(filepath.Join(h, "sessions", "shared.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "b"} {
			for i := 0; i < n; i++ {
				if c := strings.Count(string(data), fmt.Sprintf("turn %s%d", name, i)); c != 1 {
					t.Fatalf("%s: turn %s%d %d times in the transcript:\n%s", h, name, i, c, data)
				}
			}
		}
	}
	// Each side recalls what the other remembered: the merge was indexed.
	for _, tc := range []struct{ home, query, want string }{{a, "zebrafactb3", "knowledge/notes-b.md"}, {b, "zebrafacta3", "knowledge/notes-a.md"},
		{a, "editorlineb", "lists/editor-b.md"}, {b, "editorlinea", "lists/editor-a.md"}} {
		out := mustExe(t, tc.home, "recall", tc.query)
		if !strings.Contains(out, tc.want) {
			t.Errorf("%s: recall %s:\n%s", filepath.Base(tc.home), tc.query, out)
		}
	}
	// Commits say what changed; no derived file was committed.
	log, err := exec.Command("git", "-C", a, "log", "--format=%B").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"remember: reference/contacts.md ## Sarah Chen", "daily-log: daily/", "session/append: sessions/shared.jsonl"} {
		if !strings.Contains(string(log), w) {
			t.Errorf("no commit message with %q in:\n%s", w, log)
		}
	}
	// The editor's page is committed: under "edit: lists/editor-a.md" when
	// the watcher saw it first, else by the next sync's commit of local
	// changes (the watcher's event may come after the sync began).
	if out, err := exec.Command("git", "-C", a, "log", "--format=%s", "--", "notebook/lists/editor-a.md").Output(); err != nil || strings.TrimSpace(string(out)) == "" {
		t.Errorf("the editor's page has no commit: %v %q", err, out)
	}
	files, _ := exec.Command("git", "-C", a, "ls-files").Output()
	for _, f := range strings.Fields(string(files)) {
		if strings.HasPrefix(f, "brain/") || strings.HasPrefix(f, "cache/") || f == "config.yaml" {
			t.Errorf("%s is committed", f)
		}
	}
	// Status shows the federation.
	out := mustExe(t, a, "status")
	if !strings.Contains(out, "git:") || !strings.Contains(out, remote) {
		t.Errorf("status:\n%s", out)
	}
	keys := make([]string, 0, len(fa))
	for k := range fa {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("converged: %d pages each (%s)", len(fa), strings.Join(keys, ", "))
}

// TestSyncKilledMidway: `memhost sync --remote` killed (SIGKILL) at
// random moments while it merges a peer's changes with local ones; the
// next sync recovers, and in the end both homes hold every line of both.
func TestSyncKilledMidway(t *testing.T) {
	t.Parallel() // a home and processes of its own
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	remote := filepath.Join(t.TempDir(), "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", remote).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	a, b := fedHome(t, "a"), fedHome(t, "b")
	mustExe(t, a, "remember", "--category", "knowledge", "--file", "shared", "seed line")
	mustExe(t, a, "git", "init", "--remote", remote)
	mustExe(t, b, "git", "init", "--remote", remote)
	var wants []string
	for round := 0; round < 4; round++ {
		for _, h := range []struct{ home, name string }{{a, "a"}, {b, "b"}} {
			for i := 0; i < 3; i++ {
				line := fmt.Sprintf("killround%d%s%d", round, h.name, i)
				mustExe(t, h.home, "remember", "--category", "knowledge", "--file", "shared", line)
				mustExe(t, h.home, "remember", "--category", "knowledge", "--file", "own-"+h.name, line)
				wants = append(wants, line)
			}
		}
		mustExe(t, a, "sync", "--remote")
		// b merges a's changes into its own; kill it somewhere in there.
		cmd := exec.Command(binary, "sync", "--remote")
		cmd.Env = append(os.Environ(), "MEMHOST_HOME="+b)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+round*150) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
	}
	for i := 0; i < 2; i++ {
		for _, h := range []string{b, a} {
			if out, errOut, err := exe(h, "", nil, "sync", "--remote"); err != nil {
				t.Fatalf("sync after the kills: %v\n%s%s", err, out, errOut)
			}
		}
	}
	fa, fb := notebookFiles(t, a), notebookFiles(t, b)
	if fmt.Sprint(fa) != fmt.Sprint(fb) {
		t.Fatalf("homes differ after recovering:\na: %v\nb: %v", fa, fb)
	}
	for _, w := range wants {
		if got := strings.Count(fa["knowledge/shared.md"], w); got != 1 {
			t.Fatalf("%q %d times in shared.md:\n%s", w, got, fa["knowledge/shared.md"])
		}
	}
	for _, f := range fa {
		if strings.Contains(f, "<<<<<<<") {
			t.Fatalf("conflict markers left:\n%s", f)
		}
	}
}
