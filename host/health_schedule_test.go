package host

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/health/alert"
	"github.com/memhost/memhost/host/health/history"
)

// TestHealthSchedule runs the scheduled check under Watch on a fake timer
// and clock: every run is kept in health/history/ (older than keepDays
// pruned), and a failure that stays the same reaches the webhook once.
func TestHealthSchedule(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var got []alert.Message
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m alert.Message
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)

	c := &clock{t: time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)}
	cfg := config.Default()
	cfg.Health.DriftFail = 1
	cfg.Health.KeepDays = 1
	cfg.Health.Alerts.Webhook = srv.URL
	waits := make(chan time.Duration, 10)
	fire := make(chan time.Time)
	h, err := Open(ctx, Options{Home: t.TempDir(), Config: cfg, Now: c.now,
		HealthTimer: func(d time.Duration) <-chan time.Time { waits <- d; return fire }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "Sarah Chen's phone is 555-1234"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "met Sarah"}); err != nil {
		t.Fatal(err)
	}
	mustExec(t, rawDB(t, h), `DELETE FROM chunks_fts`) // drift: index-drift fails

	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Watch(wctx, WatchRequest{}) }()

	start := c.now()
	for i, step := range []struct{ wait, at time.Duration }{
		{30 * time.Minute, 30 * time.Minute}, {30 * time.Minute, time.Hour},
		// everyMin changed in config.yaml applies from the next wait.
		{15 * time.Minute, 90 * time.Minute}, {15 * time.Minute, 26 * time.Hour},
	} {
		if d := <-waits; d != step.wait {
			t.Fatalf("wait %d: the schedule waits %v, want health.everyMin's %v", i, d, step.wait)
		}
		c.set(start.Add(step.at))
		if i == 1 {
			h.editConfig(func(cfg *config.Config) { cfg.Health.EveryMin = 15 })
		}
		fire <- c.now()
	}
	<-waits // the fourth run is done
	stop()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}

	entries, err := os.ReadDir(filepath.Join(h.Home(), filepath.FromSlash(history.Dir)))
	if err != nil || len(entries) != 1 || entries[0].Name() != "2026-11-29T16-00-00.000Z.json" {
		t.Fatalf("history holds %v (%v), want the last run's only (keepDays 1)", entries, err)
	}
	hist, err := h.HealthHistory(ctx, memhost.HealthHistoryRequest{})
	if err != nil || len(hist.Reports) != 1 || hist.Reports[0].Timestamp != "2026-11-29T16:00:00Z" {
		t.Fatalf("HealthHistory = %+v, %v", hist, err)
	}
	if _, err := h.HealthHistory(ctx, memhost.HealthHistoryRequest{Limit: -1}); err == nil {
		t.Fatal("a negative limit was taken")
	}

	mu.Lock()
	defer mu.Unlock()
	var critical, digests int
	for _, m := range got {
		switch m.Kind {
		case alert.Critical:
			critical++
			if len(m.Alerts) != 1 || m.Alerts[0].Check != "index-drift" {
				t.Fatalf("critical alert %+v, want index-drift alone", m)
			}
		case alert.Info:
			digests++
			if m.Day != "2026-11-28" || m.Runs != 3 {
				t.Fatalf("digest %+v, want 2026-11-28's 3 runs", m)
			}
		}
	}
	if critical != 1 || digests != 1 {
		t.Fatalf("the webhook got %+v, want one critical alert over 4 runs and one digest", got)
	}
}
