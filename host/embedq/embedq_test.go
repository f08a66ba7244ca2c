package embedq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/index/vectors"
	"github.com/memhost/memhost/registry"
	"github.com/memhost/memhost/sdk"
)

// fakeEnv, set in a plugin's environment, makes this test binary serve
// fakeEmbedder instead of running the tests: the registry starts plugins
// as processes, and the test binary is the plugin, with no build.
const fakeEnv = "MEMHOST_EMBEDQ_FAKE_PLUGIN"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "1" {
		sdk.Serve(&fakeEmbedder{state: sdk.StateReady})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeEmbedder is a 4-dimension embeddings provider: a text's vector is
// its length and its first three bytes. Option "state" sets the state it
// reports ("downloading": 40% done).
type fakeEmbedder struct{ state sdk.State }

func (f *fakeEmbedder) Info(ctx context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "fake", Version: "1", ModelID: "fake-4", Dimensions: 4, MaxInputTokens: 512}, nil
}

func (f *fakeEmbedder) Status(ctx context.Context) (sdk.Status, error) {
	if f.state == sdk.StateDownloading {
		return sdk.Status{State: sdk.StateDownloading, Progress: 0.4}, nil
	}
	return sdk.Status{State: f.state, Progress: 1}, nil
}

func (f *fakeEmbedder) Configure(ctx context.Context, options map[string]string) error {
	f.state = sdk.StateReady
	if options["state"] == "downloading" {
		f.state = sdk.StateDownloading
	}
	return nil
}

func (f *fakeEmbedder) Embed(ctx context.Context, texts []string, kind sdk.Kind) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := []float32{float32(len(t)), 0, 0, 0}
		for j := 0; j < 3 && j < len(t); j++ {
			v[j+1] = float32(t[j])
		}
		out[i] = v
	}
	return out, nil
}

// fixture is a queue over a fresh index, with the fake provider
// installed as plugin "fake" and active.
type fixture struct {
	q   *Queue
	idx *index.DB
	vec *vectors.DB
	cfg *config.Config
}

func newFixture(t *testing.T, options map[string]string) *fixture {
	t.Helper()
	home := t.TempDir()
	plugins := filepath.Join(home, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(plugins, registry.Prefix+"fake")); err != nil {
		t.Fatal(err)
	}
	idx, err := index.Open(context.Background(), filepath.Join(home, "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New(registry.Options{Dirs: []string{plugins}, Env: []string{fakeEnv + "=1"}})
	cfg := config.Default()
	cfg.Memory.Embedding.Plugin = "fake"
	cfg.Memory.Embedding.Options["fake"] = options
	var tick atomic.Int64
	vec := vectors.New(idx)
	q := New(Options{Vectors: vec, Registry: reg, Config: func() *config.Config { return &cfg },
		CachePath: filepath.Join(home, "embeddings.db"), LockPath: filepath.Join(home, "embed.lock"),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		// A clock that ticks a second at each reading: the worker's record
		// tells its runs apart.
		Now: func() time.Time { return time.Unix(tick.Add(1), 0) }})
	t.Cleanup(func() {
		q.Close()
		reg.Close()
		idx.Close()
	})
	return &fixture{q: q, idx: idx, vec: vec, cfg: &cfg}
}

// addPage indexes a page of one chunk per text, all without vectors.
func (f *fixture) addPage(t *testing.T, path string, texts ...string) {
	t.Helper()
	u := index.Update{File: index.File{Path: path, Source: "notebook", Hash: hash(strings.Join(texts, "\n")),
		Mtime: time.Unix(1700000000, 0), Size: int64(len(texts))}}
	for i, text := range texts {
		u.Chunks = append(u.Chunks, index.Chunk{Heading: "H", StartLine: i + 1, EndLine: i + 1, Text: text, Hash: hash(text)})
	}
	if err := f.idx.Apply(context.Background(), index.Batch{Upserts: []index.Update{u}}); err != nil {
		t.Fatalf("indexing %s: %v", path, err)
	}
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// counts is the index's embedded and pending chunks.
func (f *fixture) counts(t *testing.T) (embedded, pending int) {
	t.Helper()
	embedded, pending, err := f.vec.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return embedded, pending
}

// TestRunEmbedsPending: a run gives every pending chunk a vector from the
// provider and stores it under the provider's model; a chunk whose text
// was embedded before takes its vector from the cache.
func TestRunEmbedsPending(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	f.addPage(t, "knowledge/a.md", "alpha text", "beta text", "gamma text")
	if e, p := f.counts(t); e != 0 || p != 3 {
		t.Fatalf("before the run: %d embedded, %d pending; want 0 and 3", e, p)
	}
	res, err := f.q.Run(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Provider != "fake" || res.Model != "fake-4" || res.Embedded != 3 || res.FromCache != 0 || res.Pending != 0 || res.Busy {
		t.Fatalf("run = %+v, want 3 embedded by fake-4, none from the cache, none left", res)
	}
	if e, p := f.counts(t); e != 3 || p != 0 {
		t.Fatalf("after the run: %d embedded, %d pending; want 3 and 0", e, p)
	}
	m, err := f.vec.Model(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (vectors.Model{Provider: "fake", Model: "fake-4", Dimensions: 4}); m != want {
		t.Errorf("index vector model = %+v, want %+v", m, want)
	}
	// The vector stored is the provider's: "beta text" is nearest to itself.
	hits, err := f.vec.Search(ctx, []float32{9, 'b', 'e', 't'}, 1, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Text != "beta text" {
		t.Errorf("nearest to beta's vector = %+v, want the beta chunk", hits)
	}

	// Another page with one known text and one new.
	f.addPage(t, "knowledge/b.md", "beta text", "delta text")
	res, err = f.q.Run(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Embedded != 2 || res.FromCache != 1 || res.Pending != 0 {
		t.Errorf("second run = %+v, want 2 embedded, 1 of them from the cache", res)
	}
}

// TestKickWakesWorker: a running worker embeds chunks queued after it
// started when it is kicked, and reports the run; Kick without a worker
// does nothing and does not block.
func TestKickWakesWorker(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.q.Kick() // no worker: nothing happens
	if f.q.HasWorker() {
		t.Fatal("Kick started a worker")
	}
	embedded := make(chan memhost.EmbedResult, 10)
	if !f.q.StartWorker(context.Background(), func(r memhost.EmbedResult) { embedded <- r }) {
		t.Fatal("StartWorker reported a worker already running")
	}
	if f.q.StartWorker(context.Background(), nil) {
		t.Error("a second StartWorker started another worker")
	}
	// The worker looks at the (empty) queue once at start; wait until it
	// has (its record moves on from the start's tick), so that the chunks
	// below are the kick's to embed: nothing else wakes it.
	waitFor(t, "the worker's first look", func() bool {
		st := f.q.WorkerState()
		return st.Running && st.Err == "" && st.Progress.Unix() > 1
	})
	f.addPage(t, "knowledge/a.md", "one", "two")
	f.q.Kick()
	select {
	case r := <-embedded:
		if r.Embedded != 2 || r.Pending != 0 {
			t.Errorf("worker run = %+v, want the two chunks embedded", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the kicked worker embedded nothing in 30 s")
	}
	if e, p := f.counts(t); e != 2 || p != 0 {
		t.Errorf("after the kick: %d embedded, %d pending; want 2 and 0", e, p)
	}
	f.q.StopWorker()
	if f.q.HasWorker() || f.q.WorkerState().Running {
		t.Error("worker still reported after StopWorker")
	}
}

// waitFor polls cond until it holds, failing the test after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestNotReadyReasons: each way semantic search cannot run is a
// *NotReadyError matching ErrNotReady, whose Reason is the words a
// keyword-only answer gives, and whose flags say what to do about it.
func TestNotReadyReasons(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("downloading", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, map[string]string{"state": "downloading"})
		sem, err := f.q.Ready(ctx)
		if err == nil {
			sem.Release()
			t.Fatal("Ready with the model downloading: no error")
		}
		var nr *NotReadyError
		if !errors.As(err, &nr) || !errors.Is(err, ErrNotReady) {
			t.Fatalf("Ready = %v (%T), want a *NotReadyError", err, err)
		}
		if got := Reason(err); got != "model downloading 40%" {
			t.Errorf("Reason = %q, want %q", got, "model downloading 40%")
		}
		if !preparing(err) || !Installed(err) || NoProvider(err) {
			t.Errorf("downloading: preparing %v, installed %v, no provider %v; want true, true, false",
				preparing(err), Installed(err), NoProvider(err))
		}
	})

	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		f.cfg.Memory.Embedding.Plugin = "absent"
		_, err := f.q.Ready(ctx)
		if !errors.Is(err, ErrNotReady) || Installed(err) || preparing(err) {
			t.Fatalf("Ready with an absent plugin = %v, want a not-installed NotReadyError", err)
		}
		if r := Reason(err); !strings.Contains(r, `"absent" is not in the plugin folders (installed: fake)`) {
			t.Errorf("Reason = %q, want it to name the plugin and those installed", r)
		}
	})

	t.Run("none", func(t *testing.T) {
		t.Parallel()
		q := New(Options{Registry: registry.New(registry.Options{Dirs: []string{t.TempDir()}}),
			Config: func() *config.Config { c := config.Default(); return &c }})
		_, err := q.Ready(ctx)
		if !NoProvider(err) || Installed(err) || !errors.Is(err, ErrNotReady) {
			t.Fatalf("Ready with no plugin = %v, want a no-provider NotReadyError", err)
		}
		if r := Reason(err); !strings.HasPrefix(r, "no embeddings provider: memhost-embeddings-local is not installed") {
			t.Errorf("Reason = %q", r)
		}
	})

	t.Run("pending", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		f.addPage(t, "knowledge/a.md", "one", "two")
		f.cfg.Memory.Embedding.RecallBudgetMs = 0 // embed nothing before searching
		sem, err := f.q.ForSearch(ctx)
		if err == nil {
			sem.Release()
			t.Fatal("ForSearch with chunks pending: no error")
		}
		want := "embedding with fake: 0 of 2 chunks done (0%); hybrid when complete"
		if got := Reason(err); got != want {
			t.Errorf("Reason = %q, want %q", got, want)
		}
		if fmt.Sprint(err) != ErrNotReady.Error()+": "+want {
			t.Errorf("error = %q", err)
		}
	})

	t.Run("other error", func(t *testing.T) {
		t.Parallel()
		err := fmt.Errorf("wrapped: %w", errors.New("disk on fire"))
		if Reason(err) != err.Error() {
			t.Errorf("Reason of a plain error = %q, want its text", Reason(err))
		}
	})
}

// TestBatchFor: a run without a budget sends the configured batch; a
// recall's run within its budget at most recallBatch.
func TestBatchFor(t *testing.T) {
	q := New(Options{Config: func() *config.Config { c := config.Default(); return &c }})
	if got := q.batchFor(0); got != config.Default().Memory.Embedding.BatchSize || got <= recallBatch {
		t.Errorf("batch without a budget = %d, want the configured %d (over %d)", got, config.Default().Memory.Embedding.BatchSize, recallBatch)
	}
	if got := q.batchFor(2 * time.Second); got != recallBatch {
		t.Errorf("batch within a budget = %d, want %d", got, recallBatch)
	}
}

// movedTexts are a page's chunks: 200 of them, fifty batches of four.
func movedTexts() []string {
	texts := make([]string, 200)
	for i := range texts {
		texts[i] = fmt.Sprintf("entry %d of a daily log", i)
	}
	return texts
}

// A page moved (prune's daily/ to daily/archive/, a rename) queues its
// chunks again under the new path, every text of them in the embedding
// cache: a search with the worker running waits for that backlog, however
// many chunks, as it does for one batch, and answers hybrid. It answered
// keyword-only (the simulated year's searches after each month's prune).
func TestSearchWaitsForABacklogTheCacheHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.cfg.Memory.Embedding.BatchSize = 4
	// Fifty batches of cache hits on a busy machine: the wait is what is
	// tested, not its speed (without the change it failed at once).
	f.cfg.Memory.Embedding.RecallBudgetMs = 60_000
	ctx := context.Background()
	texts := movedTexts()
	f.addPage(t, "daily/2025-01-05.md", texts...)
	if _, err := f.q.Run(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if !f.q.StartWorker(ctx, nil) {
		t.Fatal("a worker already runs")
	}
	waitFor(t, "the worker's first look", func() bool {
		st := f.q.WorkerState()
		return st.Running && st.Err == "" && st.Progress.Unix() > 1
	})
	if err := f.idx.Apply(ctx, index.Batch{Removes: []string{"daily/2025-01-05.md"}}); err != nil {
		t.Fatal(err)
	}
	f.addPage(t, "daily/archive/2025-01-05.md", texts...)
	if _, p := f.counts(t); p != len(texts) {
		t.Fatalf("after the move: %d pending, want %d", p, len(texts))
	}
	sem, err := f.q.ForSearch(ctx)
	if err != nil {
		t.Fatalf("search after the move: %v; want hybrid (every text is in the cache)", err)
	}
	sem.Release()
	if _, p := f.counts(t); p != 0 {
		t.Errorf("the search answered hybrid with %d chunks pending", p)
	}
}

// freshBacklog counts the pending chunks the cache cannot give a vector,
// within a limit.
func TestFreshBacklog(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	texts := movedTexts()
	f.addPage(t, "daily/2025-01-05.md", texts...)
	model := "fake-4"
	if n, ok, err := f.q.freshBacklog(ctx, model, 3, 1000); err != nil || !ok || n != len(texts) {
		t.Fatalf("before any run: freshBacklog = %d, %v, %v; want %d", n, ok, err, len(texts))
	}
	if _, ok, err := f.q.freshBacklog(ctx, model, 3, 100); err != nil || ok {
		t.Errorf("200 pending over a limit of 100: ok = %v, %v; want false", ok, err)
	}
	if _, err := f.q.Run(ctx, 0); err != nil {
		t.Fatal(err)
	}
	f.addPage(t, "daily/archive/2025-01-05.md", append(texts, "one new line", "and another")...)
	if n, ok, err := f.q.freshBacklog(ctx, model, 3, 1000); err != nil || !ok || n != 2 {
		t.Errorf("the page moved with two new lines: freshBacklog = %d, %v, %v; want 2", n, ok, err)
	}
	// A dead chunk (failed three times) is not waited for: not counted.
	for i := 0; i < 3; i++ {
		if err := f.vec.RecordFailures(ctx, model, []string{hash("one new line")}, "bad input"); err != nil {
			t.Fatal(err)
		}
	}
	if n, ok, err := f.q.freshBacklog(ctx, model, 3, 1000); err != nil || !ok || n != 1 {
		t.Errorf("one of the new lines dead: freshBacklog = %d, %v, %v; want 1", n, ok, err)
	}
}
