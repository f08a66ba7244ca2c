package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/mcp"
)

// TestVaultToolsKeepEdits: through the tools, a rollup page a person edited
// is kept as it is by rollup (every time, and the text says so), and prune
// leaves in daily/ a log whose text that page no longer holds, saying so,
// while it archives the one it still holds.
func TestVaultToolsKeepEdits(t *testing.T) {
	cfg := config.Default()
	cfg.Timezone = "UTC"
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	h, err := host.Open(context.Background(), host.Options{Home: t.TempDir(), Config: cfg, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	writePages(t, h, map[string]string{
		"daily/2026-08-03.md": "# Daily Log — 2026-08-03\n\n## 09:15 — Started the spec\nDrafted the outline with Sarah.\n",
		"daily/2026-08-05.md": "# Daily Log — 2026-08-05\n\n## Decisions\n- Ship on Friday\n",
	})
	cs := connect(t, mcp.New(h, mcp.Options{}), nil)
	const week = "daily/rollups/2026-W32.md"
	pagePath := filepath.Join(h.NotebookDir(), "daily", "rollups", "2026-W32.md")

	var rr memhost.RollupResponse
	structured(t, call(t, cs, "rollup", map[string]any{"period": "week", "date": "2026-W32"}), &rr)
	if !rr.Created {
		t.Fatalf("rollup: %+v", rr)
	}
	// A person rewrites Monday in their own words, leaving the rest.
	b, err := os.ReadFile(pagePath)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	mon, wed := strings.Index(page, "## Monday 2026-08-03"), strings.Index(page, "## Wednesday 2026-08-05")
	edited := page[:mon] + "## Monday 2026-08-03\n\nWe began the spec.\n\n" + page[wed:]
	if err := os.WriteFile(pagePath, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	for i := range 2 {
		rr = memhost.RollupResponse{}
		res := call(t, cs, "rollup", map[string]any{"period": "week", "date": "2026-W32"})
		structured(t, res, &rr)
		if b, _ := os.ReadFile(pagePath); string(b) != edited {
			t.Fatalf("rollup %d rewrote the edited page:\n%s", i, b)
		}
		want := "Kept " + week + " (2026-W32, 2026-08-03 to 2026-08-09) as it is: edited since memhost wrote it, so it is a person's page and is not rewritten from its 2 daily logs."
		if rr.Changed || rr.Created || !rr.Kept || rr.Why != "edited since memhost wrote it" || text(res) != want {
			t.Fatalf("rollup %d: %+v\n got %q\nwant %q", i, rr, text(res), want)
		}
	}

	for i := range 2 {
		var pr memhost.PruneResponse
		res := call(t, cs, "prune", map[string]any{"olderThanDays": 90})
		structured(t, res, &pr)
		if _, err := os.Stat(filepath.Join(h.NotebookDir(), "daily", "2026-08-03.md")); err != nil {
			t.Fatalf("prune %d moved the log its rollup no longer holds: %v", i, err)
		}
		if _, err := os.Stat(filepath.Join(h.NotebookDir(), "daily", "archive", "2026-08-05.md")); err != nil {
			t.Fatalf("prune %d: the log still held is not archived: %v", i, err)
		}
		kept := "Kept in place 1 daily log whose text no rollup holds:\n- daily/2026-08-03.md (" + week + "): the rollup no longer holds its text (edited since memhost wrote it)"
		if len(pr.Kept) != 1 || pr.Kept[0].Log != "daily/2026-08-03.md" || pr.Kept[0].Rollup != week || !strings.HasSuffix(text(res), "\n"+kept) {
			t.Fatalf("prune %d: %+v\n%s", i, pr, text(res))
		}
		if i == 0 && (len(pr.Archived) != 1 || !strings.HasPrefix(text(res), "Archived 1 daily log from before 2026-08-25:\n- daily/2026-08-05.md -> daily/archive/2026-08-05.md\n")) {
			t.Fatalf("prune: %+v\n%s", pr, text(res))
		}
		if i == 1 && (len(pr.Archived) != 0 || text(res) != "No daily logs from before 2026-08-25 to archive.\n"+kept) {
			t.Fatalf("prune again: %+v\n%s", pr, text(res))
		}
	}
}
