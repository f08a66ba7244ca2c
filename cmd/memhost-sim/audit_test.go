package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// home writes files (path → content) into a new home folder.
func home(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		path := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var auditLedger = []write{
	{Kind: "daily", Machine: "a", Full: "Worked on the garden (a00001)", Code: "a00001"},
	{Kind: "remember", Machine: "a", Full: "I prefer tea (a00002)", Code: "a00002"},
	{Kind: "edit", Machine: "p", Full: "- thought (p00003)\n", Code: "p00003"},
	{Kind: "turn", Machine: "a", Session: "claude-s1", Turn: "s1-001", Text: "hello there"},
	{Kind: "turn", Machine: "a", Session: "claude-s1", Turn: "s1-002", Text: "hi, how can I help?"},
}

// whole is a home holding each write of auditLedger once, with the
// copies memhost derives (an episode log, a rollup) beside them.
var whole = map[string]string{
	"notebook/daily/2025-01-01.md":           "# 2025-01-01\n\n## 09:00 — Worked on the garden (a00001)\n",
	"notebook/daily/rollups/2025-W01.md":     "## 09:00 — Worked on the garden (a00001)\n",
	"notebook/reference/preferences.md":      "# Preferences\n\n- I prefer tea (a00002)\n",
	"notebook/knowledge/topics/renamed-x.md": "# Notes\n\n- thought (p00003)\n",
	"notebook/episodes/2025-01-01.md":        "hello there\n",
	"sessions/claude-s1.jsonl":               `{"id":"s1-001","content":"hello there"}` + "\n" + `{"id":"s1-002#0","content":"hi, how can I help?"}` + "\n",
}

func auditOf(t *testing.T, files map[string]string) []string {
	t.Helper()
	s := &sim{ledger: &ledger{writes: auditLedger}}
	return s.auditHome(&machine{name: "a", home: home(t, files), sim: s}, true)
}

func TestAuditPassesAWholeHome(t *testing.T) {
	if got := auditOf(t, whole); len(got) != 0 {
		t.Fatalf("a home holding every write once: %q", got)
	}
}

// Each damage a simulated year could do is found, and named.
func TestAuditFindsWhatIsLostDoubledOrTorn(t *testing.T) {
	for _, c := range []struct {
		name, path, content, want string
	}{
		{"a daily entry written twice", "notebook/daily/2025-01-01.md", "## 09:00 — Worked on the garden (a00001)\n## 09:01 — Worked on the garden (a00001)\n", "daily of day 1 from a found 2 times"},
		{"a daily entry lost", "notebook/daily/2025-01-01.md", "# 2025-01-01\n", "daily of day 1 from a found 0 times"},
		{"a daily entry changed", "notebook/daily/2025-01-01.md", "## 09:00 — Worked on the (a00001)\n", "daily of day 1 from a changed"},
		{"a remembered item lost", "notebook/reference/preferences.md", "# Preferences\n", "remember of day 1 from a found 0 times"},
		{"a person's line doubled by a merge", "notebook/knowledge/topics/renamed-x.md.conflict-1.md", "", ""},
		{"a person's line in two pages", "notebook/lists/copy.md", "- thought (p00003)\n", "edit of day 1 from p found 2 times"},
		{"a turn stored twice", "sessions/claude-s1.jsonl", `{"id":"s1-001","content":"hello there"}` + "\n" + `{"id":"s1-001","content":"hello there"}` + "\n" + `{"id":"s1-002#0","content":"hi, how can I help?"}` + "\n", "turn s1-001 of claude-s1 stored 2 times"},
		{"a turn changed", "sessions/claude-s1.jsonl", `{"id":"s1-001","content":"hello"}` + "\n" + `{"id":"s1-002#0","content":"hi, how can I help?"}` + "\n", "turn s1-001 of claude-s1 stored as"},
		{"a torn line", "sessions/claude-s1.jsonl", `{"id":"s1-001","content":"hello there"}` + "\n" + `{"id":"s1-002#0","content":"hi, how can I help?"}` + "\n" + `{"id":"s1-0`, "not JSON (torn?)"},
		{"a page that is not UTF-8", "notebook/lists/bad.md", "\xff\xfe", "not UTF-8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{}
			for p, v := range whole {
				files[p] = v
			}
			files[c.path] = c.content
			got := auditOf(t, files)
			if c.want == "" { // a conflict copy is kept beside on purpose: not counted twice
				if len(got) != 0 {
					t.Fatalf("%q", got)
				}
				return
			}
			if !strings.Contains(strings.Join(got, "\n"), c.want) {
				t.Fatalf("want a finding %q, got %q", c.want, got)
			}
		})
	}
}

func TestCompareSharedFindsADifference(t *testing.T) {
	a := home(t, map[string]string{"notebook/x.md": "one\n"})
	b := home(t, map[string]string{"notebook/x.md": "two\n"})
	for _, d := range []string{a, b} {
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
			if out, err := gitCmd(d, args...); err != nil {
				t.Fatalf("git %v: %v %s", args, err, out)
			}
		}
	}
	if got := compareShared(a, b); len(got) != 1 || !strings.Contains(got[0], "notebook/x.md differs") {
		t.Fatalf("%q", got)
	}
	if got := compareShared(a, a); len(got) != 0 {
		t.Fatalf("a home against itself: %q", got)
	}
}
