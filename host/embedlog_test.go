package host

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/health"
	"github.com/memhost/memhost/internal/testbin"
)

var localPlugin struct {
	once sync.Once
	path string
	err  error
}

// localPluginBinary is the local provider: bin/'s when make built it
// (with the CPU flags it needs), else built here.
func localPluginBinary(t *testing.T) string {
	t.Helper()
	localPlugin.once.Do(func() {
		if p, err := filepath.Abs(filepath.Join("..", "bin", "memhost-embeddings-local")); err == nil {
			if _, err := os.Stat(p); err == nil {
				localPlugin.path = p
				return
			}
		}
		localPlugin.path, localPlugin.err = testbin.Build("../plugins/embeddings-local", "")
	})
	if localPlugin.err != nil {
		t.Fatalf("building the local provider: %v", localPlugin.err)
	}
	return localPlugin.path
}

// records is a slog handler keeping every record's level and message,
// and telling waiters of each one.
type records struct {
	mu   sync.Mutex
	all  []slog.Record
	seen chan struct{} // buffered 1: a record arrived since the last look
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.all = append(r.all, rec)
	r.mu.Unlock()
	select {
	case r.seen <- struct{}{}:
	default:
	}
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// matching lists the records at level whose message starts with prefix,
// each as its message and attributes.
func (r *records) matching(level slog.Level, prefix string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.all {
		if rec.Level == level && strings.HasPrefix(rec.Message, prefix) {
			line := rec.Message
			rec.Attrs(func(a slog.Attr) bool { line += " " + a.Key + "=" + a.Value.String(); return true })
			out = append(out, line)
		}
	}
	return out
}

// TestOfflineWorkerWarnsOnce: with no network and no model, the worker
// retries again and again; the long reason is logged once, the retries
// only as short debug lines, and health says the queue is stuck because
// the provider cannot embed, since the first failure.
func TestOfflineWorkerWarnsOnce(t *testing.T) {
	ctx := context.Background()
	var downloads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		downloads.Add(1)
		http.Error(w, "no route to the model", http.StatusServiceUnavailable)
	}))
	defer srv.Close()

	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	b, err := os.ReadFile(localPluginBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "plugins", "memhost-embeddings-local"), b, 0o755)
	cfg := config.Default()
	cfg.Memory.Embedding.Plugin = "local"
	cfg.Memory.Embedding.Options = map[string]map[string]string{"local": {"modelURL": srv.URL + "/all-MiniLM-L6-v2-Q4_K_M.gguf"}}
	logs := &records{seen: make(chan struct{}, 1)}
	clk := &clock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	h, err := Open(ctx, Options{Home: home, Config: cfg, Log: slog.New(logs), Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	writePage(t, h, "notes.md", "a page waiting for its vector")
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	h.queue.StartWorker(ctx, nil)
	// Three failed runs: the first and two retries.
	for len(logs.matching(slog.LevelWarn, "embedding failed"))+len(logs.matching(slog.LevelDebug, "embedding failed")) < 3 {
		<-logs.seen
	}
	clk.set(clk.now().Add(20 * time.Minute))
	r := checkHealth(t, h, memhost.HealthRequest{})
	q := status(t, r, "embedding-queue")
	want := "1 chunk waiting for a vector, stuck: local cannot embed (model not downloaded (download failed)"
	if q.Status != health.Warn || !strings.HasPrefix(q.Message, want) || !strings.HasSuffix(q.Message, "since 2026-03-02T09:00:00Z (20m ago)") {
		t.Errorf("queue %+v, want a warning %q… since the first failure", q, want)
	}
	h.queue.StopWorker()
	warned := logs.matching(slog.LevelWarn, "embedding failed")
	if len(warned) != 1 || !strings.Contains(warned[0], "model not downloaded (download failed)") {
		t.Errorf("warnings %q, want one naming the missing model", warned)
	}
	if n := downloads.Load(); n < 1 {
		t.Errorf("the model's URL was asked %d times", n)
	}
}
