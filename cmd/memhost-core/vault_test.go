package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVaultCommands runs links, mv, rollup, prune and recall's filters as
// a person would, and their usage errors (exit 2, one line, nothing
// changed).
func TestVaultCommands(t *testing.T) {
	home := t.TempDir()
	ok(t, home, "init")
	nb := filepath.Join(home, "notebook")
	write := func(rel, text string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(nb, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(nb, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("knowledge/staging-db.md", "# Staging database\n\nPostgres 16 on db1.\n")
	write("knowledge/postgres.md", "---\ntags: [database]\naliases: [PG]\n---\n# Postgres\n\nRuns [[staging-db]]; see [[Runbook#Cut-over|the cut-over]].\n")
	write("daily/2026-02-24.md", "# Daily Log — 2026-02-24\n\n## 11:30 — Postgres prep\nReviewed the plan.\n")

	out := ok(t, home, "links", "knowledge/postgres")
	for _, want := range []string{"knowledge/postgres.md\n", "aliases: PG\n", "tags: #database\n", "OUT (2)\n",
		"  7  [[staging-db]]  -> knowledge/staging-db.md\n", "  7  [[Runbook#Cut-over|the cut-over]]  -> (unresolved)\n", "BACK (0)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("links: no %q in\n%s", want, out)
		}
	}
	if out := ok(t, home, "status"); !strings.Contains(out, "links:      1 unresolved") {
		t.Errorf("status:\n%s", out)
	}
	out = ok(t, home, "recall", "postgres", "--tag", "database")
	if !strings.Contains(out, "knowledge/postgres.md") || strings.Contains(out, "staging-db.md") || strings.Contains(out, "daily/") {
		t.Errorf("recall --tag:\n%s", out)
	}
	out = ok(t, home, "recall", "postgres", "--path", "daily/")
	if !strings.Contains(out, "daily/2026-02-24.md") || strings.Contains(out, "knowledge/") {
		t.Errorf("recall --path:\n%s", out)
	}

	out = ok(t, home, "mv", "knowledge/staging-db.md", "knowledge/databases/staging.md")
	if out != "moved knowledge/staging-db.md to knowledge/databases/staging.md\n  updated knowledge/postgres.md (1 link)\n" {
		t.Errorf("mv: %q", out)
	}
	if b, _ := os.ReadFile(filepath.Join(nb, "knowledge/postgres.md")); !strings.Contains(string(b), "Runs [[staging]];") {
		t.Errorf("the link was not updated: %s", b)
	}

	out = ok(t, home, "rollup", "--week", "2026-02-24")
	if out != "created daily/rollups/2026-W09.md: 2026-02-23 to 2026-03-01, 1 daily log, 1 entry\n" {
		t.Errorf("rollup: %q", out)
	}
	if out := ok(t, home, "rollup", "--week", "2026-W09"); !strings.HasPrefix(out, "unchanged daily/rollups/2026-W09.md") {
		t.Errorf("rollup again: %q", out)
	}
	out = ok(t, home, "prune", "--daily-older-than", "12w", "--dry-run")
	if out != "would be archived daily/2026-02-24.md -> daily/archive/2026-02-24.md\n" {
		t.Errorf("prune --dry-run: %q", out)
	}
	ok(t, home, "prune", "--daily-older-than", "90d")
	if _, err := os.Stat(filepath.Join(nb, "daily/archive/2026-02-24.md")); err != nil {
		t.Errorf("not archived: %v", err)
	}

	// Refusals: the exit code, one line on stderr naming the problem.
	write("daily/2026-03-10.md", "# Daily Log — 2026-03-10\n\n## 09:00 — Later\n")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"links"}, 2, "missing PAGE"},
		{[]string{"links", "a", "b"}, 2, "give one PAGE"},
		{[]string{"links", "nowhere.md"}, 1, "no such page: nowhere.md"},
		{[]string{"mv", "knowledge/postgres.md"}, 2, "give OLD and NEW"},
		{[]string{"mv", "knowledge/postgres.md", "knowledge/databases/staging.md"}, 1, "already exists"},
		{[]string{"mv", "knowledge/postgres.md", "../out.md"}, 1, "outside the notebook"},
		{[]string{"rollup"}, 2, "give one of --week or --month"},
		{[]string{"rollup", "--week", "--month"}, 2, "give one of --week or --month"},
		{[]string{"rollup", "--week", "2026-W99"}, 1, "has no week 99"},
		{[]string{"rollup", "--month", "2019-01"}, 1, "no daily logs from 2019-01-01 to 2019-01-31"},
		{[]string{"prune", "--daily-older-than", "soon"}, 2, "--daily-older-than \"soon\""},
		{[]string{"prune", "--daily-older-than", "30d"}, 1, "daily/rollups/2026-W11.md (missing)"},
		{[]string{"recall", "x", "--tag", "two words"}, 1, "tag \"two words\""},
	} {
		r := memhost(t, home, nil, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("memhost %s: exit %d, stderr %q; want exit %d and one line with %q", strings.Join(tt.args, " "), r.code, r.stderr, tt.code, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(nb, "daily/2026-03-10.md")); err != nil {
		t.Errorf("a refused prune moved a log: %v", err)
	}
}
