package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVaultCommandsKeepEdits: rollup leaves a rollup page a person edited
// as it is and says so (exit 0); prune --delete keeps the log whose text
// that page no longer holds, and says why. The logs are of 2001, so any
// day since is more than one day after them.
func TestVaultCommandsKeepEdits(t *testing.T) {
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
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(nb, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const week = "daily/rollups/2001-W09.md"
	write("daily/2001-02-26.md", "# Daily Log — 2001-02-26\n\n## 11:30 — Postgres prep\nReviewed the plan.\n")
	write("daily/2001-02-28.md", "# Daily Log — 2001-02-28\n\n## Decisions\n- Ship on Friday\n")
	if out := ok(t, home, "rollup", "--week", "2001-W09"); !strings.HasPrefix(out, "created "+week) {
		t.Fatalf("rollup: %q", out)
	}
	page := read(week)
	mon, wed := strings.Index(page, "## Monday 2001-02-26"), strings.Index(page, "## Wednesday 2001-02-28")
	edited := page[:mon] + "## Monday 2001-02-26\n\nWe prepared.\n\n" + page[wed:]
	write(week, edited)

	for i := range 2 {
		out := ok(t, home, "rollup", "--week", "2001-W09")
		if read(week) != edited {
			t.Fatalf("rollup %d rewrote the edited page", i)
		}
		if want := "kept " + week + " as it is (edited since memhost wrote it): not rewritten from 2001-02-26 to 2001-03-04, 2 daily logs, 2 entries\n"; out != want {
			t.Errorf("rollup %d of an edited page:\n got %q\nwant %q", i, out, want)
		}
	}
	const kept = "kept daily/2001-02-26.md (" + week + "): the rollup no longer holds its text (edited since memhost wrote it)\n"
	for i, want := range []string{"deleted daily/2001-02-28.md\n" + kept, kept} {
		r := memhost(t, home, nil, "prune", "--daily-older-than", "1d", "--delete")
		if r.code != 0 || r.stdout != want || r.stderr != "" {
			t.Errorf("prune %d: exit %d, stdout %q, stderr %q; want exit 0 and %q", i, r.code, r.stdout, r.stderr, want)
		}
		if read("daily/2001-02-26.md") != "# Daily Log — 2001-02-26\n\n## 11:30 — Postgres prep\nReviewed the plan.\n" {
			t.Fatalf("prune %d changed the kept log", i)
		}
		if _, err := os.Stat(filepath.Join(nb, "daily", "2001-02-28.md")); !os.IsNotExist(err) {
			t.Fatalf("prune %d: the log still held is not deleted: %v", i, err)
		}
	}
	if got := decode[struct {
		Kept []struct{ Log, Rollup, Why string }
	}](t, ok(t, home, "prune", "--daily-older-than", "1d", "--json")).Kept; len(got) != 1 || got[0].Log != "daily/2001-02-26.md" || got[0].Rollup != week {
		t.Errorf("prune --json kept %+v", got)
	}
}
