package indexer

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/index"
)

// newIndexer opens an Indexer over a fresh home in a temporary folder.
func newIndexer(t testing.TB) *Indexer {
	t.Helper()
	home := t.TempDir()
	for _, d := range []string{"notebook/knowledge", "sessions", "brain"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	nb, err := notebook.Open(filepath.Join(home, "notebook"), filepath.Join(home, "brain", "notebook.lock"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := index.Open(context.Background(), filepath.Join(home, "brain", "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg := config.Default()
	cfg.Memory.Sync.WatchDebounceMs = 10
	return New(Options{Notebook: nb, SessionsDir: filepath.Join(home, "sessions"), Index: db,
		Config: func() *config.Config { return &cfg }, Now: time.Now, CookieDir: filepath.Join(home, "brain", "watch"),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// startWatch runs Watch until the test ends and waits for its first sync.
func startWatch(t testing.TB, x *Indexer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	synced := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		done <- x.Watch(ctx, func(memhost.SyncResult) { once.Do(func() { close(synced) }) }, nil)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("watch: %v", err)
		}
	})
	select {
	case <-synced:
	case err := <-done:
		t.Fatalf("watch ended at start: %v", err)
	}
}

// TestFreshSeesEditJustMade: an edit saved by an editor right before a
// recall is in the index the recall searches, however busy the machine
// (memhost serve answered a recall from before a hand edit under load:
// the watcher's event was still in the kernel's queue, unread, when the
// recall took the events that had arrived).
func TestFreshSeesEditJustMade(t *testing.T) {
	x := newIndexer(t)
	page := filepath.Join(x.opts.Notebook.Root(), "knowledge", "edited.md")
	if err := os.WriteFile(page, []byte("# Edited\nfirst\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startWatch(t, x)
	// A busy machine: as many spinning goroutines as processors.
	stop := make(chan struct{})
	var spin sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		spin.Add(1)
		go func() {
			defer spin.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	defer func() { close(stop); spin.Wait() }()
	ctx := context.Background()
	for i := range 200 {
		text := fmt.Sprintf("# Edited\nversion %d %s\n", i, strings.Repeat("x", i))
		if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Fresh(ctx); err != nil {
			t.Fatal(err)
		}
		files, err := x.opts.Index.Files(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := files["knowledge/edited.md"].Size; got != int64(len(text)) {
			t.Fatalf("edit %d: the index holds a page of %d bytes, the editor saved %d", i, got, len(text))
		}
	}
}

// TestWatchEndsCleanly: Watch ends without an error when its context ends,
// even in the middle of a sync (memhost watch said "context canceled" and
// exited 1 on Ctrl-C when a sync was running).
func TestWatchEndsCleanly(t *testing.T) {
	t.Parallel()
	x := newIndexer(t)
	for i := range 50 {
		os.WriteFile(filepath.Join(x.opts.Notebook.Root(), "knowledge", fmt.Sprintf("p%d.md", i)), []byte("# P\nsome text\n"), 0o644)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // ends before the first sync is done
	if err := x.Watch(ctx, nil, nil); err != nil {
		t.Fatalf("watch cancelled during its first sync: %v", err)
	}
}

// TestCookieFolderRemoved: brain/watch is removed and made again while
// memhost watches; the watcher watches the new folder, so a recall still
// sees an edit made just before it without waiting out cookieWait.
func TestCookieFolderRemoved(t *testing.T) {
	x := newIndexer(t)
	startWatch(t, x)
	// Removed and made again at once (a cleanup script, a restore): the
	// new folder is not the one watched.
	if err := os.RemoveAll(x.opts.CookieDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(x.opts.CookieDir, 0o755); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(x.opts.Notebook.Root(), "knowledge", "after.md")
	ctx := context.Background()
	for i := range 20 {
		text := fmt.Sprintf("# After\nversion %d %s\n", i, strings.Repeat("y", i))
		if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := x.Fresh(ctx); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) >= cookieWait {
			t.Fatalf("edit %d: Fresh waited out the cookie (%v): the folder was not watched again", i, time.Since(start))
		}
		files, err := x.opts.Index.Files(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := files["knowledge/after.md"].Size; got != int64(len(text)) {
			t.Fatalf("edit %d: the index holds %d bytes, the editor saved %d", i, got, len(text))
		}
	}
}
