package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/health"
)

// TestHealthStatusCodes: GET /api/health answers 503 for an unhealthy
// home and 200 once a repair (the operation, through the client) made it
// healthy again.
func TestHealthStatusCodes(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	r := start(t, home, "127.0.0.1:0", "health:\n  driftFail: 1\n")
	c := r.client(t)
	for _, text := range []string{"Sarah Chen's phone is 555-1234", "Bob likes tea"} {
		if _, err := c.Remember(ctx, memhost.RememberRequest{Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DailyLog(ctx, memhost.DailyLogRequest{Text: "checked health"}); err != nil {
		t.Fatal(err)
	}
	get := func() (int, memhost.HealthResponse) {
		t.Helper()
		code, body, _ := do(t, http.MethodGet, r.info.URL+"/api/health", "")
		var resp memhost.HealthResponse
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatalf("%d %s: %v", code, body, err)
		}
		return code, resp
	}
	if code, resp := get(); code != http.StatusOK || resp.Overall != health.Healthy || resp.ReportPath != "" {
		t.Fatalf("healthy home: %d %s %q %+v", code, resp.Overall, resp.ReportPath, resp.Checks)
	}
	// A GET, which any page can make a browser send, writes no file.
	if _, err := os.Stat(filepath.Join(home, "health", "latest-report.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("GET /api/health wrote the report: %v", err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(home, "brain", "memory.db")+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM chunks_fts`); err != nil {
		t.Fatal(err)
	}
	if code, resp := get(); code != http.StatusServiceUnavailable || resp.Overall != health.Unhealthy {
		t.Fatalf("drifted home: %d %s %+v", code, resp.Overall, resp.Checks)
	}
	resp, err := c.Health(ctx, memhost.HealthRequest{Repair: true})
	if err != nil || resp.Overall != health.Healthy || len(resp.Repairs) == 0 {
		t.Fatalf("repair through the client: %s %q %v", resp.Overall, resp.Repairs, err)
	}
	if code, _ := get(); code != http.StatusOK {
		t.Fatalf("after the repair: %d", code)
	}
	// The monitor's three checks are not kept; the repair's is.
	if hist, err := c.HealthHistory(ctx, memhost.HealthHistoryRequest{}); err != nil || len(hist.Reports) != 1 || hist.Reports[0].Overall != health.Healthy {
		t.Fatalf("health history after 3 GET /api/health and a repair: %+v, %v", hist, err)
	}
}

// TestHealthChecksOneAtATime: GET /api/health runs one check at a time,
// however many ask: GETs that come while a check runs wait for it and
// answer its report; a GET that leaves does not end the check for the
// others; a GET after it ended runs a new one.
func TestHealthChecksOneAtATime(t *testing.T) {
	home := t.TempDir()
	h, err := host.Open(context.Background(), host.Options{Home: home, Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	s := New(h, Options{})
	defer s.Close()
	var checks atomic.Int32
	started, release := make(chan struct{}, 8), make(chan struct{})
	s.healthCheck = func(ctx context.Context) (memhost.HealthResponse, error) {
		n := checks.Add(1)
		started <- struct{}{}
		if n == 1 {
			<-release
		}
		return memhost.HealthResponse{HealthReport: memhost.HealthReport{Overall: health.Healthy, Timestamp: fmt.Sprint("check ", n)}}, nil
	}
	joined := make(chan struct{}, 8)
	s.healthJoined = func() { joined <- struct{}{} }
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	type answer struct {
		code int
		body string
	}
	get := func(ctx context.Context, out chan<- answer) {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/health", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- answer{0, err.Error()}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- answer{resp.StatusCode, string(b)}
	}
	leaving, leave := context.WithCancel(context.Background())
	left := make(chan answer, 1)
	go get(leaving, left) // the first, which leaves
	<-started
	answers := make(chan answer, 4)
	for range 4 {
		go get(context.Background(), answers)
	}
	for range 4 {
		<-joined
	}
	leave()
	<-left
	close(release)
	for range 4 {
		if a := <-answers; a.code != 200 || !strings.Contains(a.body, `"check 1"`) {
			t.Errorf("a GET that came while the check ran: %d %s", a.code, a.body)
		}
	}
	if n := checks.Load(); n != 1 {
		t.Errorf("5 GETs at once ran %d checks", n)
	}
	go get(context.Background(), answers)
	if a := <-answers; a.code != 200 || !strings.Contains(a.body, `"check 2"`) {
		t.Errorf("a GET after the check: %d %s", a.code, a.body)
	}
}
