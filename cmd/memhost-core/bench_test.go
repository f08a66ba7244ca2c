package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/internal/benchdata"
	"github.com/memhost/memhost/server"
	"github.com/memhost/memhost/server/client"
)

// BenchmarkServe measures what an agent waits for with `memhost serve`
// running (a real server process of the built binary, warm, keyword
// search: no provider installed in the home) on notebooks of 10k pages, in
// the synthetic language and in English (WordNet glosses):
//
//   - api: a recall through the Go client on the socket (the server's
//     own latency plus one HTTP round trip);
//   - cli-forwarded: a whole `memhost recall` process (the launcher,
//     relayed into the server);
//   - core-forwarded: a whole `memhost-core recall` process forwarded
//     through the API (what the launcher saves: linking everything);
//   - curl: `curl --unix-socket` posting the same request;
//   - cli-in-process: `memhost --no-server recall`, what every call cost
//     before (open the index, stat every page, search);
//
// and the server's resident memory and its CPU time over 10 idle seconds.
// Run with `make bench`; figures go in docs/benchmarks.md.
func BenchmarkServe(b *testing.B) {
	for _, corpus := range []struct {
		name    string
		dir     func(int) (string, error)
		queries []string
		hybrid  bool // embed with the hello plugin at 384 dimensions first
	}{
		{"synthetic", benchdata.Synthetic, benchdata.NewWords(1).Queries(50, 3), false},
		{"english", benchdata.WordNet, benchdata.EnglishQueries, false},
		{"synthetic-hybrid", benchdata.Synthetic, benchdata.NewWords(1).Queries(50, 3), true},
	} {
		b.Run(corpus.name+"/pages=10000", func(b *testing.B) {
			dir, err := corpus.dir(10000)
			if err != nil {
				b.Skip(err)
			}
			home := b.TempDir()
			cfg := "memory:\n  notebookDir: " + dir + "\n"
			if corpus.hybrid {
				cfg += "  embedding:\n    plugin: hello\n    options: {hello: {dimensions: \"384\"}}\n"
			}
			os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o644)
			srv := exec.Command(binary, "--home", home, "serve", "--listen", "")
			srv.Env = append(os.Environ(), "MEMHOST_HOME="+home)
			if err := srv.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
			var c *client.Client
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if c, err = client.Dial(home, nil); err == nil {
					break
				}
				if time.Now().After(deadline) {
					b.Fatal("the server did not answer")
				}
			}
			defer c.Close()
			ctx := context.Background()
			start := time.Now()
			res, err := c.Sync(ctx, mh.SyncRequest{}) // waits for the start-up sync
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("indexed in %.1f s (then a sync of %d pages)", time.Since(start).Seconds(), res.Scanned)
			if corpus.hybrid {
				start := time.Now()
				res, err := c.Embed(ctx, mh.EmbedRequest{Wait: true})
				if err != nil {
					b.Fatal(err)
				}
				b.Logf("embedded %d chunks in %.1f s; %d pending", res.Embedded, time.Since(start).Seconds(), res.Pending)
				b.Run("api-vector-half", func(b *testing.B) {
					for range b.N {
						var vs []time.Duration
						for range 2 {
							for _, q := range corpus.queries {
								resp, err := c.Recall(ctx, mh.RecallRequest{Query: q})
								if err != nil || resp.Mode != mh.ModeHybrid {
									b.Fatalf("recall: %v %s %s", err, resp.Mode, resp.Reason)
								}
								vs = append(vs, time.Duration(resp.Timing.VectorMs*float64(time.Millisecond)))
							}
						}
						report(b, vs)
					}
				})
			}

			measure := func(name string, one func(q string)) {
				b.Run(name, func(b *testing.B) {
					for range b.N {
						var ds []time.Duration
						for range 2 {
							for _, q := range corpus.queries {
								t0 := time.Now()
								one(q)
								ds = append(ds, time.Since(t0))
							}
						}
						report(b, ds)
					}
				})
			}
			// Where an API call's time goes: the keyword search, the
			// freshness check before it (the watcher's cookie), the whole
			// recall in the server, and what is left for HTTP and JSON.
			var fts, sync, inServer []time.Duration
			msDur := func(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
			measure("api", func(q string) {
				resp, err := c.Recall(ctx, mh.RecallRequest{Query: q})
				if err != nil {
					b.Fatal(err)
				}
				fts = append(fts, msDur(resp.Timing.FtsMs))
				sync = append(sync, msDur(resp.Timing.SyncMs))
				inServer = append(inServer, msDur(resp.Timing.TotalMs))
			})
			b.Run("api-fts-half", func(b *testing.B) { report(b, fts) })
			b.Run("api-sync-check", func(b *testing.B) { report(b, sync) })
			b.Run("api-in-server", func(b *testing.B) { report(b, inServer) })
			env := []string{"MEMHOST_HOME=" + home}
			run := func(args ...string) { runBin(b, binary, env, args...) }
			core := filepath.Join(filepath.Dir(binary), "memhost-core")
			measure("cli-forwarded", func(q string) { run("recall", q) })
			measure("core-forwarded", func(q string) { runBin(b, core, env, "recall", q) })
			measure("curl", func(q string) {
				cmd := exec.Command("curl", "-sf", "--unix-socket", server.SocketPath(home), "-d", `{"query":`+strconv.Quote(q)+`}`, "http://memhost/api/v1/recall")
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("curl: %v %s", err, out)
				}
			})
			measure("cli-in-process", func(q string) { run("--no-server", "recall", q) })
			b.Run("idle", func(b *testing.B) {
				for range b.N {
					cpu0 := cpuTime(b, srv.Process.Pid)
					time.Sleep(10 * time.Second)
					b.ReportMetric(float64((cpuTime(b, srv.Process.Pid)-cpu0).Microseconds())/1000, "cpu-ms/10s")
					// Anonymous memory is the server's own; file-backed
					// is the index's pages mapped by SQLite (mmap_size),
					// shared with the page cache and reclaimable.
					b.ReportMetric(float64(rssKB(b, srv.Process.Pid, "RssAnon:"))/1024, "rss-anon-MB")
					b.ReportMetric(float64(rssKB(b, srv.Process.Pid, "RssFile:"))/1024, "rss-file-MB")
				}
			})
		})
	}
}

// runBin runs a binary with env added, failing the benchmark on error.
func runBin(b *testing.B, bin string, env []string, args ...string) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s %v: %v %s", bin, args, err, out)
	}
}

// report gives p50 and p95 in milliseconds.
func report(b *testing.B, ds []time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
}

// cpuTime is the user + system time of a process so far (/proc/PID/stat).
func cpuTime(b *testing.B, pid int) time.Duration {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return time.Duration(u+s) * time.Second / 100 // USER_HZ
}

// rssKB is a line of a process's memory (/proc/PID/status), in kB.
func rssKB(b *testing.B, pid int, key string) int {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}
