package host

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/health"
	"github.com/memhost/memhost/internal/damage"
)

func checkHealth(t *testing.T, h *Host, req memhost.HealthRequest) memhost.HealthResponse {
	t.Helper()
	resp, err := h.Health(context.Background(), req)
	if err != nil {
		t.Fatalf("Health(%+v): %v", req, err)
	}
	return resp
}

// status returns the status of the named check.
func status(t *testing.T, r memhost.HealthResponse, name string) memhost.HealthCheck {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, r.Checks)
	return memhost.HealthCheck{}
}

// healthyHost has a page, today's daily log and a transcript.
func healthyHost(t *testing.T) *Host {
	t.Helper()
	ctx := context.Background()
	h := newHost(t)
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "Sarah Chen's phone is 555-1234"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "met Sarah"}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: fmt.Sprintf("turn number %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestHealthHealthy(t *testing.T) {
	h := healthyHost(t)
	r := checkHealth(t, h, memhost.HealthRequest{})
	if r.Overall != health.Healthy {
		t.Fatalf("overall %s: %+v", r.Overall, r.Checks)
	}
	if c := status(t, r, "transcripts"); !strings.Contains(c.Message, "3 turns in 1 transcript,") {
		t.Errorf("transcripts: %+v", c)
	}
	b, err := os.ReadFile(filepath.Join(h.Home(), "health", "latest-report.md"))
	if err != nil || !strings.Contains(string(b), "last_status: HEALTHY") || r.ReportPath != filepath.Join(h.Home(), "health", "latest-report.md") {
		t.Fatalf("report %s: %q, %v", r.ReportPath, b, err)
	}
	// Into the notebook: HEARTBEAT.md, indexed with the rest.
	r = checkHealth(t, h, memhost.HealthRequest{IntoNotebook: true})
	if _, err := os.Stat(filepath.Join(h.NotebookDir(), "HEARTBEAT.md")); err != nil || r.ReportPath != filepath.Join(h.NotebookDir(), "HEARTBEAT.md") {
		t.Fatalf("HEARTBEAT.md: %v (%s)", err, r.ReportPath)
	}
	if r := checkHealth(t, h, memhost.HealthRequest{}); r.Overall != health.Healthy {
		t.Fatalf("after HEARTBEAT.md: %s %+v", r.Overall, r.Checks)
	}
}

// TestHealthNoDailyLogIsNoFault: a day without an entry is an ordinary day.
func TestHealthNoDailyLogIsNoFault(t *testing.T) {
	h := newHost(t)
	r := checkHealth(t, h, memhost.HealthRequest{})
	if c := status(t, r, "daily-log"); c.Status != health.Pass || r.Overall != health.Healthy {
		t.Fatalf("overall %s, daily-log %+v", r.Overall, c)
	}
}

// rawDB opens the home's index with plain SQL, to damage it.
func rawDB(t *testing.T, h *Host) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+h.idx.Path()+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestHealthDriftAndRepair(t *testing.T) {
	h := healthyHost(t)
	db := rawDB(t, h)
	mustExec(t, db, `DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE source = 'notebook')`)
	r := checkHealth(t, h, memhost.HealthRequest{})
	if c := status(t, r, "index-drift"); c.Status != health.Warn || !strings.Contains(c.Message, "chunks without a full-text row") || r.Overall != health.Degraded {
		t.Fatalf("overall %s, drift %+v", r.Overall, c)
	}
	r = checkHealth(t, h, memhost.HealthRequest{Repair: true})
	if r.Overall != health.Healthy || len(r.Repairs) == 0 || !strings.Contains(r.Repairs[0], "rebuilt the index because it drifted") {
		t.Fatalf("after repair: %s %q %+v", r.Overall, r.Repairs, r.Checks)
	}
	if got := found(t, h, "sarah"); len(got) == 0 {
		t.Fatal("recall finds nothing after the repair")
	}
}

func TestHealthTranscripts(t *testing.T) {
	h := healthyHost(t)
	db := rawDB(t, h)
	// A turn indexed twice, as concurrent appends do, and one lost.
	mustExec(t, db, `INSERT INTO chunks(id, file_path, source, heading, start_line, end_line, text, context, hash, meta)
		SELECT id + 1000, file_path, source, heading, start_line, end_line, text, context, hash, meta FROM chunks
		WHERE source = 'sessions' AND start_line = 1`)
	mustExec(t, db, `INSERT INTO turns_fts(rowid, text, heading, context)
		SELECT id, text, heading, context FROM chunks WHERE source = 'sessions' AND start_line = 1 AND id % 1000 = id % 1000 AND id > (SELECT min(id) FROM chunks WHERE source = 'sessions') + 999`)
	mustExec(t, db, `DELETE FROM turns_fts WHERE rowid IN (SELECT id FROM chunks WHERE source = 'sessions' AND start_line = 3)`)
	mustExec(t, db, `DELETE FROM chunks WHERE source = 'sessions' AND start_line = 3`)
	// A write cut short.
	f, err := os.OpenFile(filepath.Join(h.Home(), "sessions", "s1.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"abc","type":"message","con`)
	f.Close()

	r := checkHealth(t, h, memhost.HealthRequest{})
	c := status(t, r, "transcripts")
	for _, want := range []string{"1 turn indexed more than once (1 extra chunk;", "1 turn missing from the index", "1 with an incomplete last line (sessions/s1.jsonl)"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("transcripts message %q lacks %q", c.Message, want)
		}
	}
	if c.Status != health.Warn {
		t.Errorf("transcripts status %s", c.Status)
	}
	if d := status(t, r, "index-drift"); d.Status != health.Pass {
		t.Errorf("the test damaged more than turns: %+v", d)
	}
	r = checkHealth(t, h, memhost.HealthRequest{Repair: true})
	c = status(t, r, "transcripts")
	if c.Status != health.Pass || !strings.Contains(strings.Join(r.Repairs, "\n"), "sessions/s1.jsonl: cut off an incomplete last line") {
		t.Errorf("after repair: %+v (repairs %q)", c, r.Repairs)
	}
}

func TestHealthCorruptIndex(t *testing.T) {
	home := t.TempDir()
	h := openHost(t, home, nil)
	for i := range 60 {
		writePage(t, h, fmt.Sprintf("knowledge/p%02d.md", i), strings.Repeat(fmt.Sprintf("Page %d holds words about topic %d. ", i, i*7), 40))
	}
	if _, err := h.Sync(context.Background(), memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	h.Close()
	damage.MiddleHalf(t, filepath.Join(home, "brain", "memory.db"))
	h = openHost(t, home, nil)
	r := checkHealth(t, h, memhost.HealthRequest{})
	// Open's quick check found the damage and moved the index aside.
	if c := status(t, r, "database"); c.Status != health.Warn || !strings.Contains(c.Message, "corrupt when opened") || r.Overall == health.Healthy {
		t.Fatalf("overall %s, database %+v", r.Overall, c)
	}
	r = checkHealth(t, h, memhost.HealthRequest{Repair: true})
	if c := status(t, r, "database"); c.Status != health.Pass {
		t.Fatalf("after repair: database %+v, repairs %q", c, r.Repairs)
	}
	if got := found(t, h, "topic"); len(got) == 0 {
		t.Fatal("recall finds nothing after the repair")
	}
}

// TestHealthLeakedFiles: files of dead processes are reported and a repair
// removes them; a live process's are left alone.
func TestHealthLeakedFiles(t *testing.T) {
	h := healthyHost(t)
	brain := filepath.Join(h.Home(), "brain")
	dead := filepath.Join(brain, fmt.Sprintf("memory.db.rebuild-%d", deadPID(t)))
	live := filepath.Join(brain, fmt.Sprintf("memory.db.rebuild-%d", os.Getppid()))
	stray := filepath.Join(brain, "old.db-wal")
	pageTemp := filepath.Join(h.NotebookDir(), "reference", ".memhost-tmp-123") // a page write killed before its rename
	os.MkdirAll(filepath.Dir(pageTemp), 0o755)
	// A server killed with SIGKILL: its state and socket stay, its lock
	// is free.
	serveFiles := []string{filepath.Join(brain, "serve.lock"), filepath.Join(brain, "serve.json"), filepath.Join(brain, "serve.sock")}
	for _, p := range append([]string{dead, dead + "-wal", live, stray, pageTemp}, serveFiles...) {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := checkHealth(t, h, memhost.HealthRequest{})
	c := status(t, r, "leaked-files")
	if c.Status != health.Warn || !strings.Contains(c.Message, "2 files of interrupted rebuilds") || !strings.Contains(c.Message, "brain/old.db-wal") ||
		!strings.Contains(c.Message, "1 temporary files of interrupted page writes (notebook/reference/.memhost-tmp-123)") ||
		!strings.Contains(c.Message, "2 files of a server that was killed (brain/serve.json, brain/serve.sock)") {
		t.Fatalf("leaked-files %+v", c)
	}
	r = checkHealth(t, h, memhost.HealthRequest{Repair: true})
	if c := status(t, r, "leaked-files"); c.Status != health.Pass || !strings.Contains(r.Repairs[0], "removed 6 leaked files") {
		t.Fatalf("after repair: leaked-files %+v, repairs %q", c, r.Repairs)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's rebuild file was removed: %v", err)
	}
}

// TestDeadEmbeddings: a chunk the provider always fails on is dead after
// health.deadAfterFailures runs: the rest is embedded, search is hybrid,
// health fails, and a repair queues it again.
func TestDeadEmbeddings(t *testing.T) {
	ctx := context.Background()
	h := semanticHost(t, func(c *config.Config) {
		c.Memory.Embedding.Plugin = "faulty"
		c.Health.DeadAfterFailures = 3
	}, "faulty")
	writePage(t, h, "poison.md", "nan")
	var err error
	for i := range 3 {
		if _, err = h.Embed(ctx, memhost.EmbedRequest{Sync: true}); err == nil {
			t.Fatalf("run %d: embedding %q succeeded", i, "nan")
		}
	}
	res, err := h.Embed(ctx, memhost.EmbedRequest{})
	if err != nil || res.Dead != 1 || res.Pending != 0 {
		t.Fatalf("after 3 failures: %+v, %v", res, err)
	}
	if r := recallOf(t, h, "sarah"); r.Mode != memhost.ModeHybrid {
		t.Errorf("a dead chunk keeps search keyword-only: %s", r.Reason)
	}
	if st, err := h.Status(ctx, memhost.StatusRequest{}); err != nil || st.Mode != memhost.ModeHybrid || st.Dead != 1 || st.Pending != 0 {
		t.Errorf("status with a dead chunk: mode %s (%s), %d dead, %d pending, %v", st.Mode, st.Reason, st.Dead, st.Pending, err)
	}
	r := checkHealth(t, h, memhost.HealthRequest{})
	c := status(t, r, "embedding-queue")
	if c.Status != health.Fail || !strings.Contains(c.Message, "1 chunks dead after 3 failed embeddings (first: poison.md line 1") || r.Overall != health.Unhealthy {
		t.Fatalf("overall %s, queue %+v", r.Overall, c)
	}
	if p := status(t, r, "embedding-provider"); p.Status != health.Pass || p.LatencyMs <= 0 {
		t.Errorf("provider %+v", p)
	}
	r = checkHealth(t, h, memhost.HealthRequest{Repair: true})
	if c := status(t, r, "embedding-queue"); c.Status != health.Pass || !strings.Contains(strings.Join(r.Repairs, "\n"), "queued 1 dead chunks for embedding again") {
		t.Fatalf("after repair: queue %+v, repairs %q", c, r.Repairs)
	}
}

// TestHealthAfterDeletingIndex follows the README: remember, delete
// brain/memory.db, the next command rebuilds it with every chunk waiting
// for a vector again. Nothing is wrong: the next search (or the background
// run) embeds them, from the cache. No daily log today is not a fault
// either.
func TestHealthAfterDeletingIndex(t *testing.T) {
	ctx := context.Background()
	strict := func(c *config.Config) {
		c.Memory.Embedding.Plugin = "hello"
		c.Health.PendingWarn, c.Health.PendingFail = 0, 1 // any pending chunk counted would fail
	}
	h := semanticHost(t, strict, "hello")
	home := h.Home()
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "Sarah Chen - Mobile: 555-1234"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Embed(ctx, memhost.EmbedRequest{Sync: true}); err != nil {
		t.Fatal(err)
	}
	h.Close()
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(home, "brain", "memory.db"+s))
	}
	h = openHost(t, home, strict)
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	r := checkHealth(t, h, memhost.HealthRequest{})
	q := status(t, r, "embedding-queue")
	if r.Overall != health.Healthy || q.Metadata["pending"].(int) == 0 {
		t.Fatalf("overall %s, queue %+v: %+v", r.Overall, q, r.Checks)
	}
	if want := "the next search or the background run embeds them"; !strings.Contains(q.Message, want) {
		t.Errorf("queue %q lacks %q", q.Message, want)
	}
	if d := status(t, r, "daily-log"); d.Status != health.Pass || !strings.Contains(d.Message, "no daily log for today yet") {
		t.Errorf("daily-log %+v", d)
	}
}

// TestWorkerStateSaysSinceWhenItFails: the worker records its progress
// and when its runs began to fail, by the host's clock, and health reports
// its queue stuck once that lasts past the grace.
func TestWorkerStateSaysSinceWhenItFails(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	b, err := os.ReadFile(pluginBinary(t, "faulty"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "plugins", "memhost-embeddings-faulty"), b, 0o755)
	cfg := config.Default()
	cfg.Memory.Embedding.Plugin = "faulty"
	cfg.Health.DeadAfterFailures = 1000 // never dead: stuck, not dead
	failed := make(chan struct{}, 1)
	log := slog.New(onWarn{func(msg string) {
		if strings.HasPrefix(msg, "embedding failed") {
			select {
			case failed <- struct{}{}:
			default:
			}
		}
	}})
	h, err := Open(ctx, Options{Home: home, Config: cfg, Now: clk.now, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	writePage(t, h, "good.md", "a page that embeds")
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	ran := make(chan struct{}, 1)
	h.queue.StartWorker(ctx, func(memhost.EmbedResult) { ran <- struct{}{} })
	<-ran
	if st := h.queue.WorkerState(); !st.Running || !st.Progress.Equal(clk.now()) || !st.FailingSince.IsZero() {
		t.Fatalf("after a good run: %+v", st)
	}
	// A text the provider refuses fails every run from now on.
	writePage(t, h, "poison.md", "nan")
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	failedAt := clk.now().Add(time.Minute)
	clk.set(failedAt)
	h.queue.Kick()
	<-failed
	if st := h.queue.WorkerState(); !st.FailingSince.Equal(failedAt) || !strings.Contains(st.Err, "failed to embed") {
		t.Fatalf("after a failed run: %+v", st)
	}
	clk.set(failedAt.Add(30 * time.Minute))
	r := checkHealth(t, h, memhost.HealthRequest{})
	q := status(t, r, "embedding-queue")
	if want := "stuck: the embedding worker fails since 2026-03-02T09:01:00Z (30m ago)"; q.Status != health.Warn || !strings.Contains(q.Message, want) {
		t.Fatalf("queue %+v, want warn with %q", q, want)
	}
}

// onWarn is a slog handler that passes each warning's message to f: the
// worker's failures are events a test can wait for.
type onWarn struct{ f func(msg string) }

func (onWarn) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w onWarn) Handle(_ context.Context, r slog.Record) error {
	w.f(r.Message)
	return nil
}
func (w onWarn) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w onWarn) WithGroup(string) slog.Handler      { return w }
