package host

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost/host/config"
)

// The benchmarks run on generated notebooks: pages of a title and ten H2
// sections of 40-70 words drawn from a Zipf-distributed vocabulary of 20,000
// made-up words, so each page gives 11 chunks (10k pages, ~110k chunks).
// Run them with `make bench`; figures go in docs/benchmarks.md.

const benchVocab = 20000

func vocabulary(r *rand.Rand) []string {
	syll := []string{"ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "ve", "da", "ri", "gu", "zo", "fe", "ba", "ni", "to", "su", "me", "la"}
	seen := map[string]bool{}
	var words []string
	for len(words) < benchVocab {
		n := 2 + r.Intn(3)
		var b strings.Builder
		for range n {
			b.WriteString(syll[r.Intn(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

type wordSource struct {
	words []string
	zipf  *rand.Zipf
}

func newWordSource(seed int64) *wordSource {
	r := rand.New(rand.NewSource(seed))
	return &wordSource{words: vocabulary(r), zipf: rand.NewZipf(r, 1.07, 2, benchVocab-1)}
}

func (s *wordSource) word() string { return s.words[s.zipf.Uint64()] }

func (s *wordSource) sentence(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = s.word()
	}
	return strings.Join(ws, " ")
}

// benchNotebook generates a notebook of n pages once and reuses it across
// runs (it is deterministic).
func benchNotebook(b *testing.B, n int) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("memhost-bench-v1-%d", n))
	marker := filepath.Join(dir, ".complete")
	if _, err := os.Stat(marker); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	ws := newWordSource(1)
	r := rand.New(rand.NewSource(2))
	for i := range n {
		folder := []string{"knowledge", "lists", "reference", "daily", "projects"}[i%5]
		var p strings.Builder
		fmt.Fprintf(&p, "# Page %d %s\n\n", i, ws.word())
		for s := range 10 {
			fmt.Fprintf(&p, "## %s %s %d\n", ws.word(), ws.word(), s)
			for range 3 {
				fmt.Fprintf(&p, "- %s.\n", ws.sentence(r, 13+r.Intn(10)))
			}
			p.WriteString("\n")
		}
		path := filepath.Join(dir, folder, fmt.Sprintf("%03d", i/1000), fmt.Sprintf("page-%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(p.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// Age the pages past the racy window, as pages edited earlier are.
	old := time.Now().Add(-time.Hour)
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

func benchHost(b *testing.B, notebookDir string, syncOnSearch bool) *Host {
	b.Helper()
	cfg := config.Default()
	cfg.Memory.NotebookDir = notebookDir
	cfg.Memory.Sync.SyncOnSearch = syncOnSearch
	h, err := Open(context.Background(), Options{Home: b.TempDir(), Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	return h
}

// percentiles reports p50 and p95 of ds in milliseconds.
func percentiles(b *testing.B, ds []time.Duration, prefix string) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), prefix+"p50-ms")
	b.ReportMetric(at(0.95), prefix+"p95-ms")
}

func BenchmarkNotebook(b *testing.B) {
	for _, pages := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			dir := benchNotebook(b, pages)
			ctx := context.Background()
			h := benchHost(b, dir, true)

			b.Run("full-index", func(b *testing.B) {
				for range b.N {
					fresh := benchHost(b, dir, true)
					var m0, m1 runtime.MemStats
					runtime.ReadMemStats(&m0)
					start := time.Now()
					res, err := fresh.Sync(ctx, SyncRequest{})
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(time.Since(start).Seconds(), "s")
					runtime.ReadMemStats(&m1)
					b.ReportMetric(float64(res.Chunks), "chunks")
					b.ReportMetric(float64(res.Chunks)/time.Since(start).Seconds(), "chunks/s")
					st, _ := fresh.idx.Stats(ctx)
					b.ReportMetric(float64(st.SizeBytes)/(1<<20), "db-MB")
				}
			})
			if _, err := h.Sync(ctx, SyncRequest{}); err != nil {
				b.Fatal(err)
			}
			h.Sync(ctx, SyncRequest{}) // settle touches of racy pages

			b.Run("no-change-sync", func(b *testing.B) {
				for range b.N {
					var ds []time.Duration
					for range 20 {
						start := time.Now()
						res, err := h.Sync(ctx, SyncRequest{})
						if err != nil {
							b.Fatal(err)
						}
						if res.Indexed != 0 {
							b.Fatalf("no-change sync indexed %d pages", res.Indexed)
						}
						ds = append(ds, time.Since(start))
					}
					percentiles(b, ds, "")
				}
			})

			// Queries are 1-3 content words: recall drops English stop
			// words, so the synthetic language's 100 most frequent words
			// (each in most chunks) play that part and are left out. The
			// "common-words" runs keep them, as a worst case.
			ws := newWordSource(1)
			r := rand.New(rand.NewSource(3))
			content, common := make([]string, 300), make([]string, 300)
			for i := range content {
				n := 1 + r.Intn(3)
				var cw []string
				for len(cw) < n {
					if k := ws.zipf.Uint64(); k >= 100 {
						cw = append(cw, ws.words[k])
					}
				}
				content[i] = strings.Join(cw, " ")
				common[i] = ws.sentence(r, n)
			}
			searchOnly := benchHost(b, dir, false)
			searchOnly.idx.Close()
			searchOnly.idx = h.idx // the same index, without the stale check

			for _, c := range []struct {
				name    string
				h       *Host
				queries []string
			}{
				{"recall", h, content},
				{"recall-search-only", searchOnly, content},
				{"recall-common-words", h, common},
				{"recall-search-only-common-words", searchOnly, common},
			} {
				b.Run(c.name, func(b *testing.B) {
					for range b.N {
						var ds []time.Duration
						for _, q := range c.queries {
							start := time.Now()
							if _, err := c.h.Recall(ctx, RecallRequest{Query: q}); err != nil {
								b.Fatal(err)
							}
							ds = append(ds, time.Since(start))
						}
						percentiles(b, ds, "")
					}
				})
			}
		})
	}
}

// BenchmarkHybrid measures recall with vectors: the generated notebooks
// embedded by the hello plugin at 384 dimensions (MiniLM's size), then
// content-word queries fused by RRF. It also reports how fast the queue
// is embedded through the plugin process.
func BenchmarkHybrid(b *testing.B) {
	for _, pages := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			dir := benchNotebook(b, pages)
			ctx := context.Background()
			home := b.TempDir()
			os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
			plugin, err := os.ReadFile(filepath.Join(builtPlugins(b), "memhost-embeddings-hello"))
			if err != nil {
				b.Fatal(err)
			}
			os.WriteFile(filepath.Join(home, "plugins", "memhost-embeddings-hello"), plugin, 0o755)
			cfg := config.Default()
			cfg.Memory.NotebookDir = dir
			cfg.Memory.Sync.SyncOnSearch = false
			cfg.Memory.Embedding.Plugin = "hello"
			cfg.Memory.Embedding.Options = map[string]map[string]string{"hello": {"dimensions": "384"}}
			h, err := Open(ctx, Options{Home: home, Config: cfg})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			if _, err := h.Sync(ctx, SyncRequest{}); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			res, err := h.Embed(ctx, EmbedRequest{})
			if err != nil {
				b.Fatal(err)
			}
			took := time.Since(start)
			b.Run("embed-queue", func(b *testing.B) {
				// Measured once in the setup above (sub-benchmark filters
				// must not skip it): the whole queue through the plugin.
				b.ReportMetric(float64(res.Embedded)/took.Seconds(), "chunks/s")
				b.ReportMetric(float64(res.FromCache), "from-cache")
			})
			ws := newWordSource(1)
			r := rand.New(rand.NewSource(3))
			queries := make([]string, 200)
			for i := range queries {
				var cw []string
				for n := 1 + r.Intn(3); len(cw) < n; {
					if k := ws.zipf.Uint64(); k >= 100 {
						cw = append(cw, ws.words[k])
					}
				}
				queries[i] = strings.Join(cw, " ")
			}
			b.Run("recall-hybrid", func(b *testing.B) {
				for range b.N {
					var ds, vs, fs []time.Duration
					for _, q := range queries {
						start := time.Now()
						resp, err := h.Recall(ctx, RecallRequest{Query: q})
						if err != nil {
							b.Fatal(err)
						}
						if resp.Mode != ModeHybrid {
							b.Fatalf("mode %s: %s", resp.Mode, resp.Reason)
						}
						ds = append(ds, time.Since(start))
						vs = append(vs, time.Duration(resp.Timing.VectorMs*float64(time.Millisecond)))
						fs = append(fs, time.Duration(resp.Timing.FtsMs*float64(time.Millisecond)))
					}
					percentiles(b, ds, "")
					percentiles(b, vs, "vector-")
					percentiles(b, fs, "fts-")
				}
			})
		})
	}
}
