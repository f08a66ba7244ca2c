package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The page two homes edit on different lines (git merges it line-wise)
// and the page two homes edit on the same line (a conflict: both sides
// kept, theirs in a sibling page).
const (
	mergeBase    = "# Plan\n\n- step one: draft\n- step two: review\n- step three: test\n- step four: ship\n- step five: announce\n- step six: rest\n"
	conflictBase = "# Decision\n\n- venue: undecided\n- budget: 100\n- date: June\n"
)

// TestThreeFederatedServersConverge: three homes, each with memhost serve
// running and federation on, all syncing with one bare repository. At
// once on all three: remembers into a shared section and into pages of
// their own, daily-log entries, a page written in an editor, the same
// page edited in an editor by a and b on different lines, and the same
// line of another page edited by b and c. In the end all three hold the
// same commit, every remembered fact exactly once, both lines of the
// line-wise merge, both sides of the conflict (the home that merged it
// lists it in status), and each recalls every fact.
func TestThreeFederatedServersConverge(t *testing.T) {
	t.Parallel() // a home and processes of its own
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	start := time.Now()
	remote := filepath.Join(t.TempDir(), "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", remote).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	names := []string{"a", "b", "c"}
	homes := map[string]string{}
	for _, n := range names {
		homes[n] = filepath.Join(t.TempDir(), n)
	}
	// Homes are made, and servers started, side by side: each takes a
	// second or so of mostly waiting.
	parallel(t, names, func(n string) error {
		if out, errOut, err := exe(homes[n], "", nil, "init"); err != nil {
			return fmt.Errorf("memhost init: %v %s%s", err, out, errOut)
		}
		return os.WriteFile(filepath.Join(homes[n], "config.yaml"), []byte(fedConfig(n)), 0o644)
	})
	a := homes["a"]
	// The shared section's page too: pages created apart on two homes with
	// different content are a conflict, which is not what this test is of.
	for rel, text := range map[string]string{"knowledge/plan.md": mergeBase, "knowledge/decision.md": conflictBase,
		"reference/contacts.md": "# Contacts\n\n## Sarah Chen\n"} {
		if err := os.WriteFile(filepath.Join(a, "notebook", filepath.FromSlash(rel)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names {
		mustExe(t, homes[n], "git", "init", "--remote", remote)
	}
	// Every home starts from a's pages (git init synced them).
	for _, n := range names {
		if got := notebookFiles(t, homes[n])["knowledge/decision.md"]; got != conflictBase {
			t.Fatalf("%s after git init: decision.md is %q", n, got)
		}
	}
	t.Cleanup(func() {
		parallel(t, names, func(n string) error { exe(homes[n], "", nil, "serve", "stop"); return nil })
	})
	parallel(t, names, func(n string) error {
		if out, errOut, err := exe(homes[n], "", nil, "serve", "--detach"); err != nil {
			return fmt.Errorf("memhost serve --detach: %v %s%s", err, out, errOut)
		}
		return nil
	})
	t.Logf("three homes serving after %s", time.Since(start).Round(time.Millisecond))

	// The editors' versions, each made from the page every home holds now.
	plan := map[string]string{
		"a": strings.Replace(mergeBase, "- step one: draft\n", "- step one: draft by a mergelinea\n", 1),
		"b": strings.Replace(mergeBase, "- step five: announce\n", "- step five: announce by b mergelineb\n", 1),
	}
	decision := map[string]string{
		"b": strings.Replace(conflictBase, "- venue: undecided\n", "- venue: the lake house conflictlineb\n", 1),
		"c": strings.Replace(conflictBase, "- venue: undecided\n", "- venue: the old mill conflictlinec\n", 1),
	}

	const n = 4
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	begin := make(chan struct{})
	for _, name := range names {
		home := homes[name]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-begin
			edit := func(rel, text string) {
				if err := os.WriteFile(filepath.Join(home, "notebook", filepath.FromSlash(rel)), []byte(text), 0o644); err != nil {
					errs <- err
				}
			}
			// The shared pages first, all at once: no home has seen another's
			// edit yet (that takes a watcher's debounce and a sync).
			if text, ok := plan[name]; ok {
				edit("knowledge/plan.md", text)
			}
			if text, ok := decision[name]; ok {
				edit("knowledge/decision.md", text)
			}
			run := func(args ...string) {
				if out, errOut, err := exe(home, "", nil, args...); err != nil {
					errs <- fmt.Errorf("%s: memhost %v: %v %s%s", name, args, err, out, errOut)
				}
			}
			for i := 0; i < n; i++ {
				run("remember", "--category", "reference", "--file", "contacts", "--section", "Sarah Chen", fmt.Sprintf("sarahfact%s%d", name, i))
				run("remember", "--category", "knowledge", "--file", "notes-"+name, fmt.Sprintf("zebrafact%s%d", name, i))
				if i == 1 {
					run("daily-log", fmt.Sprintf("logentry%s", name))
					// A page written in an editor, seen by the server's watcher.
					edit("lists/editor-"+name+".md", "# Edited by hand on "+name+"\n- editorline"+name+"\n")
				}
			}
		}()
	}
	close(begin)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("writes done after %s", time.Since(start).Round(time.Millisecond))

	// What must be in every home exactly once, and where recall finds it.
	facts := map[string]string{} // text → page
	var once []string
	for _, name := range names {
		for i := 0; i < n; i++ {
			facts[fmt.Sprintf("sarahfact%s%d", name, i)] = "reference/contacts.md"
			facts[fmt.Sprintf("zebrafact%s%d", name, i)] = "knowledge/notes-" + name + ".md"
		}
		once = append(once, "logentry"+name, "editorline"+name)
	}
	for f := range facts {
		once = append(once, f)
	}
	once = append(once, "mergelinea", "mergelineb", "conflictlineb", "conflictlinec")
	slices.Sort(once)
	count := func(files map[string]string, s string) int {
		c := 0
		for _, text := range files {
			c += strings.Count(text, s)
		}
		return c
	}

	// Converged: the same HEAD everywhere, nothing uncommitted, every text
	// once, and every fact found by recall on every home (the merges were
	// indexed).
	deadline := time.Now().Add(150 * time.Second)
	found := map[string]bool{} // home + " " + fact
	var heads map[string]string
	var files map[string]map[string]string
	var why string
	var filesAt time.Time // when the notebooks converged
	for {
		why = ""
		heads, files = map[string]string{}, map[string]map[string]string{}
		for _, name := range names {
			heads[name] = git(t, homes[name], "rev-parse", "HEAD")
			if st := git(t, homes[name], "status", "--porcelain"); st != "" {
				why = name + " has uncommitted changes: " + st
			}
			files[name] = notebookFiles(t, homes[name])
		}
		if why == "" && (heads["a"] != heads["b"] || heads["b"] != heads["c"]) {
			why = fmt.Sprintf("HEADs differ: %v", heads)
		}
		for _, name := range names {
			for _, w := range once {
				if why == "" && count(files[name], w) != 1 {
					why = fmt.Sprintf("%s holds %q %d times", name, w, count(files[name], w))
				}
			}
		}
		if why == "" && filesAt.IsZero() {
			filesAt = time.Now()
		}
		if why == "" {
			// Every home recalls every fact (its own and the merged ones);
			// one found stays found.
			var mu sync.Mutex
			parallel(t, names, func(name string) error {
				for f, page := range facts {
					mu.Lock()
					done := found[name+" "+f]
					mu.Unlock()
					if done {
						continue
					}
					out, _, err := exe(homes[name], "", nil, "recall", f)
					mu.Lock()
					if err == nil && strings.Contains(out, page) && strings.Contains(out, f) {
						found[name+" "+f] = true
					} else if why == "" {
						why = fmt.Sprintf("%s: recall %s: %v\n%s", name, f, err, out)
					}
					mu.Unlock()
				}
				return nil
			})
		}
		if why == "" {
			break
		}
		if time.Now().After(deadline) {
			for _, name := range names {
				t.Logf("%s: %s\n%v", name, git(t, homes[name], "log", "--oneline", "--graph", "-n", "40"), files[name])
			}
			t.Fatalf("the three homes did not converge in 150 s: %s", why)
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Logf("converged after %s (notebooks after %s): HEAD %s, %d pages", time.Since(start).Round(time.Millisecond), filesAt.Sub(start).Round(time.Millisecond), heads["a"][:12], len(files["a"]))
	fa := files["a"]
	for _, name := range names[1:] {
		if fmt.Sprint(files[name]) != fmt.Sprint(fa) {
			t.Errorf("%s's notebook differs from a's at the same HEAD:\n%v\n%v", name, files[name], fa)
		}
	}

	// The line-wise merge kept both edits in place, with no sibling.
	wantPlan := strings.Replace(plan["a"], "- step five: announce\n", "- step five: announce by b mergelineb\n", 1)
	if fa["knowledge/plan.md"] != wantPlan {
		t.Errorf("plan.md merged to:\n%s\nwant:\n%s", fa["knowledge/plan.md"], wantPlan)
	}
	// The conflict: one side at the page, the other whole in one sibling.
	var siblings []string
	for p := range fa {
		if strings.HasPrefix(p, "knowledge/decision.conflict-") {
			siblings = append(siblings, p)
		}
		if strings.Contains(p, ".conflict-") && !strings.HasPrefix(p, "knowledge/decision.") {
			t.Errorf("an unexpected conflict sibling: %s", p)
		}
	}
	if len(siblings) != 1 {
		t.Fatalf("decision.md's siblings: %v (want one)", siblings)
	}
	sib := siblings[0]
	if got := []string{fa["knowledge/decision.md"], fa[sib]}; !(got[0] == decision["b"] && got[1] == decision["c"] || got[0] == decision["c"] && got[1] == decision["b"]) {
		t.Errorf("the conflict kept %q at the page and %q in %s; want b's and c's versions", got[0], got[1], sib)
	}
	// The home that merged the conflict (its merge commit says so, with its
	// author) lists it in status; the others took the merge as it was.
	mergers := map[string]bool{}
	for _, line := range strings.Split(git(t, a, "log", "--format=%an%x09%B", "--grep=^conflict: notebook/knowledge/decision.md"), "\n") {
		if who, _, ok := strings.Cut(line, "\t"); ok && who != "" {
			mergers[who] = true
		}
	}
	if len(mergers) == 0 || mergers["a"] {
		t.Errorf("the conflict was merged by %v; want b or c", mergers)
	}
	for _, name := range names {
		out := mustExe(t, homes[name], "status")
		listed := strings.Contains(out, "conflict: notebook/knowledge/decision.md (theirs in notebook/"+sib+")")
		if listed != mergers[name] {
			t.Errorf("%s (merged the conflict: %v) status:\n%s", name, mergers[name], out)
		}
	}
	// Each editor's page was committed on its home.
	for _, name := range names {
		if git(t, homes[name], "log", "--format=%s", "--author="+name+" <", "--", "notebook/lists/editor-"+name+".md") == "" {
			t.Errorf("%s: the editor's page has no commit by %s", name, name)
		}
	}
}

// fedConfig is fedHome's config.yaml: federation fast enough for a test.
func fedConfig(name string) string {
	return "memory:\n  sync:\n    watchDebounceMs: 200\nserver:\n  listen: \"\"\nfederation:\n  pushIntervalSec: 1\n  commitIntervalMs: 200\n  author: " + name + " <" + name + "@test>\n"
}

// parallel runs fn for each name at once and fails the test with the
// errors.
func parallel(t *testing.T, names []string, fn func(string) error) {
	t.Helper()
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = fn(n) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", names[i], err)
		}
	}
}

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("git %s in %s: %v %s", strings.Join(args, " "), dir, err, msg)
	}
	return strings.TrimSpace(string(out))
}
