package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/notebook"
)

// clock is a settable time for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func openHost(t *testing.T, home string, edit func(*config.Config)) *Host {
	t.Helper()
	cfg := config.Default()
	if edit != nil {
		edit(&cfg)
	}
	h, err := Open(context.Background(), Options{Home: home, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func newHost(t *testing.T) *Host { return openHost(t, t.TempDir(), nil) }

// writePage writes a page behind memhost's back, as an editor would.
func writePage(t *testing.T, h *Host, rel, content string) {
	t.Helper()
	p := filepath.Join(h.NotebookDir(), rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readPage(t *testing.T, h *Host, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.NotebookDir(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// found returns the paths recall finds for q, notebook group then daily.
func found(t *testing.T, h *Host, q string) []string {
	t.Helper()
	resp, err := h.Recall(context.Background(), memhost.RecallRequest{Query: q})
	if err != nil {
		t.Fatalf("Recall(%q): %v", q, err)
	}
	var out []string
	for _, r := range append(resp.Results.Notebook, resp.Results.Daily...) {
		out = append(out, r.Path)
	}
	return out
}

func TestRemember(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	steps := []struct {
		req  memhost.RememberRequest
		want memhost.RememberResponse
	}{
		{memhost.RememberRequest{Text: "Sarah Chen - Phone: 555-1234"}, memhost.RememberResponse{Path: "reference/contacts.md", Section: "Sarah Chen", NewSection: true, Lines: memhost.Lines{Start: 4, End: 4}, Created: true}},
		{memhost.RememberRequest{Text: "Sarah's birthday is May 3"}, memhost.RememberResponse{Path: "reference/contacts.md", Section: "Sarah Chen", Lines: memhost.Lines{Start: 5, End: 5}}},
		{memhost.RememberRequest{Text: "  sarah's BIRTHDAY is   may 3 "}, memhost.RememberResponse{Path: "reference/contacts.md", Section: "Sarah Chen", Lines: memhost.Lines{Start: 5, End: 5}, Duplicate: true}},
		{memhost.RememberRequest{Text: "The frontend uses React 19"}, memhost.RememberResponse{Path: "knowledge/facts.md", Lines: memhost.Lines{Start: 3, End: 3}, Created: true}},
		{memhost.RememberRequest{Text: "Deploys happen on Fridays", Section: "## Process"}, memhost.RememberResponse{Path: "knowledge/facts.md", Section: "Process", NewSection: true, Lines: memhost.Lines{Start: 6, End: 6}}},
		{memhost.RememberRequest{Text: "- The frontend uses React 19"}, memhost.RememberResponse{Path: "knowledge/facts.md", Lines: memhost.Lines{Start: 3, End: 3}, Duplicate: true}},
	}
	for _, s := range steps {
		got, err := h.Remember(ctx, s.req)
		if err != nil {
			t.Fatalf("Remember(%+v): %v", s.req, err)
		}
		if !reflect.DeepEqual(got, s.want) {
			t.Errorf("Remember(%q) = %+v, want %+v", s.req.Text, got, s.want)
		}
	}
	wantContacts := "# Contacts\n\n## Sarah Chen\n- Phone: 555-1234\n- Sarah's birthday is May 3\n"
	if got := readPage(t, h, "reference/contacts.md"); got != wantContacts {
		t.Errorf("contacts.md = %q, want %q", got, wantContacts)
	}
	wantFacts := "# Facts\n\n- The frontend uses React 19\n\n## Process\n- Deploys happen on Fridays\n"
	if got := readPage(t, h, "knowledge/facts.md"); got != wantFacts {
		t.Errorf("facts.md = %q, want %q", got, wantFacts)
	}
	// Indexed before returning: no sync in between.
	h.editConfig(func(c *config.Config) { c.Memory.Sync.SyncOnSearch = false })
	if got := found(t, h, "birthday"); !reflect.DeepEqual(got, []string{"reference/contacts.md"}) {
		t.Errorf("recall right after remember = %v", got)
	}
	for _, bad := range []memhost.RememberRequest{{Text: "  \n "}, {Text: "x", Category: "diary"}, {Text: "x", File: "../etc/passwd"}, {Text: "bad \xff utf8"}} {
		if _, err := h.Remember(ctx, bad); err == nil {
			t.Errorf("Remember(%+v) succeeded", bad)
		}
	}
}

func TestDailyLog(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 2, 24, 23, 30, 0, 0, time.UTC)}
	cfg := config.Default()
	cfg.Timezone = "Asia/Tokyo" // 08:30 on the 25th there
	h, err := Open(ctx, Options{Home: t.TempDir(), Config: cfg, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	resp, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "Morning check-in\nCleared 3 items from the todo list."})
	if err != nil {
		t.Fatal(err)
	}
	want := memhost.DailyLogResponse{Path: "daily/2026-02-25.md", Heading: "## 08:30 — Morning check-in", Lines: memhost.Lines{Start: 3, End: 4}, Created: true}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("DailyLog = %+v, want %+v", resp, want)
	}
	clk.set(clk.now().Add(90 * time.Minute))
	long := strings.Repeat("word ", 40)
	if _, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: long}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "Lunch with Bob"}); err != nil {
		t.Fatal(err)
	}
	page := readPage(t, h, "daily/2026-02-25.md")
	wantPage := "# Daily Log — 2026-02-25\n\n## 08:30 — Morning check-in\nCleared 3 items from the todo list.\n\n## 10:00 — " +
		strings.TrimSpace(long[:79]) + "…\n" + strings.TrimSpace(long) + "\n\n## 10:00 — Lunch with Bob\n"
	if page != wantPage {
		t.Errorf("daily page =\n%q\nwant\n%q", page, wantPage)
	}
}

func TestGetWriteRemove(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	w, err := h.Write(ctx, memhost.WriteRequest{Path: "projects/alpha", Text: "# Alpha\n\n## Goals\n- ship"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Path != "projects/alpha.md" || !w.Created || w.Lines != (memhost.Lines{Start: 1, End: 4}) {
		t.Errorf("Write = %+v", w)
	}
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "projects/alpha.md", Section: "Goals", Text: "- be fast", Replace: true}); err != nil {
		t.Fatal(err)
	}
	g, err := h.Get(ctx, memhost.GetRequest{Path: "projects/alpha.md", StartLine: 3, Lines: 2})
	if err != nil {
		t.Fatal(err)
	}
	if g.Text != "## Goals\n- be fast\n" || g.Lines != (memhost.Lines{Start: 3, End: 4}) || g.TotalLines != 4 {
		t.Errorf("Get = %+v", g)
	}
	if got := found(t, h, "fast"); !reflect.DeepEqual(got, []string{"projects/alpha.md"}) {
		t.Errorf("recall after write = %v", got)
	}
	if got := found(t, h, "ship"); len(got) != 0 {
		t.Errorf("replaced text still found: %v", got)
	}
	if _, err := h.Get(ctx, memhost.GetRequest{Path: "projects/alpha.md", StartLine: 9}); !isKind(err, fault.BadInput) {
		t.Errorf("Get past the end: %v", err)
	}
	if _, err := h.Remove(ctx, memhost.RemoveRequest{Path: "projects/alpha.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Get(ctx, memhost.GetRequest{Path: "projects/alpha.md"}); !errors.Is(err, notebook.ErrNotFound) {
		t.Errorf("Get after rm: %v", err)
	}
	if got := found(t, h, "fast"); len(got) != 0 {
		t.Errorf("removed page still found: %v", got)
	}
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "../escape.md", Text: "x"}); !errors.Is(err, notebook.ErrOutsideNotebook) {
		t.Errorf("Write outside: %v", err)
	}
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "a.md", Text: ""}); !errors.Is(err, ErrEmptyText) {
		t.Errorf("Write empty: %v", err)
	}
}

// TestEditorEditsAreFoundWithoutWatcher: pages changed behind memhost's
// back are searched as they are now by the next recall.
func TestEditorEditsAreFoundWithoutWatcher(t *testing.T) {
	h := newHost(t)
	writePage(t, h, "knowledge/garden.md", "# Garden\nThe tomatoes need water.\n")
	if got := found(t, h, "tomatoes"); !reflect.DeepEqual(got, []string{"knowledge/garden.md"}) {
		t.Fatalf("new page: %v", got)
	}
	writePage(t, h, "knowledge/garden.md", "# Garden\nThe cucumbers need water.\n")
	if got := found(t, h, "tomatoes"); len(got) != 0 {
		t.Errorf("old text still found: %v", got)
	}
	if got := found(t, h, "cucumbers"); !reflect.DeepEqual(got, []string{"knowledge/garden.md"}) {
		t.Errorf("edited text: %v", got)
	}
	os.Remove(filepath.Join(h.NotebookDir(), "knowledge/garden.md"))
	if got := found(t, h, "cucumbers"); len(got) != 0 {
		t.Errorf("deleted page still found: %v", got)
	}
}

// TestRacyEdit: an edit that keeps the size and the mtime (as a coarse
// file-system clock can) right after indexing is still seen.
func TestRacyEdit(t *testing.T) {
	h := newHost(t)
	p := filepath.Join(h.NotebookDir(), "a.md")
	writePage(t, h, "a.md", "alpha\n")
	fi, _ := os.Stat(p)
	if got := found(t, h, "alpha"); len(got) != 1 {
		t.Fatalf("first: %v", got)
	}
	writePage(t, h, "a.md", "gamma\n")
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	if got := found(t, h, "gamma"); len(got) != 1 {
		t.Errorf("same-size same-mtime edit missed: %v", got)
	}
}

func TestDeletedDatabaseIsRebuilt(t *testing.T) {
	home := t.TempDir()
	h := openHost(t, home, nil)
	if _, err := h.Remember(context.Background(), memhost.RememberRequest{Text: "The wifi password is on the fridge"}); err != nil {
		t.Fatal(err)
	}
	h.Close()
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(home, "brain", "memory.db"+s))
	}
	h = openHost(t, home, nil)
	if got := found(t, h, "wifi password"); !reflect.DeepEqual(got, []string{"knowledge/facts.md"}) {
		t.Errorf("after deleting memory.db: %v", got)
	}
}

func TestCorruptDatabaseIsMovedAside(t *testing.T) {
	home := t.TempDir()
	h := openHost(t, home, nil)
	writePage(t, h, "a.md", "# A\nzebra crossing\n")
	h.Close()
	db := filepath.Join(home, "brain", "memory.db")
	for _, s := range []string{"-wal", "-shm"} {
		os.Remove(db + s)
	}
	if err := os.WriteFile(db, []byte(strings.Repeat("not a database ", 500)), 0o644); err != nil {
		t.Fatal(err)
	}
	h = openHost(t, home, nil)
	if got := found(t, h, "zebra"); !reflect.DeepEqual(got, []string{"a.md"}) {
		t.Errorf("after corrupting memory.db: %v", got)
	}
}

func TestBadPagesAreReportedNotFatal(t *testing.T) {
	h := newHost(t)
	writePage(t, h, "bad.md", "# Bad\nvalid words \xff\xfe then more kiwi\n")
	big := strings.Repeat("## Section\n"+strings.Repeat("filler text for a big page ", 40)+"\n", 10<<20/1100)
	writePage(t, h, "big.md", big+"## End\nunicorn\n")
	writePage(t, h, "huge.md", strings.Repeat("x", MaxPageBytes+1))
	writePage(t, h, ".obsidian/workspace.md", "kiwi")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("kiwi secret"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(h.NotebookDir(), "link.md"))

	res, err := h.Sync(context.Background(), memhost.SyncRequest{})
	if err != nil {
		t.Fatal(err)
	}
	problems := map[string]string{}
	for _, p := range res.Problems {
		problems[p.Path] = p.Problem
	}
	for _, p := range []string{"bad.md", "huge.md", "link.md"} {
		if problems[p] == "" {
			t.Errorf("no problem reported for %s (got %v)", p, problems)
		}
	}
	if got := found(t, h, "kiwi"); !reflect.DeepEqual(got, []string{"bad.md"}) {
		t.Errorf("kiwi found in %v, want only bad.md", got)
	}
	if got := found(t, h, "unicorn"); !reflect.DeepEqual(got, []string{"big.md"}) {
		t.Errorf("end of the 10 MB page: %v", got)
	}
	if got := readPage(t, h, "bad.md"); !strings.Contains(got, "\xff\xfe") {
		t.Error("the page with invalid UTF-8 was changed")
	}
}

// TestRebuildAnswersLikeIncremental: an index built by many small syncs
// and one rebuilt from scratch answer every query identically.
func TestRebuildAnswersLikeIncremental(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	for i := range 30 {
		text := fmt.Sprintf("Note %d about %s and the %s project", i, []string{"meetings", "coffee", "budget"}[i%3], []string{"alpha", "beta"}[i%2])
		if _, err := h.Remember(ctx, memhost.RememberRequest{Text: text, Section: fmt.Sprintf("Week %d", i%4)}); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			if _, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: text}); err != nil {
				t.Fatal(err)
			}
		}
	}
	writePage(t, h, "knowledge/budget.md", "# Budget\n\n## Q1\nThe budget for alpha is tight.\n")
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/facts.md", Section: "Week 1", Text: "- replaced week one", Replace: true}); err != nil {
		t.Fatal(err)
	}
	queries := []string{"meeting", "coffee alpha", "budget", "week one", "project beta", "note 7"}
	answers := func() []memhost.RecallResults {
		var out []memhost.RecallResults
		for _, q := range queries {
			r, err := h.Recall(ctx, memhost.RecallRequest{Query: q, MaxResults: 50, MinScore: new(float64)})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r.Results)
		}
		return out
	}
	before := answers()
	res, err := h.Rebuild(ctx, memhost.RebuildRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Indexed == 0 {
		t.Fatalf("rebuild indexed nothing: %+v", res)
	}
	after := answers()
	if !reflect.DeepEqual(before, after) {
		t.Errorf("rebuilt index answers differently:\nbefore %+v\nafter  %+v", before, after)
	}
	if len(before[0].Notebook) == 0 || len(before[0].Daily) == 0 {
		t.Errorf("test queries found too little to compare: %+v", before[0])
	}
	matches, _ := filepath.Glob(filepath.Join(h.Home(), "brain", "*rebuild*"))
	if len(matches) > 0 {
		t.Errorf("rebuild left files behind: %v", matches)
	}
}

// TestConcurrentHosts: two Hosts on one home (as two processes) remember,
// sync and recall at once; every entry lands on the page and in the index.
func TestConcurrentHosts(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	hosts := []*Host{openHost(t, home, nil), openHost(t, home, nil)}
	var wg sync.WaitGroup
	const each = 15
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := hosts[w%2]
			for i := range each {
				if _, err := h.Remember(ctx, memhost.RememberRequest{Text: fmt.Sprintf("fact w%dn%d", w, i), File: "shared", Category: "knowledge"}); err != nil {
					t.Errorf("Remember: %v", err)
				}
				if _, err := h.Recall(ctx, memhost.RecallRequest{Query: "fact"}); err != nil {
					t.Errorf("Recall: %v", err)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 10 {
			if _, err := hosts[1].Sync(ctx, memhost.SyncRequest{}); err != nil {
				t.Errorf("Sync: %v", err)
			}
		}
	}()
	wg.Wait()
	page := readPage(t, hosts[0], "knowledge/shared.md")
	for w := range 4 {
		for i := range each {
			entry := fmt.Sprintf("- fact w%dn%d\n", w, i)
			if !strings.Contains(page, entry) {
				t.Errorf("lost %q", entry)
			}
			q := fmt.Sprintf("w%dn%d", w, i)
			if got := found(t, hosts[w%2], q); len(got) != 1 {
				t.Errorf("recall %s = %v", q, got)
			}
		}
	}
}

func TestWatch(t *testing.T) {
	h := openHost(t, t.TempDir(), func(c *config.Config) {
		c.Memory.Sync.WatchDebounceMs = 50
		c.Memory.Sync.SyncOnSearch = false // prove the watcher did the indexing
	})
	ctx, cancel := context.WithCancel(context.Background())
	synced := make(chan memhost.SyncResult, 16)
	done := make(chan error, 1)
	go func() { done <- h.Watch(ctx, WatchRequest{OnSync: func(r memhost.SyncResult) { synced <- r }}) }()
	<-synced // the first sync
	// A page in a folder made after the watcher started.
	writePage(t, h, "projects/new/plan.md", "# Plan\nlaunch the rocket\n")
	deadline := time.After(10 * time.Second)
	for len(found(t, h, "rocket")) == 0 {
		select {
		case r := <-synced:
			t.Logf("synced %v", r.Paths)
		case <-deadline:
			t.Fatal("watcher did not index the new page")
		}
	}
	// A transcript written by another program is indexed too.
	os.WriteFile(filepath.Join(h.Home(), "sessions", "ext.jsonl"), []byte(`{"id":"1","type":"message","role":"user","content":"launch the zeppelin"}`+"\n"), 0o644)
	deadline = time.After(10 * time.Second)
	for {
		r, err := h.ConversationSearch(context.Background(), memhost.ConversationSearchRequest{Query: "zeppelin"})
		if err == nil && len(r.Results) == 1 {
			break
		}
		select {
		case <-synced:
		case <-deadline:
			t.Fatal("watcher did not index the new transcript")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch returned %v", err)
	}
}

// TestWatchFreshness: while Watch runs, a search syncs only the pages the
// watcher's events named (no stat of every page), and still sees an edit
// made behind memhost's back at once, long before the debounce.
func TestWatchFreshness(t *testing.T) {
	h := openHost(t, t.TempDir(), func(c *config.Config) {
		c.Memory.Sync.WatchDebounceMs = 3_600_000 // the watcher's own sync never fires
	})
	for _, p := range []string{"reference/a.md", "reference/b.md", "lists/c.md"} {
		writePage(t, h, p, "# "+p+"\nplain words\n")
	}
	ctx, cancel := context.WithCancel(context.Background())
	synced := make(chan memhost.SyncResult, 16)
	done := make(chan error, 1)
	go func() { done <- h.Watch(ctx, WatchRequest{OnSync: func(r memhost.SyncResult) { synced <- r }}) }()
	if first := <-synced; first.Scanned != 3 {
		t.Fatalf("first sync scanned %d pages, want 3", first.Scanned)
	}
	fresh := func() memhost.SyncResult {
		t.Helper()
		res, err := h.indexer.Fresh(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := fresh(); res.Scanned != 0 || res.Indexed != 0 {
		t.Fatalf("nothing changed, yet Fresh scanned %d and indexed %d", res.Scanned, res.Indexed)
	}
	// The event reaches the watcher's goroutine a moment after the write.
	waitFor := func(what string, ok func(memhost.SyncResult) bool) memhost.SyncResult {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		var total memhost.SyncResult
		for time.Now().Before(deadline) {
			res := fresh()
			total.Scanned += res.Scanned
			total.Indexed += res.Indexed
			total.Removed += res.Removed
			if ok(total) {
				return total
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("%s: Fresh never saw it (%+v)", what, total)
		return total
	}
	writePage(t, h, "reference/b.md", "# b\nthe zeppelin lands\n")
	res := waitFor("edit", func(r memhost.SyncResult) bool { return r.Indexed == 1 })
	if res.Scanned != 1 {
		t.Errorf("an edit of one page scanned %d pages, want 1", res.Scanned)
	}
	if got := found(t, h, "zeppelin"); len(got) != 1 || got[0] != "reference/b.md" {
		t.Errorf("recall zeppelin = %v", got)
	}
	os.Remove(filepath.Join(h.NotebookDir(), "lists", "c.md"))
	waitFor("removal", func(r memhost.SyncResult) bool { return r.Removed == 1 })
	// A folder moved: its pages cannot be named from the event, so
	// everything is scanned.
	if err := os.Rename(filepath.Join(h.NotebookDir(), "reference"), filepath.Join(h.NotebookDir(), "people")); err != nil {
		t.Fatal(err)
	}
	res = waitFor("folder move", func(r memhost.SyncResult) bool { return r.Removed == 2 })
	if res.Indexed != 2 {
		t.Errorf("after a folder move Fresh indexed %d pages, want 2 (people/a.md, people/b.md)", res.Indexed)
	}
	if got := found(t, h, "zeppelin"); len(got) != 1 || got[0] != "people/b.md" {
		t.Errorf("recall zeppelin after the move = %v", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch returned %v", err)
	}
	// Without a watcher Fresh is a full sync again.
	if res := fresh(); res.Scanned != 2 {
		t.Errorf("Fresh without a watcher scanned %d pages, want 2", res.Scanned)
	}
}

// TestWatchFreshConcurrent: two searches at once after an edit both see
// it: the second waits for the first one's sync of the dirty pages instead
// of finding the dirty set empty and searching the index as it was.
func TestWatchFreshConcurrent(t *testing.T) {
	h := openHost(t, t.TempDir(), func(c *config.Config) {
		c.Memory.Sync.WatchDebounceMs = 3_600_000 // only searches sync
	})
	writePage(t, h, "reference/a.md", "# a\nnothing yet\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	synced := make(chan memhost.SyncResult, 4)
	go h.Watch(ctx, WatchRequest{OnSync: func(r memhost.SyncResult) { synced <- r }})
	<-synced
	misses := 0
	for i := range 30 {
		word := fmt.Sprintf("zeppelin%d", i)
		// A long page: its sync takes long enough for the others to race it.
		writePage(t, h, "reference/a.md", "# a\n"+word+"\n"+strings.Repeat("## section\nsome words of filler text here\n", 3000))
		// No wait for the watcher: each search's Fresh waits for the
		// watcher's cookie event, so the edit's event has been taken in
		// before any of them looks at the dirty set.
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := h.Recall(context.Background(), memhost.RecallRequest{Query: word})
				if err != nil {
					t.Error(err)
					return
				}
				if len(resp.Results.Notebook) != 1 {
					mu.Lock()
					misses++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	if misses > 0 {
		t.Errorf("%d of 90 concurrent searches missed an edit made just before", misses)
	}
}

// TestTextCannotStartSections: an entry, a daily-log entry or a section's
// content with an H1/H2 line is refused, the page untouched; a retried
// section replace used to add the heading's section again each time, and
// entries remembered after it landed under it.
func TestTextCannotStartSections(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	text := "line one\n## Injected\n- x"
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: text}); fault.KindOf(err) != fault.BadInput || !strings.Contains(err.Error(), `"## Injected", line 2`) {
		t.Errorf("remember: %v", err)
	}
	if _, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "standup\n" + text}); fault.KindOf(err) != fault.BadInput || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("daily-log: %v", err)
	}
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/y.md", Section: "S", Replace: true, Text: "new\n## Other\nstuff"}); fault.KindOf(err) != fault.BadInput {
		t.Errorf("write --section: %v", err)
	}
	// Setext headings too: a line of = or - under text makes it an H1/H2
	// in every other reader of the page (the dashboard, Obsidian).
	for _, setext := range []string{"intro\nPlanted\n=======\nmore", "Planted\n---", "  Planted\n  ==="} {
		if _, err := h.Remember(ctx, memhost.RememberRequest{Text: setext}); fault.KindOf(err) != fault.BadInput || !strings.Contains(err.Error(), "Planted") {
			t.Errorf("remember %q: %v", setext, err)
		}
	}
	if files, _ := os.ReadDir(filepath.Join(h.NotebookDir(), "knowledge")); len(files) != 0 {
		t.Errorf("refused writes left %d pages", len(files))
	}
	// A rule after a blank line or a list, and = in code, are no headings.
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "a\n\n---\n- item\n---\n```\nx\n===\n```"}); err != nil {
		t.Errorf("remember with rules and code: %v", err)
	}
	// Lower headings and code are fine; a whole page may hold any heading.
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "steps:\n### One\n```\n## not a heading\n```"}); err != nil {
		t.Errorf("remember with ### and code: %v", err)
	}
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/page.md", Text: "# Page\n## Part\ntext"}); err != nil {
		t.Errorf("whole page: %v", err)
	}
}
