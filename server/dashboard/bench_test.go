package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/internal/benchdata"
	"github.com/memhost/memhost/server/dashboard"
)

// BenchmarkDashboard measures the dashboard's server time (the handler,
// from request to the last byte written) on the 10k-page synthetic
// notebook of host/bench_test.go (110k chunks), on a warm server: the
// index synced, the watcher running as under `memhost serve`. It reports
// p50 and p95 of the home's first paint, the notebook browser, a page, and
// search results (the fragment search as you type fetches) in keyword
// mode and, after switching to the hello plugin at 384 dimensions and
// embedding every chunk, in hybrid mode. docs/benchmarks.md has the
// figures.
func BenchmarkDashboard(b *testing.B) {
	const pages = 10000
	dir, err := benchdata.Synthetic(pages)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	home := b.TempDir()
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	plugin, err := os.ReadFile(helloPluginB(b))
	if err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "plugins", "memhost-embeddings-hello"), plugin, 0o755)
	cfg := config.Default()
	cfg.Memory.NotebookDir = dir
	cfg.Memory.Embedding.Plugin = ""
	h, err := host.Open(ctx, host.Options{Home: home, Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Init(ctx, memhost.InitRequest{}); err != nil {
		b.Fatal(err)
	}
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		b.Fatal(err)
	}
	watchDone := make(chan struct{})
	go func() { defer close(watchDone); h.Watch(ctx, host.WatchRequest{}) }()
	defer func() { cancel(); <-watchDone }()
	time.Sleep(time.Second) // the watcher's first sync
	d := dashboard.New(h)
	queries := benchdata.NewWords(1).Queries(100, 3)

	serve := func(b *testing.B, target string) time.Duration {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		w := httptest.NewRecorder()
		start := time.Now()
		d.ServeHTTP(w, req)
		took := time.Since(start)
		if w.Code != 200 {
			b.Fatalf("%s: %d %s", target, w.Code, w.Body.String())
		}
		return took
	}
	measure := func(b *testing.B, name string, targets func(i int) string, n int) {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				var ds []time.Duration
				cpu0 := cpuTime()
				for i := range n {
					ds = append(ds, serve(b, targets(i)))
				}
				// CPU time of the process per request: what the machine's
				// other load does not change (the watcher is idle).
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(n), "cpu-ms")
				percentiles(b, ds)
			}
		})
	}
	measure(b, "home", func(int) string { return "/" }, 30)
	measure(b, "notebook", func(int) string { return "/ui/notebook" }, 30)
	measure(b, "page", func(i int) string { return "/ui/page/" + pageName(dir, i) }, 30)
	search := func(i int) string { return "/ui/api/search?q=" + url.QueryEscape(queries[i]) }
	measure(b, "search-keyword", search, len(queries))

	b.Run("hybrid", func(b *testing.B) {
		if _, err := h.UsePlugin(ctx, memhost.UsePluginRequest{Name: "hello", Set: map[string]string{"dimensions": "384"}}); err != nil {
			b.Fatal(err)
		}
		// The watcher's worker and Embed share the queue: wait for both.
		for deadline := time.Now().Add(20 * time.Minute); ; {
			if _, err := h.Embed(ctx, memhost.EmbedRequest{}); err != nil {
				b.Fatal(err)
			}
			st, _ := h.Status(ctx, memhost.StatusRequest{Quick: true})
			if st.Mode == memhost.ModeHybrid {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("mode %s: %s", st.Mode, st.Reason)
			}
			time.Sleep(time.Second)
		}
		measure(b, "search", search, len(queries))
		measure(b, "home", func(int) string { return "/" }, 30)
	})
}

// pageName is the i-th page of the synthetic notebook, by name.
func pageName(dir string, i int) string {
	var names []string
	filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
		if err == nil && !de.IsDir() && filepath.Ext(p) == ".md" && len(names) < 100 {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	return names[i%len(names)]
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func percentiles(b *testing.B, ds []time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
}

// helloPluginB builds the hello plugin for a benchmark.
func helloPluginB(b *testing.B) string {
	helloOnce.Do(buildHello)
	if helloErr != nil {
		b.Fatalf("building the hello plugin: %v", helloErr)
	}
	return helloBin
}
