package host

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
)

// smash closes h, damages its index the way a bad sector would — the
// files table's root page is pointed at an index's page — and opens the
// home again. The index is larger than Open's quick check reads (see
// bigNotebook), so the damage is met by the first query that reads files,
// as in a large home.
func smash(t *testing.T, h *Host) *Host {
	t.Helper()
	path := h.idx.Path()
	h.Close()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`PRAGMA writable_schema = ON`,
		`UPDATE sqlite_master SET rootpage = (SELECT rootpage FROM sqlite_master WHERE name = 'idx_chunks_hash') WHERE name = 'files'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	return openHost(t, h.Home(), nil)
}

// bigNotebook writes pages enough for an index of over 5 MB.
func bigNotebook(t *testing.T, h *Host) {
	t.Helper()
	for i := range 200 {
		var b strings.Builder
		fmt.Fprintf(&b, "# Page %d\n\n", i)
		for j := range 200 {
			fmt.Fprintf(&b, "Line %d of page %d mentions item%d and item%d among others.\n", j, i, i*j, i+j)
		}
		writePage(t, h, fmt.Sprintf("knowledge/page%03d.md", i), b.String())
	}
	writePage(t, h, "reference/tools.md", "# Tools\n\nThe team uses Grafana for dashboards.\n")
	if _, err := h.Sync(context.Background(), memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(h.idx.Path()); err != nil || fi.Size() < 5<<20 {
		t.Fatalf("index too small for the test: %v, %v", fi.Size(), err)
	}
}

// TestWriteLandsOnCorruptIndex: with the index corrupted under it, a
// write still succeeds — the page is the commit point — and says the
// index was moved aside and rebuilt; everything is findable afterwards.
// Before, daily-log and remember wrote the page and then failed with
// "database disk image is malformed", so an agent retried and wrote twice.
func TestWriteLandsOnCorruptIndex(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	bigNotebook(t, h)
	for i, write := range []func() ([]string, error){
		func() ([]string, error) {
			r, err := h.Remember(ctx, memhost.RememberRequest{Text: "Sarah prefers tea", Category: "reference", File: "preferences"})
			return r.Warnings, err
		},
		func() ([]string, error) {
			r, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "deployed the billing service"})
			return r.Warnings, err
		},
		func() ([]string, error) {
			r, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "the launch is on Friday"})
			return r.Warnings, err
		},
	} {
		h = smash(t, h)
		warnings, err := write()
		if err != nil {
			t.Fatalf("write %d on a corrupt index failed: %v", i, err)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "corrupt") || !strings.Contains(warnings[0], "rebuilt") {
			t.Fatalf("write %d: warnings %q", i, warnings)
		}
	}
	for _, q := range []string{"Grafana", "tea", "billing", "launch Friday"} {
		r, err := h.Recall(ctx, memhost.RecallRequest{Query: q, Sources: []string{SourceNotebook, SourceDaily, SourceSessions}})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(r.Results.Notebook) + len(r.Results.Daily) + len(r.Results.Sessions); n == 0 {
			t.Errorf("%q not found after the rebuild", q)
		}
	}
	asides, _ := filepath.Glob(h.idx.Path() + ".corrupt-*")
	if n := len(asides); n < 3 {
		t.Errorf("%d corrupt copies kept (%v), want one per corruption", n, asides)
	}
}

// TestRecallOnCorruptIndex: a search meeting a corrupt index rebuilds it
// and answers.
func TestRecallOnCorruptIndex(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	bigNotebook(t, h)
	h = smash(t, h)
	r, err := h.Recall(ctx, memhost.RecallRequest{Query: "Grafana"})
	if err != nil || len(r.Results.Notebook) != 1 {
		t.Fatalf("recall = %+v, %v", r.Results, err)
	}
}

// TestIndexDeletedWhileWatching: a person deletes brain/memory.db while
// a watcher runs in another process; other commands work at once (they
// failed with "disk I/O error: no such file or directory" until the
// watcher stopped), and the watcher goes on with the new index.
func TestIndexDeletedWhileWatching(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	watcher := openHost(t, home, func(c *config.Config) { c.Memory.Sync.WatchDebounceMs = 50 })
	writePage(t, watcher, "reference/tools.md", "# Tools\n\nThe team uses Grafana for dashboards.\n")
	if _, err := watcher.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- watcher.Watch(wctx, WatchRequest{}) }()
	defer func() { stop(); <-done }()

	if err := os.Remove(watcher.idx.Path()); err != nil {
		t.Fatal(err)
	}
	other := openHost(t, home, nil)
	if _, err := other.Remember(ctx, memhost.RememberRequest{Text: "Kettle descaling is monthly", Category: "knowledge", File: "home"}); err != nil {
		t.Fatalf("remember after the delete: %v", err)
	}
	for name, h := range map[string]*Host{"other": other, "watcher": watcher} {
		for _, q := range []string{"Grafana", "kettle descaling"} {
			r, err := h.Recall(ctx, memhost.RecallRequest{Query: q})
			if err != nil || len(r.Results.Notebook) == 0 {
				t.Errorf("%s: recall %q after the delete = %+v, %v", name, q, r.Results, err)
			}
		}
	}
}

// TestIndexDeletedUnderServe: the index is deleted while a watcher runs
// with nothing pending (a server settled); the next search rescans
// everything instead of syncing only pages changed since (found by a
// red-team pass: pages stayed unsearchable until the server stopped).
func TestIndexDeletedUnderServe(t *testing.T) {
	ctx := context.Background()
	h := openHost(t, t.TempDir(), func(c *config.Config) { c.Memory.Sync.WatchDebounceMs = 50 })
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Watch(wctx, WatchRequest{}) }()
	defer func() { stop(); <-done }()
	if _, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "pineapple meeting notes"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the watcher settles
	if r := recallOf(t, h, "pineapple"); len(r.Results.Daily) != 1 {
		t.Fatalf("before: %+v", r.Results)
	}
	if err := os.Remove(h.idx.Path()); err != nil {
		t.Fatal(err)
	}
	if r := recallOf(t, h, "pineapple"); len(r.Results.Daily) != 1 {
		t.Fatalf("after deleting the index: %+v", r.Results)
	}
}
