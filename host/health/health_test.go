package health

import (
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/episodes"
	"github.com/memhost/memhost/index/integrity"
	"github.com/memhost/memhost/index/vectors"
)

// sound is the facts of a healthy home.
func sound() Facts {
	return Facts{
		Now:         time.Date(2026, 2, 24, 10, 30, 0, 0, time.UTC),
		Database:    Database{Files: 3, Chunks: 9},
		Drift:       &integrity.Drift{},
		Transcripts: Transcripts{Files: 1, Turns: 4},
		Provider:    Provider{Name: "local", LatenciesMs: []float64{20, 30, 25}},
		Daily:       Daily{Path: "daily/2026-02-24.md", Exists: true},
		Sizes:       memhost.HealthSizes{DatabaseBytes: 1 << 20, VaultBytes: 1 << 20},
	}
}

func TestEvaluateThresholds(t *testing.T) {
	th := config.DefaultHealth()
	tests := []struct {
		name    string
		edit    func(*Facts)
		check   string
		want    memhost.HealthStatus
		overall memhost.HealthOverall
	}{
		{"sound", func(*Facts) {}, "database", Pass, Healthy},
		{"quick_check problem", func(f *Facts) { f.Database.Problems = []string{"page 7 is never used"} }, "database", Fail, Unhealthy},
		{"unreadable db", func(f *Facts) { f.Database.Err = "disk I/O error" }, "database", Fail, Unhealthy},
		{"drift 1", func(f *Facts) { f.Drift = &integrity.Drift{ChunksWithoutFTS: 1} }, "index-drift", Warn, Degraded},
		{"drift 10", func(f *Facts) { f.Drift = &integrity.Drift{FTSWithoutChunk: 4, VectorsWithoutChunk: 6} }, "index-drift", Warn, Degraded},
		{"drift 11", func(f *Facts) { f.Drift = &integrity.Drift{EmbeddedWithoutVector: 11} }, "index-drift", Fail, Unhealthy},
		{"drift uncounted", func(f *Facts) { f.Drift = nil }, "index-drift", Fail, Unhealthy},
		{"pending 500 for the next search", func(f *Facts) { f.Queue.Pending = 500 }, "embedding-queue", Pass, Healthy},
		{"pending 500 with a working worker", func(f *Facts) {
			f.Queue.Pending, f.Queue.Worker = 500, Worker{Running: true, Progress: f.Now.Add(-time.Minute)}
		}, "embedding-queue", Pass, Healthy},
		{"pending 500 while the model downloads", func(f *Facts) {
			f.Queue.Pending, f.Provider = 500, Provider{Name: "local", Preparing: true, Err: "model downloading 40%"}
		}, "embedding-queue", Pass, Degraded},
		{"worker retrying a moment", func(f *Facts) {
			f.Queue.Pending, f.Queue.Worker = 500, Worker{Running: true, Progress: f.Now.Add(-time.Minute), FailingSince: f.Now.Add(-time.Minute), Err: "busy"}
		}, "embedding-queue", Pass, Healthy},
		{"worker without progress, 5 pending", func(f *Facts) {
			f.Queue.Pending, f.Queue.Worker = 5, Worker{Running: true, Progress: f.Now.Add(-11 * time.Minute)}
		}, "embedding-queue", Warn, Degraded},
		{"worker without progress, 21 pending", func(f *Facts) {
			f.Queue.Pending, f.Queue.Worker = 21, Worker{Running: true, Progress: f.Now.Add(-11 * time.Minute)}
		}, "embedding-queue", Fail, Unhealthy},
		{"worker failing, 6 pending", func(f *Facts) {
			f.Queue.Pending, f.Queue.Worker = 6, Worker{Running: true, Progress: f.Now.Add(-time.Minute), FailingSince: f.Now.Add(-11 * time.Minute), Err: "boom"}
		}, "embedding-queue", Warn, Degraded},
		{"provider failing, 1 pending", func(f *Facts) {
			f.Queue.Pending, f.Provider = 1, Provider{Name: "local", Err: "plugin crashed"}
		}, "embedding-queue", Warn, Unhealthy},
		{"provider failing, 21 pending", func(f *Facts) {
			f.Queue.Pending, f.Provider = 21, Provider{Name: "local", Err: "plugin crashed"}
		}, "embedding-queue", Fail, Unhealthy},
		{"pending without provider", func(f *Facts) { f.Queue.Pending, f.Queue.NoProvider = 500, true }, "embedding-queue", Pass, Healthy},
		{"one dead", func(f *Facts) {
			f.Queue.Dead, f.Queue.DeadChunks = 1, []vectors.DeadChunk{{Path: "a.md", StartLine: 3, LastError: "bad"}}
		}, "embedding-queue", Fail, Unhealthy},
		{"p95 1.9 s", func(f *Facts) { f.Provider.LatenciesMs = []float64{100, 1900} }, "embedding-provider", Pass, Healthy},
		{"p95 2.5 s", func(f *Facts) { f.Provider.LatenciesMs = []float64{100, 200, 2500} }, "embedding-provider", Warn, Degraded},
		{"p95 11 s", func(f *Facts) { f.Provider.LatenciesMs = []float64{11000} }, "embedding-provider", Fail, Unhealthy},
		{"provider down", func(f *Facts) { f.Provider = Provider{Name: "local", Err: "plugin crashed"} }, "embedding-provider", Fail, Unhealthy},
		{"provider downloading", func(f *Facts) { f.Provider = Provider{Name: "local", Preparing: true, Err: "model downloading 40%"} }, "embedding-provider", Warn, Degraded},
		{"no provider", func(f *Facts) { f.Provider = Provider{NoProvider: true, Err: "none"} }, "embedding-provider", Pass, Healthy},
		{"no daily log", func(f *Facts) { f.Daily.Exists = false }, "daily-log", Pass, Healthy},
		{"a quiet day, no episode log", func(f *Facts) { f.Episodes = Episodes{Path: "episodes/2026-02-24.md", State: episodes.Written} }, "daily-log", Pass, Healthy},
		{"conversations, no episode log", func(f *Facts) {
			f.Episodes = Episodes{Path: "episodes/2026-02-24.md", Messages: 4, Newest: f.Now.Add(-time.Hour), State: episodes.Written}
		}, "daily-log", Warn, Degraded},
		{"conversations, episode log behind", func(f *Facts) {
			f.Episodes = Episodes{Path: "episodes/2026-02-24.md", Messages: 4, Newest: f.Now.Add(-time.Hour), Exists: true, State: episodes.Written}
		}, "daily-log", Warn, Degraded},
		{"conversation under way", func(f *Facts) {
			f.Episodes = Episodes{Path: "episodes/2026-02-24.md", Messages: 4, Newest: f.Now.Add(-time.Minute), State: episodes.Written}
		}, "daily-log", Pass, Healthy},
		{"episode log current", func(f *Facts) {
			f.Episodes = Episodes{Path: "episodes/2026-02-24.md", Messages: 4, Newest: f.Now.Add(-time.Hour), Exists: true, State: episodes.Unchanged}
		}, "daily-log", Pass, Healthy},
		{"episode log edited by hand", func(f *Facts) {
			f.Episodes = Episodes{Path: "episodes/2026-02-24.md", Messages: 4, Newest: f.Now.Add(-time.Hour), Exists: true, State: episodes.Kept}
		}, "daily-log", Pass, Healthy},
		{"episode log unreadable", func(f *Facts) { f.Episodes.Err = "permission denied" }, "daily-log", Warn, Degraded},
		{"db 300 MB", func(f *Facts) { f.Sizes.DatabaseBytes = 300 << 20 }, "database-size", Warn, Degraded},
		{"db 600 MB", func(f *Facts) { f.Sizes.DatabaseBytes = 600 << 20 }, "database-size", Fail, Unhealthy},
		{"vault 5 GB", func(f *Facts) { f.Sizes.VaultBytes = 5 << 30 }, "vault-size", Warn, Degraded},
		{"stale page", func(f *Facts) { f.Pages.Stale = []string{"a.md"} }, "pages", Warn, Degraded},
		{"recent page", func(f *Facts) { f.Pages.Recent = []string{"a.md"} }, "pages", Pass, Healthy},
		{"too large", func(f *Facts) { f.Pages.TooLarge = []string{"big.md"} }, "pages", Warn, Degraded},
		{"duplicated turn", func(f *Facts) {
			f.Transcripts.Duplicated, f.Transcripts.Extra = []TurnIssue{{Session: "s", Turn: "t1", Copies: 2}}, 1
		}, "transcripts", Warn, Degraded},
		{"many duplicates", func(f *Facts) {
			f.Transcripts.Duplicated, f.Transcripts.Extra = []TurnIssue{{Session: "s", Turn: "t1", Copies: 12}}, 11
		}, "transcripts", Fail, Unhealthy},
		{"torn line", func(f *Facts) { f.Transcripts.Torn = []string{"sessions/s.jsonl"} }, "transcripts", Warn, Degraded},
		{"leftover", func(f *Facts) { f.Leaks.Rebuild = []string{"brain/memory.db.rebuild-12"} }, "leaked-files", Warn, Degraded},
		{"watcher stopped", func(f *Facts) { f.Watcher = Watcher{Started: true} }, "watcher", Fail, Unhealthy},
		{"watcher runs", func(f *Facts) {
			f.Watcher = Watcher{Started: true, Running: true, LastEvent: f.Now.Add(-3 * time.Minute)}
		}, "watcher", Pass, Healthy},
	}
	for _, tt := range tests {
		f := sound()
		tt.edit(&f)
		r := Evaluate(f, th)
		var got memhost.HealthCheck
		for _, c := range r.Checks {
			if c.Name == tt.check {
				got = c
			}
		}
		if got.Status != tt.want || r.Overall != tt.overall {
			t.Errorf("%s: %s = %s (%q), overall %s; want %s, %s", tt.name, tt.check, got.Status, got.Message, r.Overall, tt.want, tt.overall)
		}
	}
}

// TestStuckQueueSaysWhyAndSince: a stuck queue names its cause and
// since when; a queue being worked says so.
func TestStuckQueueSaysWhyAndSince(t *testing.T) {
	th := config.DefaultHealth()
	now := sound().Now
	tests := []struct {
		name  string
		edit  func(*Facts)
		want  string
		since string
	}{
		{"next search", func(f *Facts) { f.Queue.Pending = 30 },
			"30 chunks waiting for a vector; the next search or the background run embeds them", ""},
		{"worker on it", func(f *Facts) {
			f.Queue.Pending, f.Queue.Worker = 30, Worker{Running: true, Progress: now.Add(-90 * time.Second)}
		},
			"30 chunks waiting for a vector; the embedding worker is on them (last progress 1m ago)", ""},
		{"no progress", func(f *Facts) {
			f.Queue.Pending, f.Queue.Worker = 30, Worker{Running: true, Progress: now.Add(-2 * time.Hour)}
		}, "30 chunks waiting for a vector, stuck: the embedding worker has made no progress since 2026-02-24T08:30:00Z (2h ago)", "2026-02-24T08:30:00Z"},
		{"worker failing", func(f *Facts) {
			f.Queue.Pending, f.Queue.Worker = 30, Worker{Running: true, Progress: now.Add(-time.Hour), FailingSince: now.Add(-time.Hour), Err: "connection refused"}
		}, "30 chunks waiting for a vector, stuck: the embedding worker fails since 2026-02-24T09:30:00Z (1h ago): connection refused", "2026-02-24T09:30:00Z"},
		{"provider failing, with a worker", func(f *Facts) {
			f.Provider = Provider{Name: "ollama", Err: "ollama is not reachable"}
			f.Queue.Pending, f.Queue.Worker = 30, Worker{Running: true, Progress: now.Add(-time.Hour), FailingSince: now.Add(-20 * time.Minute), Err: "not reachable"}
		}, "30 chunks waiting for a vector, stuck: ollama cannot embed (ollama is not reachable) since 2026-02-24T10:10:00Z (20m ago)", "2026-02-24T10:10:00Z"},
		{"provider failing, one-shot", func(f *Facts) {
			f.Provider = Provider{Name: "ollama", Err: "ollama is not reachable"}
			f.Queue.Pending = 30
		}, "30 chunks waiting for a vector, stuck: ollama cannot embed (ollama is not reachable)", ""},
	}
	for _, tt := range tests {
		f := sound()
		tt.edit(&f)
		var got memhost.HealthCheck
		for _, c := range Evaluate(f, th).Checks {
			if c.Name == "embedding-queue" {
				got = c
			}
		}
		if got.Message != tt.want {
			t.Errorf("%s: message %q, want %q", tt.name, got.Message, tt.want)
		}
		if since, _ := got.Metadata["since"].(string); since != tt.since {
			t.Errorf("%s: since %q, want %q", tt.name, since, tt.since)
		}
	}
}

func TestCacheHitRateIsInfoUnlessConfigured(t *testing.T) {
	f := sound()
	f.Queue.CacheHits, f.Queue.CacheMisses = 1, 9
	r := Evaluate(f, config.DefaultHealth())
	if r.Overall != Healthy || r.Metrics.CacheHitRate == nil || *r.Metrics.CacheHitRate != 0.1 {
		t.Fatalf("default: %s, rate %v", r.Overall, r.Metrics.CacheHitRate)
	}
	th := config.DefaultHealth()
	th.MinCacheHitRate = 0.8
	if r := Evaluate(f, th); r.Overall != Degraded {
		t.Fatalf("with minCacheHitRate 0.8: %s", r.Overall)
	}
}

func TestPercentile(t *testing.T) {
	for _, tt := range []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{nil, 95, 0},
		{[]float64{5}, 95, 5},
		{[]float64{1, 2, 3, 4, 5}, 95, 5},
		{[]float64{5, 1, 4, 2, 3}, 50, 3},
	} {
		if got := Percentile(tt.xs, tt.p); got != tt.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tt.xs, tt.p, got, tt.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	f := sound()
	f.Leaks.Rebuild = []string{"brain/memory.db.rebuild-12"}
	md := Markdown(Evaluate(f, config.DefaultHealth()), []string{"removed 1 leaked file"})
	for _, want := range []string{"---\nlast_run: 2026-02-24T10:30:00Z\nlast_status: DEGRADED\n---\n", "- [x] **database** (pass)",
		"- [ ] **leaked-files** (warn): 1 files of interrupted rebuilds", "## Repairs\n\n- removed 1 leaked file\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
