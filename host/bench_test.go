package host

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/index/ftstext"
	"github.com/memhost/memhost/internal/benchdata"
)

// The benchmarks run on generated notebooks: pages of a title and ten H2
// sections of 40-70 words drawn from a Zipf-distributed vocabulary of 20,000
// made-up words, so each page gives 11 chunks (10k pages, ~110k chunks).
// Run them with `make bench`; figures go in docs/benchmarks.md.

// benchNotebook is the synthetic notebook of n pages (see benchdata).
func benchNotebook(b *testing.B, n int) string {
	b.Helper()
	dir, err := benchdata.Synthetic(n)
	if err != nil {
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
					res, err := fresh.Sync(ctx, memhost.SyncRequest{})
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
			if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
				b.Fatal(err)
			}
			h.Sync(ctx, memhost.SyncRequest{}) // settle touches of racy pages

			b.Run("no-change-sync", func(b *testing.B) {
				for range b.N {
					var ds []time.Duration
					for range 20 {
						start := time.Now()
						res, err := h.Sync(ctx, memhost.SyncRequest{})
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

			// Queries are 1-3 content words (see benchdata.Words.Queries);
			// the "common-words" runs keep the commonest words, as a worst
			// case.
			ws := benchdata.NewWords(1)
			content := ws.Queries(300, 3)
			common := make([]string, 300)
			r := rand.New(rand.NewSource(3))
			for i := range common {
				common[i] = ws.Sentence(1 + r.Intn(3))
			}
			searchOnly := benchHost(b, dir, false)
			searchOnly.idx.Close()
			searchOnly.idx = h.idx // the same index, without the stale check
			searchOnly.vecs = h.vecs

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
							if _, err := c.h.Recall(ctx, memhost.RecallRequest{Query: q}); err != nil {
								b.Fatal(err)
							}
							ds = append(ds, time.Since(start))
						}
						percentiles(b, ds, "")
					}
				})
			}
			// The memory context (every tier, the default budget) of the
			// same queries: four keyword searches and the facts'.
			for _, c := range []struct {
				name string
				h    *Host
			}{{"context", h}, {"context-search-only", searchOnly}} {
				b.Run(c.name, func(b *testing.B) {
					for range b.N {
						var ds []time.Duration
						for _, q := range content {
							start := time.Now()
							if _, err := c.h.Context(ctx, memhost.ContextRequest{Query: q}); err != nil {
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
// is embedded through the plugin process. With MEMHOST_BENCH_LARGE=1 it
// also runs 100,000 pages (1.1M chunks; ~5-10 minutes of setup and 4 GB of
// disk), to measure a home near a million chunks. MEMHOST_BENCH_HOME=dir
// keeps each size's home (index and all) in dir, so that a second run
// skips the setup.
func BenchmarkHybrid(b *testing.B) {
	sizes := []int{1000, 10000}
	if os.Getenv("MEMHOST_BENCH_LARGE") == "1" {
		sizes = append(sizes, 100000)
	}
	for _, pages := range sizes {
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			dir := benchNotebook(b, pages)
			ctx := context.Background()
			home := b.TempDir()
			if keep := os.Getenv("MEMHOST_BENCH_HOME"); keep != "" {
				// A home kept between runs: its index is synced and
				// embedded once (minutes at 1.1M chunks), then reused.
				home = filepath.Join(keep, fmt.Sprintf("hybrid-%d", pages))
			}
			os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
			plugin, err := os.ReadFile(pluginBinary(b, "hello"))
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
			if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			res, err := h.Embed(ctx, memhost.EmbedRequest{})
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
			queries := benchdata.NewWords(1).Queries(200, 3)
			b.Run("recall-hybrid", func(b *testing.B) {
				for range b.N {
					var ds, vs, fs []time.Duration
					for _, q := range queries {
						start := time.Now()
						resp, err := h.Recall(ctx, memhost.RecallRequest{Query: q})
						if err != nil {
							b.Fatal(err)
						}
						if resp.Mode != memhost.ModeHybrid {
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

// BenchmarkKeywordRank: keyword recall of the English notebook (WordNet's
// glosses, 10k pages, ~110k chunks) with the everyday queries, as users get
// it (recall), and its ranking statement alone with FTS5's bm25 and with
// bm25_topk (index/ftsrank), alternating query by query in one run so that
// the ratio holds on a busy machine.
func BenchmarkKeywordRank(b *testing.B) {
	dir, err := benchdata.WordNet(10000)
	if err != nil {
		b.Skip(err)
	}
	h := benchHost(b, dir, false)
	ctx := context.Background()
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		b.Fatal(err)
	}
	rank := func(fn string, expr string) time.Duration {
		start := time.Now()
		rows, err := h.idx.SQL().QueryContext(ctx, `SELECT rowid, `+fn+` AS s FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s LIMIT 60`, expr)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n == 0 {
			b.Fatalf("%s: no rows for %s", fn, expr)
		}
		return time.Since(start)
	}
	for range b.N {
		var recall, bm25, topk []time.Duration
		for range 5 {
			for _, q := range benchdata.EnglishQueries {
				start := time.Now()
				resp, err := h.Recall(ctx, memhost.RecallRequest{Query: q})
				if err != nil || resp.Mode != memhost.ModeKeyword {
					b.Fatalf("%s: mode %q, %v", q, resp.Mode, err)
				}
				recall = append(recall, time.Since(start))
				expr := ftstext.MatchExpr(q)
				bm25 = append(bm25, rank("bm25(chunks_fts, 1.0, 0.5, 0.3)", expr))
				topk = append(topk, rank("bm25_topk(chunks_fts, 60, 1.0, 0.5, 0.3)", expr))
			}
		}
		percentiles(b, recall, "recall-")
		percentiles(b, bm25, "bm25-")
		percentiles(b, topk, "topk-")
	}
}
