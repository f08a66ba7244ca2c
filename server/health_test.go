package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/memhost/memhost"
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
	if code, resp := get(); code != http.StatusOK || resp.Overall != health.Healthy {
		t.Fatalf("healthy home: %d %s %+v", code, resp.Overall, resp.Checks)
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
