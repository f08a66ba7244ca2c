package config

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestLiveReloadsAndEdits: an edit replaces the snapshot without touching
// the one a caller holds; a changed file is read again; a bad one is
// logged and the settings in force stay. Readers and editors run at once
// under -race.
func TestLiveReloadsAndEdits(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, []byte("memory:\n  search:\n    maxResults: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(string) string { return "" }
	cfg, err := Load(path, getenv)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLive(path, cfg, getenv, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	// The clock of reloadCheck, advanced by the test.
	var clockMu sync.Mutex
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l.now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	advance := func(d time.Duration) { clockMu.Lock(); clock = clock.Add(d); clockMu.Unlock() }
	// write replaces the file with a new mtime, as an editor a second
	// later would.
	mtime := time.Now()
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		mtime = mtime.Add(time.Second)
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	held := l.Get()
	l.Edit(func(c *Config) {
		c.Memory.Embedding.Plugin = "hello"
		c.Memory.Embedding.Options["hello"] = map[string]string{"dimensions": "64"}
	})
	if held.Memory.Embedding.Plugin != "" || len(held.Memory.Embedding.Options) != 0 {
		t.Fatalf("the held snapshot changed: %+v", held.Memory.Embedding)
	}
	if got := l.Get().Memory.Embedding.Options["hello"]["dimensions"]; got != "64" {
		t.Fatalf("after Edit: dimensions %q", got)
	}

	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() { defer wg.Done(); _ = l.Get().Memory.Search.MaxResults; _ = l.Location() }()
		go func() { defer wg.Done(); l.Edit(func(c *Config) { c.Memory.Search.MinScore = 0.3 }) }()
	}
	wg.Wait()

	// Another process edits the file: read again after reloadCheck, not
	// before.
	advance(reloadCheck + 10*time.Millisecond)
	_ = l.Get() // looked at the file now
	write("memory:\n  search:\n    maxResults: 9\n")
	if got := l.Get().Memory.Search.MaxResults; got != 7 {
		t.Fatalf("within reloadCheck of the last look: maxResults %d, want 7 still", got)
	}
	advance(reloadCheck + 10*time.Millisecond)
	if got := l.Get().Memory.Search.MaxResults; got != 9 {
		t.Fatalf("after the file changed: maxResults %d, want 9", got)
	}
	// A bad file keeps the settings in force.
	advance(reloadCheck + 10*time.Millisecond)
	write("memory:\n  search:\n    maxResults: many\n")
	if got := l.Get().Memory.Search.MaxResults; got != 9 {
		t.Fatalf("after a bad edit: maxResults %d, want 9 kept", got)
	}
	if l.Err() == nil {
		t.Error("after a bad edit: Err is nil")
	}
}
