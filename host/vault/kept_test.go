package vault_test

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/markdown"
)

// openAt opens a home in t's temp dir whose clock stands at now, with the
// daily logs' days in UTC (not the machine's zone).
func openAt(t *testing.T, now time.Time) *host.Host {
	t.Helper()
	cfg := config.Default()
	cfg.Timezone = "UTC"
	h, err := host.Open(context.Background(), host.Options{Home: t.TempDir(), Config: cfg, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func writeFile(t *testing.T, h *host.Host, rel, text string) {
	t.Helper()
	p := filepath.Join(h.NotebookDir(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, h *host.Host, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.NotebookDir(), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fileState is what a write would change of a file: its bytes, and the
// file itself (an atomic write of the same bytes is a new file).
type fileState struct {
	sum  [32]byte
	info os.FileInfo
}

// snapshot is the state of every file of h's notebook.
func snapshot(t *testing.T, h *host.Host) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(h.NotebookDir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(h.NotebookDir(), p)
		out[filepath.ToSlash(rel)] = fileState{sha256.Sum256(b), fi}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFiles fails t unless after holds the files of before, each the same
// file with the same bytes.
func sameFiles(t *testing.T, what string, before, after map[string]fileState) {
	t.Helper()
	for rel, b := range before {
		a, ok := after[rel]
		switch {
		case !ok:
			t.Errorf("%s removed %s", what, rel)
		case a.sum != b.sum:
			t.Errorf("%s changed %s", what, rel)
		case !os.SameFile(a.info, b.info) || !a.info.ModTime().Equal(b.info.ModTime()):
			t.Errorf("%s wrote %s again", what, rel)
		}
	}
	for rel := range after {
		if _, ok := before[rel]; !ok {
			t.Errorf("%s added %s", what, rel)
		}
	}
}

const (
	log0803 = "# Daily Log — 2026-08-03\n\n## 09:15 — Started the spec\nDrafted the outline with Sarah.\n"
	log0805 = "# Daily Log — 2026-08-05\n\n## Decisions\n- Ship on Friday\n"
	week32  = "daily/rollups/2026-W32.md"
)

// rolledUp is a home on 2026-11-23 with two daily logs of week 2026-W32
// and that week's rollup.
func rolledUp(t *testing.T) *host.Host {
	t.Helper()
	h := openAt(t, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	writeFile(t, h, "daily/2026-08-03.md", log0803)
	writeFile(t, h, "daily/2026-08-05.md", log0805)
	if r, err := h.Rollup(context.Background(), memhost.RollupRequest{Period: "week", Date: "2026-W32"}); err != nil || !r.Created {
		t.Fatalf("rollup = %+v, %v", r, err)
	}
	return h
}

// TestPruneKeepsLogsTheRollupNoLongerHolds: a person replaced the rollup's
// body with a summary of their own, leaving its hidden list of sources (and
// so the hashes prune used to trust): prune, with --delete or not, keeps
// every log whose text the rollup no longer holds and names it as kept,
// with the rollup and why; a log whose section is still there verbatim
// is pruned. Run again, it answers the same and writes nothing.
func TestPruneKeepsLogsTheRollupNoLongerHolds(t *testing.T) {
	ctx := context.Background()
	for _, del := range []bool{true, false} {
		name := "archive"
		if del {
			name = "delete"
		}
		t.Run(name, func(t *testing.T) {
			h := rolledUp(t)
			page := readFile(t, h, week32)
			front, body := markdown.SplitFrontmatter(page)
			var sources string
			for _, l := range strings.Split(body, "\n") {
				if strings.HasPrefix(l, "<!-- memhost-rollup sources:") {
					sources = l
				}
			}
			if sources == "" {
				t.Fatalf("no sources line in\n%s", page)
			}
			// Their own words for Monday, Wednesday's section kept as it was.
			wed := body[strings.Index(body, "## Wednesday 2026-08-05"):]
			writeFile(t, h, week32, front+"# My week\n\n"+sources+"\n\nWe started the spec.\n\n"+wed)

			req := memhost.PruneRequest{OlderThanDays: 90, Delete: del}
			resp, err := h.Prune(ctx, req)
			if err != nil {
				t.Fatalf("prune: %v", err)
			}
			if got := readFile(t, h, "daily/2026-08-03.md"); got != log0803 {
				t.Fatalf("the log the rollup no longer holds is now %q", got)
			}
			if _, err := os.Stat(filepath.Join(h.NotebookDir(), "daily", "2026-08-05.md")); !os.IsNotExist(err) {
				t.Errorf("the log the rollup still holds was not pruned: %v", err)
			}
			pruned := len(resp.Archived)
			if del {
				pruned = len(resp.Deleted)
			}
			kept := []memhost.KeptLog{{Log: "daily/2026-08-03.md", Rollup: week32, Why: "the rollup no longer holds its text (edited since memhost wrote it)"}}
			if pruned != 1 || !reflect.DeepEqual(resp.Kept, kept) {
				t.Errorf("prune = %+v, want one log pruned and kept %+v", resp, kept)
			}

			for i := range 2 {
				before := snapshot(t, h)
				again, err := h.Prune(ctx, req)
				if err != nil {
					t.Fatalf("prune again: %v", err)
				}
				sameFiles(t, "prune again", before, snapshot(t, h))
				if len(again.Archived)+len(again.Deleted) != 0 || !reflect.DeepEqual(again.Kept, kept) {
					t.Errorf("prune again (%d) = %+v, want nothing pruned, the same kept", i, again)
				}
			}
			// A dry run says the same.
			if dry, err := h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 90, Delete: true, DryRun: true}); err != nil || !reflect.DeepEqual(dry.Kept, kept) {
				t.Errorf("dry run = %+v, %v", dry, err)
			}
			if got := readFile(t, h, "daily/2026-08-03.md"); got != log0803 {
				t.Fatalf("the kept log is now %q", got)
			}
		})
	}
}

// TestRollupKeepsEditedPage: a rollup page a person edited is theirs: rollup
// run again (after a new log too) leaves it as it is, every time, and says
// so; the logs stay where they were.
func TestRollupKeepsEditedPage(t *testing.T) {
	ctx := context.Background()
	h := rolledUp(t)
	edited := readFile(t, h, week32) + "\n## My notes\n\nThe spec took longer than planned.\n"
	writeFile(t, h, week32, edited)
	writeFile(t, h, "daily/2026-08-06.md", "# Daily Log — 2026-08-06\n\n## 10:00 — Review\nWent well.\n")

	for i := range 2 {
		before := snapshot(t, h)
		r, err := h.Rollup(ctx, memhost.RollupRequest{Period: "week", Date: "2026-W32"})
		if err != nil {
			t.Fatalf("rollup %d: %v", i, err)
		}
		if got := readFile(t, h, week32); got != edited {
			t.Fatalf("rollup %d rewrote the edited page:\n%s", i, got)
		}
		sameFiles(t, "rollup of an edited page", before, snapshot(t, h))
		if r.Changed || r.Created || !r.Kept || r.Why != "edited since memhost wrote it" || len(r.Logs) != 3 || r.Entries != 3 {
			t.Fatalf("rollup %d = %+v", i, r)
		}
	}

	// The log added since is in no rollup that holds it, and the week's
	// is the person's: prune keeps that log (saying why) rather than
	// refuse all, and prunes the ones the edited page still holds.
	p, err := h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 90, Delete: true})
	want := []memhost.KeptLog{{Log: "daily/2026-08-06.md", Rollup: week32, Why: "the rollup does not hold it as it is now and is not written again (edited since memhost wrote it)"}}
	if err != nil || len(p.Deleted) != 2 || !reflect.DeepEqual(p.Kept, want) {
		t.Fatalf("prune = %+v, %v; want two deleted, kept %+v", p, err, want)
	}
}

// TestRollupPagesOwned: what rollup writes again and what it keeps. A page
// whose frontmatter alone a person edited is memhost's: written again
// with that frontmatter. A page at a rollup's path that memhost did not
// write is kept. A page an earlier memhost wrote (no hash) is written again,
// with the hash, only when it is what its logs give.
func TestRollupPagesOwned(t *testing.T) {
	ctx := context.Background()
	week := memhost.RollupRequest{Period: "week", Date: "2026-W32"}

	t.Run("frontmatter edited", func(t *testing.T) {
		h := rolledUp(t)
		page := strings.Replace(readFile(t, h, week32), "tags: [rollup]\n", "tags: [rollup, reviewed]\nmood: good\n", 1)
		writeFile(t, h, week32, page)
		writeFile(t, h, "daily/2026-08-06.md", "# Daily Log — 2026-08-06\n\n## 10:00 — Review\nWent well.\n")
		r, err := h.Rollup(ctx, week)
		if err != nil || !r.Changed || r.Kept || len(r.Logs) != 3 {
			t.Fatalf("rollup = %+v, %v", r, err)
		}
		got := readFile(t, h, week32)
		if !strings.Contains(got, "mood: good\n") || !strings.Contains(got, "Went well.") {
			t.Fatalf("rollup after a frontmatter edit:\n%s", got)
		}
		if r, err := h.Rollup(ctx, week); err != nil || r.Changed || r.Kept {
			t.Fatalf("rollup again = %+v, %v", r, err)
		}
	})

	t.Run("a person's page", func(t *testing.T) {
		h := openAt(t, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
		writeFile(t, h, "daily/2026-08-03.md", log0803)
		const mine = "# My week\n\nWe started the spec.\n"
		writeFile(t, h, week32, mine)
		before := snapshot(t, h)
		r, err := h.Rollup(ctx, week)
		if err != nil || !r.Kept || r.Why != "not a rollup memhost wrote" || r.Changed || r.Created {
			t.Fatalf("rollup = %+v, %v", r, err)
		}
		sameFiles(t, "rollup over a person's page", before, snapshot(t, h))
		// Nor does prune take that page for a rollup of the log.
		p, err := h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 90, Delete: true})
		if err != nil || len(p.Deleted) != 0 || len(p.Kept) != 1 || p.Kept[0].Why != "the rollup does not hold it as it is now and is not written again (not a rollup memhost wrote)" {
			t.Fatalf("prune = %+v, %v", p, err)
		}
		sameFiles(t, "prune beside a person's page", before, snapshot(t, h))
	})

	t.Run("written by an earlier memhost", func(t *testing.T) {
		h := rolledUp(t)
		page := readFile(t, h, week32)
		at := strings.Index(page, "<!-- memhost-rollup generated:")
		line := page[at : at+strings.IndexByte(page[at:], '\n')+1]
		writeFile(t, h, week32, strings.Replace(page, line, "", 1))
		if r, err := h.Rollup(ctx, week); err != nil || !r.Changed || r.Kept || readFile(t, h, week32) != page {
			t.Fatalf("rollup of an unedited page without a hash = %+v, %v", r, err)
		}
		edited := strings.Replace(page, line, "", 1) + "\nMine.\n"
		writeFile(t, h, week32, edited)
		if r, err := h.Rollup(ctx, week); err != nil || r.Changed || !r.Kept || readFile(t, h, week32) != edited {
			t.Fatalf("rollup of an edited page without a hash = %+v, %v", r, err)
		}
	})
}
