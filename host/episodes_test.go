package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/health"
)

// TestEpisodesOnSessionEnd: the session-end and stop hooks write the
// episode log of the transcript's day, publish it on the change bus, and
// the page is found by recall but not counted again by a search of the
// transcripts (conversation-search, recall with the sessions group).
func TestEpisodesOnSessionEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := openHost(t, t.TempDir(), func(c *config.Config) { c.Timezone = "UTC" })
	var mu sync.Mutex
	var published []string
	cancel := h.Subscribe(func(c memhost.Change) {
		if c.Op == "episodes" {
			mu.Lock()
			published = append(published, c.Paths...)
			mu.Unlock()
		}
	})
	defer cancel()
	transcript := filepath.Join(t.TempDir(), "4f35e220-c435.jsonl")
	data, err := os.ReadFile("testdata/claude/4f35e220-c435.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(transcript, data, 0o644)
	payload := func(name string) []byte {
		b, err := os.ReadFile("testdata/hooks/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		return []byte(strings.ReplaceAll(string(b), "TRANSCRIPT", transcript))
	}
	if _, err := hook(ctx, h, memhost.HookSessionEnd, payload("session-end")); err != nil {
		t.Fatal(err)
	}
	const rel = "episodes/2025-05-26.md"
	page := readPage(t, h, rel)
	for _, want := range []string{"date: 2025-05-26\n", "generated: memhost\n", "## Session: claude-4f35e220-c435 (07:27 - ", "### User (07:27)\nPlease add a config file for the staging database\n"} {
		if !strings.Contains(page, want) {
			t.Fatalf("no %q in %s:\n%s", want, rel, page)
		}
	}

	os.WriteFile(transcript, append(data, []byte(`{"sessionId":"4f35e220-c435","type":"user","message":{"role":"user","content":"one more thing about kiwis"},"uuid":"u9","timestamp":"2025-05-26T08:00:00.000Z"}`+"\n")...), 0o644)
	for range 2 { // a Stop after every reply; the second finds nothing new
		if _, err := hook(ctx, h, memhost.HookStop, payload("stop")); err != nil {
			t.Fatal(err)
		}
	}
	page = readPage(t, h, rel)
	if n := strings.Count(page, "one more thing about kiwis"); n != 1 || !strings.Contains(page, "### User (08:00)") {
		t.Fatalf("the new turn is on the page %d times:\n%s", n, page)
	}
	mu.Lock()
	if got := strings.Join(published, ","); got != rel+","+rel {
		t.Errorf("published %q, want the page once per write", got)
	}
	mu.Unlock()

	r, err := h.Recall(ctx, memhost.RecallRequest{Query: "kiwis"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results.Notebook) != 1 || r.Results.Notebook[0].Path != rel {
		t.Errorf("recall of the episode log: %+v", r.Results)
	}
	r, err = h.Recall(ctx, memhost.RecallRequest{Query: "kiwis", Sources: []string{"notebook", "sessions"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results.Notebook) != 0 || len(r.Results.Sessions) != 1 {
		t.Errorf("a recall of the transcripts finds the turn once, not again in its episode log: %+v", r.Results)
	}
	cs, err := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "kiwis"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Results) != 1 || cs.Results[0].Session != "claude-4f35e220-c435" {
		t.Errorf("conversation-search counts the turn once, from its transcript: %+v", cs.Results)
	}
}

// TestHealthEpisodeLog: conversations today without their episode log
// warn, so does a log that fell behind; a current log, a conversation
// under way and a quiet day do not.
func TestHealthEpisodeLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "sessions"), 0o755)
	files, _ := filepath.Glob("episodes/testdata/sessions/*.jsonl")
	for _, f := range files {
		data, _ := os.ReadFile(f)
		os.WriteFile(filepath.Join(home, "sessions", filepath.Base(f)), data, 0o644)
	}
	// The 14th, 12:00 UTC: the notes session's reply at 00:10 is today's.
	c := &clock{t: time.Date(2026, 2, 14, 12, 0, 0, 0, time.UTC)}
	cfg := config.Default()
	cfg.Timezone = "UTC"
	h, err := Open(ctx, Options{Home: home, Config: cfg, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	dailyLog := func(want memhost.HealthStatus, words string) {
		t.Helper()
		got := status(t, checkHealth(t, h, memhost.HealthRequest{}), "daily-log")
		if got.Status != want || !strings.Contains(got.Message, words) {
			t.Fatalf("daily-log %s (%q), want %s with %q", got.Status, got.Message, want, words)
		}
	}
	dailyLog(health.Warn, "1 messages in conversations today but no episode log (episodes/2026-02-14.md)")
	if _, err := h.Episodes(ctx, memhost.EpisodesRequest{}); err != nil {
		t.Fatal(err)
	}
	dailyLog(health.Pass, "episodes/2026-02-14.md holds today's 1 messages")
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "notes", Role: "user", Text: "Ship it."}); err != nil {
		t.Fatal(err)
	}
	dailyLog(health.Pass, "a conversation is under way (last message at 12:00)")
	c.set(time.Date(2026, 2, 14, 12, 30, 0, 0, time.UTC))
	dailyLog(health.Warn, "episodes/2026-02-14.md is out of date")
	c.set(time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC))
	dailyLog(health.Pass, "no conversation today")
}

// TestEpisodesOnSchedule: under Watch (memhost serve), the schedule
// writes today's episode log of a conversation that has no end.
func TestEpisodesOnSchedule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 2, 13, 10, 32, 0, 0, time.UTC)}
	cfg := config.Default()
	cfg.Timezone = "UTC"
	cfg.Memory.Episodes.EveryMin = 2
	h, err := Open(ctx, Options{Home: t.TempDir(), Config: cfg, Now: c.now, ScheduleMinute: 10 * time.Millisecond}) // a "minute"
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "wa-ada", Role: "user", Text: "Running late, start without me.", Channel: "whatsapp", SourceID: "919876543210"}); err != nil {
		t.Fatal(err)
	}
	written := make(chan []string, 16)
	defer h.Subscribe(func(c memhost.Change) {
		if c.Op == "episodes" {
			written <- c.Paths
		}
	})()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Watch(wctx, WatchRequest{}) }()
	select {
	case paths := <-written:
		if strings.Join(paths, ",") != "episodes/2026-02-13.md" {
			t.Fatalf("the schedule wrote %v", paths)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no scheduled episode log in 30 s")
	}
	stop()
	<-done
	if page := readPage(t, h, "episodes/2026-02-13.md"); !strings.Contains(page, "## Session: whatsapp/919876543210 (10:32 - 10:32)") {
		t.Fatalf("page:\n%s", page)
	}
}

// TestEpisodesOnSessionAppendEnd: a turn that ends its session (end)
// writes the session's episode log; other turns do not.
func TestEpisodesOnSessionAppendEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 2, 13, 11, 15, 0, 0, time.UTC)}
	cfg := config.Default()
	cfg.Timezone = "UTC"
	h, err := Open(ctx, Options{Home: t.TempDir(), Config: cfg, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	page := filepath.Join(h.NotebookDir(), "episodes", "2026-02-13.md")
	for _, end := range []bool{false, true, true} { // the retry of the last writes nothing new
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{ID: fmt.Sprintf("w-%v", end), Session: "wa-ada", Role: "user", Text: "Thanks, bye!", Channel: "whatsapp", SourceID: "919876543210", End: end}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(page); (err == nil) != end {
			t.Fatalf("end %v: the page exists: %v", end, err == nil)
		}
	}
	if got := readPage(t, h, "episodes/2026-02-13.md"); strings.Count(got, "Thanks, bye!") != 2 || !strings.Contains(got, "total_messages: 2\n") {
		t.Fatalf("page:\n%s", got)
	}
}
