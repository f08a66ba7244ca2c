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
	"github.com/memhost/memhost/host/health"
)

// TestManyWritersAcrossHosts is the concurrency harness
// (docs/design-notes.md, "Writes and concurrency"): 20 writers of every
// kind (remember, section writes, daily log, session appends, ingest of
// the same and of different transcripts) at once on one home, spread over
// four Hosts as over four processes (each with its own index handle and
// indexer lock), with a watcher, syncs, rebuilds and recalls running
// meanwhile. Afterwards every write is on disk exactly once and
// indexed exactly once, and no caller saw an error — SQLITE_BUSY and
// "database is locked" included.
func TestManyWritersAcrossHosts(t *testing.T) {
	home := t.TempDir()
	hosts := make([]*Host, 4)
	for i := range hosts {
		hosts[i] = openHost(t, home, nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	watchCtx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan error, 1)
	go func() { watchDone <- hosts[0].Watch(watchCtx, WatchRequest{}) }()

	// Transcripts to ingest: two distinct files, each ingested by several
	// writers at once, and one of the same name in another folder.
	src := t.TempDir()
	var sources []string
	for i, dir := range []string{"a", "b", "c"} {
		name := "talk.jsonl"
		if i == 1 {
			name = "other.jsonl"
		}
		p := filepath.Join(src, dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		var lines []string
		for j := range 30 {
			lines = append(lines, fmt.Sprintf(`{"id":"%s-%d","role":"user","content":"ingested marker %s-%d about walruses"}`, dir, j, dir, j))
		}
		os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		sources = append(sources, p)
	}

	const writers, rounds = 20, 5
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	fail := func(op string, err error) {
		if err != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("%s: %w", op, err))
			mu.Unlock()
		}
	}
	for w := range writers {
		h := hosts[w%len(hosts)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				marker := fmt.Sprintf("w%dr%d", w, r)
				var err error
				switch w % 5 {
				case 0:
					_, err = h.Remember(ctx, memhost.RememberRequest{Text: "remembered " + marker + " about owls", Category: "reference", File: "owls"})
				case 1:
					_, err = h.Write(ctx, memhost.WriteRequest{Path: "knowledge/herons.md", Text: "heron fact " + marker + " noted", Section: fmt.Sprintf("Writer %d", w)})
				case 2:
					_, err = h.DailyLog(ctx, memhost.DailyLogRequest{Text: "logged " + marker + " at the lake"})
				case 3:
					_, err = h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "shared", Role: "user", Text: "appended " + marker + " about ducks"})
				case 4:
					_, err = h.Ingest(ctx, memhost.IngestRequest{Paths: []string{sources[(w/5+r)%len(sources)]}})
				}
				fail(marker, err)
			}
		}()
	}
	var loops sync.WaitGroup
	done := make(chan struct{})
	loop := func(fn func()) {
		loops.Add(1)
		go func() {
			defer loops.Done()
			for {
				select {
				case <-done:
					return
				default:
					fn()
				}
			}
		}()
	}
	loop(func() { _, err := hosts[1].Sync(ctx, memhost.SyncRequest{}); fail("sync", err) })
	loop(func() {
		_, err := hosts[2].Rebuild(ctx, memhost.RebuildRequest{})
		fail("rebuild", err)
		time.Sleep(100 * time.Millisecond)
	})
	loop(func() {
		_, err := hosts[3].Recall(ctx, memhost.RecallRequest{Query: "owls ducks walruses", Sources: []string{SourceNotebook, SourceDaily, SourceSessions}})
		fail("recall", err)
	})
	wg.Wait()
	close(done)
	loops.Wait()
	stopWatch()
	if err := <-watchDone; err != nil && ctx.Err() == nil {
		fail("watch", err)
	}
	for _, err := range errs {
		t.Error(err)
	}

	// On disk: every write once.
	h := hosts[0]
	var disk strings.Builder
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".jsonl")) && !strings.Contains(p, "/.") {
			b, _ := os.ReadFile(p)
			disk.Write(b)
		}
		return nil
	})
	for w := range writers {
		for r := range rounds {
			marker := fmt.Sprintf("w%dr%d ", w, r)
			if w%5 == 4 {
				continue
			}
			if n := strings.Count(disk.String(), marker); n != 1 {
				t.Errorf("%s is on disk %d times", marker, n)
			}
		}
	}
	for _, dir := range []string{"a", "b", "c"} {
		for j := range 30 {
			m := fmt.Sprintf("ingested marker %s-%d ", dir, j)
			if n := strings.Count(disk.String(), m); n != 1 {
				t.Errorf("%q is on disk %d times", m, n)
			}
		}
	}
	// In the index: every file as on disk, every turn once, no drift.
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	r := checkHealth(t, h, memhost.HealthRequest{})
	for _, name := range []string{"database", "index-drift", "pages", "transcripts"} {
		if c := status(t, r, name); c.Status != health.Pass {
			t.Errorf("%s: %s %s", name, c.Status, c.Message)
		}
	}
}
