package host

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/internal/testbin"
	"github.com/memhost/memhost/registry"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files in testdata/")

// pluginBinary is embeddings plugin name (hello or faulty), built once
// (internal/testbin): copy it, never change it.
func pluginBinary(t testing.TB, name string) string {
	t.Helper()
	pkg := map[string]string{"hello": "../examples/embeddings-hello", "faulty": "../registry/testdata/faulty"}[name]
	if pkg == "" {
		t.Fatalf("no test plugin %q", name)
	}
	return testbin.Path(t, pkg, "")
}

// semanticHost opens a home whose plugins/ folder holds the named plugins,
// seeded with the example notebook.
func semanticHost(t *testing.T, edit func(*config.Config), plugins ...string) *Host {
	t.Helper()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	for _, p := range plugins {
		b, err := os.ReadFile(pluginBinary(t, p))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(home, "plugins", registry.Prefix+p), b, 0o755)
	}
	h := openHost(t, home, edit)
	copyTree(t, "../examples/notebook", h.NotebookDir())
	return h
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		os.MkdirAll(filepath.Join(to, filepath.Dir(rel)), 0o755)
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func recallOf(t *testing.T, h *Host, q string) memhost.RecallResponse {
	t.Helper()
	r, err := h.Recall(context.Background(), memhost.RecallRequest{Query: q})
	if err != nil {
		t.Fatalf("Recall(%q): %v", q, err)
	}
	return r
}

func TestKeywordReasonWithoutProvider(t *testing.T) {
	h := semanticHost(t, nil, "hello")
	r := recallOf(t, h, "sarah")
	if r.Mode != memhost.ModeKeyword || !strings.Contains(r.Reason, "no embeddings provider: memhost-embeddings-local is not installed") || !strings.Contains(r.Reason, "plugins use hello") {
		t.Errorf("mode %q reason %q", r.Mode, r.Reason)
	}
	h = semanticHost(t, func(c *config.Config) { c.Memory.Embedding.Plugin = "olama" }, "hello")
	r = recallOf(t, h, "sarah")
	if r.Mode != memhost.ModeKeyword || !strings.Contains(r.Reason, `embeddings plugin "olama" is not in the plugin folders (installed: hello)`) || len(r.Results.Notebook) == 0 {
		t.Errorf("unknown plugin: mode %q reason %q results %d", r.Mode, r.Reason, len(r.Results.Notebook))
	}
}

// TestMissingPluginHidesDownloadFailures: with memory.embedding.plugin
// naming a plugin that is not installed, status and recall name it; the
// failed downloads of the local plugin's model, used before, are no
// reason now and are not shown.
func TestMissingPluginHidesDownloadFailures(t *testing.T) {
	ctx := context.Background()
	h := semanticHost(t, func(c *config.Config) { c.Memory.Embedding.Plugin = "nosuch" }, "hello")
	models := filepath.Join(h.Home(), "models")
	os.MkdirAll(models, 0o755)
	failure := `{"name":"all-MiniLM-L6-v2-Q4_K_M.gguf","at":"2026-03-02T09:00:00Z","error":"dial tcp: lookup huggingface.co: no such host","offline":true,"count":3}`
	if err := os.WriteFile(filepath.Join(models, ".all-MiniLM-L6-v2-Q4_K_M.gguf.failed.json"), []byte(failure), 0o644); err != nil {
		t.Fatal(err)
	}
	want := `embeddings plugin "nosuch" is not in the plugin folders (installed: hello)`
	st, err := h.Status(ctx, memhost.StatusRequest{})
	if err != nil || st.Mode != memhost.ModeKeyword || !strings.Contains(st.Reason, want) || len(st.FailedDownloads) != 0 {
		t.Errorf("status: mode %s, reason %q, failed downloads %+v, %v; want %q and none", st.Mode, st.Reason, st.FailedDownloads, err, want)
	}
	if r := recallOf(t, h, "sarah"); !strings.Contains(r.Reason, want) {
		t.Errorf("recall's reason %q lacks %q", r.Reason, want)
	}
}

func TestHybridRecall(t *testing.T) {
	ctx := context.Background()
	// No similarity floor and no minScore: the typo shares only a few
	// trigrams with "Sarah" (cosine 0.06 with hello, 0.16 for the nearest
	// page), so its page ranks low but must be there.
	h := semanticHost(t, func(c *config.Config) { c.Memory.Search.MinSimilarity = 0; c.Memory.Search.MinScore = 0 }, "hello")
	if r := recallOf(t, h, "sarha"); len(r.Results.Notebook)+len(r.Results.Daily) != 0 {
		t.Fatalf("keyword search found the typo: %+v", r.Results)
	}
	// The best hit found by vectors alone must clear the default minScore.
	if w, m := h.config().Memory.Search.VectorWeight, config.Default().Memory.Search.MinScore; w/(1+w) < m {
		t.Fatalf("vectorWeight %v makes vector-only hits score %.2f, under minScore %v", w, w/(1+w), m)
	}
	use, err := h.UsePlugin(ctx, memhost.UsePluginRequest{Name: "hello", Set: map[string]string{"dimensions": "256"}})
	if err != nil {
		t.Fatal(err)
	}
	if use.Pending == 0 || use.Model != "hello-hash-256" {
		t.Errorf("UsePlugin = %+v", use)
	}
	// The recall embeds the queue within its budget, then searches both ways.
	r := recallOf(t, h, "sarha")
	if r.Mode != memhost.ModeHybrid || r.Reason != "" {
		t.Fatalf("mode %q reason %q", r.Mode, r.Reason)
	}
	// hello hashes character trigrams, so the typo shares some with
	// "Sarah": the vector leg finds pages the keyword leg cannot.
	foundSarah := false
	for _, res := range r.Results.Notebook {
		foundSarah = foundSarah || res.Heading == "## Sarah Chen"
	}
	if !foundSarah {
		t.Errorf("hybrid recall of a typo: %+v", r.Results.Notebook)
	}
	for _, res := range append(r.Results.Notebook, r.Results.Daily...) {
		if res.Score < 0 || res.Score > 1 {
			t.Errorf("score %v outside 0..1", res.Score)
		}
	}
	st, err := h.Status(ctx, memhost.StatusRequest{})
	if err != nil || st.Mode != memhost.ModeHybrid || st.Pending != 0 || st.Embedded == 0 || st.Provider != "hello" {
		t.Errorf("Status = %+v, %v", st, err)
	}
}

// TestHybridGolden pins the fused ranking for a few queries.
func TestHybridGolden(t *testing.T) {
	ctx := context.Background()
	h := semanticHost(t, func(c *config.Config) { c.Memory.Embedding.Plugin = "hello" }, "hello")
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Embed(ctx, memhost.EmbedRequest{}); err != nil {
		t.Fatal(err)
	}
	type row struct {
		Path  string        `json:"path"`
		Lines memhost.Lines `json:"lines"`
		Score float64       `json:"score"`
	}
	got := map[string][]row{}
	for _, q := range []string{"sarah phone", "meeting tuesday", "groceries salmon", "会议"} {
		r := recallOf(t, h, q)
		if r.Mode != memhost.ModeHybrid {
			t.Fatalf("%q: mode %s (%s)", q, r.Mode, r.Reason)
		}
		for _, res := range append(r.Results.Notebook, r.Results.Daily...) {
			got[q] = append(got[q], row{res.Path, res.Lines, res.Score})
		}
	}
	b, _ := json.MarshalIndent(got, "", "  ")
	golden := filepath.Join("testdata", "hybrid.golden.json")
	if *updateGolden {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, append(b, '\n'), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(b)+"\n" != string(want) {
		t.Errorf("hybrid ranking differs from %s:\n%s", golden, b)
	}
}

// TestPluginKilledRecallStillAnswers: the provider's process dies between
// recalls; the next recall answers (keyword with the reason, or hybrid once
// the plugin is back), and later ones are hybrid again.
func TestPluginKilledRecallStillAnswers(t *testing.T) {
	ctx := context.Background()
	h := semanticHost(t, func(c *config.Config) { c.Memory.Embedding.Plugin = "hello" }, "hello")
	if r := recallOf(t, h, "sarah"); r.Mode != memhost.ModeHybrid {
		t.Fatalf("mode %s (%s)", r.Mode, r.Reason)
	}
	p, err := h.reg.Provider(ctx, "hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	syscall.Kill(pid, syscall.SIGKILL)
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(5 * time.Millisecond)
	}
	r := recallOf(t, h, "sarah")
	if len(r.Results.Notebook) == 0 {
		t.Fatalf("no results after the plugin died: %+v", r)
	}
	t.Logf("right after the kill: mode %s, reason %q", r.Mode, r.Reason)
	waitHybrid(t, h, "sarah", "the plugin was killed")
}

// TestSwitchingBackReEmbedsNothing: vectors come from the cache when a
// provider's model returns, and a rebuild re-embeds nothing either.
func TestSwitchingBackReEmbedsNothing(t *testing.T) {
	ctx := context.Background()
	h := semanticHost(t, nil, "hello")
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	embedAll := func() memhost.EmbedResult {
		t.Helper()
		r, err := h.Embed(ctx, memhost.EmbedRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if _, err := h.UsePlugin(ctx, memhost.UsePluginRequest{Name: "hello", Set: map[string]string{"dimensions": "64"}}); err != nil {
		t.Fatal(err)
	}
	first := embedAll()
	if first.Embedded == 0 || first.FromCache != 0 || first.Pending != 0 {
		t.Fatalf("first embedding: %+v", first)
	}
	if _, err := h.UsePlugin(ctx, memhost.UsePluginRequest{Name: "hello", Set: map[string]string{"dimensions": "32"}}); err != nil {
		t.Fatal(err)
	}
	if r := embedAll(); r.FromCache != 0 || r.Embedded != first.Embedded {
		t.Errorf("other model: %+v", r)
	}
	if _, err := h.UsePlugin(ctx, memhost.UsePluginRequest{Name: "hello", Set: map[string]string{"dimensions": "64"}}); err != nil {
		t.Fatal(err)
	}
	if r := embedAll(); r.FromCache != first.Embedded || r.Embedded != first.Embedded {
		t.Errorf("switching back re-embedded: %+v (want all %d from the cache)", r, first.Embedded)
	}
	if _, err := h.Rebuild(ctx, memhost.RebuildRequest{}); err != nil {
		t.Fatal(err)
	}
	if r := embedAll(); r.FromCache != first.Embedded || r.Embedded != first.Embedded {
		t.Errorf("after rebuild: %+v", r)
	}
	cfg, err := config.Load(filepath.Join(h.Home(), config.FileName), nil)
	if err != nil || cfg.Memory.Embedding.Plugin != "hello" || cfg.Memory.Embedding.Options["hello"]["dimensions"] != "64" {
		t.Errorf("config.yaml after use: %+v, %v", cfg.Memory.Embedding, err)
	}
}

// TestCrashMidBatchLosesNothing: a plugin that dies on one chunk stops the
// run; no chunk is lost or doubled, and the queue completes once the
// offending page is gone.
func TestCrashMidBatchLosesNothing(t *testing.T) {
	ctx := context.Background()
	h := semanticHost(t, func(c *config.Config) {
		c.Memory.Embedding.Plugin = "faulty"
		c.Memory.Embedding.BatchSize = 4
	}, "faulty")
	writePage(t, h, "zz-poison.md", "crash")
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err := h.Embed(ctx, memhost.EmbedRequest{})
	if err == nil {
		t.Fatal("Embed through a crashing plugin succeeded")
	}
	emb, pending, _ := h.vecs.Counts(ctx)
	st, _ := h.idx.Stats(ctx)
	if emb+pending != st.Chunks || pending == 0 {
		t.Fatalf("after the crash: %d embedded + %d pending != %d chunks", emb, pending, st.Chunks)
	}
	r := recallOf(t, h, "sarah")
	if len(r.Results.Notebook) == 0 || r.Mode != memhost.ModeKeyword {
		t.Errorf("recall during the outage: mode %s, %d results", r.Mode, len(r.Results.Notebook))
	}
	os.Remove(filepath.Join(h.NotebookDir(), "zz-poison.md"))
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := h.Embed(ctx, memhost.EmbedRequest{})
		if err == nil && res.Pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue never completed: %+v %v", res, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	emb, pending, _ = h.vecs.Counts(ctx)
	st, _ = h.idx.Stats(ctx)
	var vecRows int
	vecRows, _ = h.vecs.Rows(ctx)
	if emb != st.Chunks || pending != 0 || vecRows != st.Chunks {
		t.Errorf("%d embedded, %d pending, %d vector rows, %d chunks", emb, pending, vecRows, st.Chunks)
	}
}

// TestWatchEmbeds: with a provider configured, watch embeds new pages
// without anyone searching.
func TestWatchEmbeds(t *testing.T) {
	h := semanticHost(t, func(c *config.Config) {
		c.Memory.Embedding.Plugin = "hello"
		c.Memory.Sync.WatchDebounceMs = 50
	}, "hello")
	ctx, cancel := context.WithCancel(context.Background())
	embedded := make(chan memhost.EmbedResult, 16)
	done := make(chan error, 1)
	go func() { done <- h.Watch(ctx, WatchRequest{OnEmbed: func(r memhost.EmbedResult) { embedded <- r }}) }()
	first := <-embedded
	if first.Pending != 0 || first.Embedded == 0 {
		t.Errorf("first run: %+v", first)
	}
	writePage(t, h, "knowledge/new.md", "# New\nfresh words here\n")
	select {
	case r := <-embedded:
		if r.Pending != 0 || r.Embedded == 0 {
			t.Errorf("after a new page: %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not embed the new page")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch: %v", err)
	}
}

// TestHungPluginDoesNotHoldRecall: a provider that never answers the
// query's embedding costs a recall its query timeout, no more; the recall
// answers by keyword with the reason and the plugin is restarted.
func TestHungPluginDoesNotHoldRecall(t *testing.T) {
	h := semanticHost(t, func(c *config.Config) {
		c.Memory.Embedding.Plugin = "faulty"
		c.Memory.Embedding.QueryTimeoutMs = 300
	}, "faulty")
	if r := recallOf(t, h, "groceries"); r.Mode != memhost.ModeHybrid {
		t.Fatalf("mode %s (%s)", r.Mode, r.Reason)
	}
	writePage(t, h, "knowledge/hang.md", "# Hang\nthe word hang\n")
	start := time.Now()
	r := recallOf(t, h, "hang") // faulty never answers a text of "hang"
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("recall took %v", d)
	}
	if r.Mode != memhost.ModeKeyword || !strings.Contains(r.Reason, "did not answer") || len(r.Results.Notebook) == 0 {
		t.Errorf("recall with a hung plugin: mode %s, reason %q, %d results", r.Mode, r.Reason, len(r.Results.Notebook))
	}
	waitHybrid(t, h, "groceries", "the hang")
}

// TestMinSimilarityKeepsNoiseOut: with the default floor, a query related
// to nothing brings no vector neighbours, and a related one still does.
func TestMinSimilarityKeepsNoiseOut(t *testing.T) {
	h := semanticHost(t, func(c *config.Config) { c.Memory.Embedding.Plugin = "hello" }, "hello")
	r := recallOf(t, h, "xylophone quasar")
	if r.Mode != memhost.ModeHybrid || len(r.Results.Notebook)+len(r.Results.Daily) != 0 {
		t.Errorf("unrelated query: mode %s, results %+v", r.Mode, r.Results)
	}
	r = recallOf(t, h, "salmon asparagus")
	if len(r.Results.Notebook) == 0 || r.Results.Notebook[0].Heading != "## Groceries" {
		t.Errorf("related query: %+v", r.Results.Notebook)
	}
}

// waitHybrid recalls query until the answer is hybrid again, for at most
// 10 s; after names what happened before, for the failure message.
func waitHybrid(t *testing.T, h *Host, query, after string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for recallOf(t, h, query).Mode != memhost.ModeHybrid {
		if time.Now().After(deadline) {
			t.Fatal("never hybrid again after " + after)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFilteredVectorSearchIsExact: a transcript turn found by its vector
// alone (no word in common with the query, only character trigrams) must
// be found by conversation search even when many notebook chunks are
// closer to the query: the source filter runs inside the KNN, not after
// it.
func TestFilteredVectorSearchIsExact(t *testing.T) {
	ctx := context.Background()
	h := semanticHost(t, func(c *config.Config) { c.Memory.Embedding.Plugin = "hello" }, "hello")
	for i := range 120 {
		writePage(t, h, fmt.Sprintf("knowledge/crowd-%03d.md", i), fmt.Sprintf("kangaroo pouch %d\n", i))
	}
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "zoo", Role: "user", Text: "kangarooo pouchh"}); err != nil {
		t.Fatal(err)
	}
	waitHybrid(t, h, "kangaroo pouch", "writing 120 pages")
	r, err := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "kangaroo pouch"})
	if err != nil || r.Mode != memhost.ModeHybrid {
		t.Fatalf("conversation search: %+v, %v", r, err)
	}
	if len(r.Results) != 1 || r.Results[0].Session != "zoo" {
		t.Fatalf("the turn found by its vector alone is missing behind 120 closer notebook chunks: %+v", r.Results)
	}
	rr, err := h.Recall(ctx, memhost.RecallRequest{Query: "kangaroo pouch", Sources: []string{SourceSessions}})
	if err != nil || len(rr.Results.Sessions) != 1 {
		t.Fatalf("recall --sources sessions: %+v, %v", rr.Results, err)
	}
}

// TestEmbedWaitsOutACrash: memhost embed goes on after the plugin crashed
// once (it is restarted), instead of exiting with "plugin crashed,
// restarting".
func TestEmbedWaitsOutACrash(t *testing.T) {
	ctx := context.Background()
	h := semanticHost(t, func(c *config.Config) {
		c.Memory.Embedding.Plugin = "faulty"
		c.Memory.Embedding.BatchSize = 4
	}, "faulty")
	writePage(t, h, "zz-once.md", "crash-once")
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	res, err := h.Embed(ctx, memhost.EmbedRequest{})
	if err != nil || res.Pending != 0 {
		t.Fatalf("embed = %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(h.Home(), "faulty-crashed")); err != nil {
		t.Fatalf("the plugin never crashed: %v", err)
	}
}

// TestCrashingTextEndsDead: a text the plugin dies on every time is tried
// alone, counted, and dead after health.deadAfterFailures runs, while the
// texts beside it are embedded (it blocked the whole queue for ever).
func TestCrashingTextEndsDead(t *testing.T) {
	ctx := context.Background()
	h := semanticHost(t, func(c *config.Config) {
		c.Memory.Embedding.Plugin = "faulty"
		c.Memory.Embedding.BatchSize = 4
		c.Health.DeadAfterFailures = 2
	}, "faulty")
	writePage(t, h, "aa-poison.md", "crash")
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	var res memhost.EmbedResult
	var err error
	for range 4 {
		if res, err = h.Embed(ctx, memhost.EmbedRequest{}); err == nil {
			break
		}
	}
	if err != nil || res.Dead != 1 || res.Pending != 0 {
		t.Fatalf("after the poison's runs: %+v, %v", res, err)
	}
	if r := recallOf(t, h, "sarah"); r.Mode != memhost.ModeHybrid {
		t.Errorf("mode %s (%s)", r.Mode, r.Reason)
	}
}
