package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/cmd/memhost-core/internal/corecmd"
	"github.com/memhost/memhost/host/health"
)

// TestHealthExitCodes: 0 healthy, 1 degraded, 2 unhealthy, the report
// printed (or as JSON) either way, nothing on stderr.
func TestHealthExitCodes(t *testing.T) {
	home := t.TempDir()
	ok(t, home, "init")
	ok(t, home, "remember", "Sarah Chen - Phone: 555-1234")
	// The README's tour: the index deleted, no daily log today; nothing
	// is wrong.
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(home, "brain", "memory.db"+s))
	}
	out := ok(t, home, "health")
	if !strings.HasPrefix(out, "HEALTHY\n") || !strings.Contains(out, "pass  daily-log") || !strings.Contains(out, "report: "+filepath.Join(home, "health", "latest-report.md")) {
		t.Fatalf("healthy home:\n%s", out)
	}
	// Degraded: a file left by a rebuild that was killed.
	leak := filepath.Join(home, "brain", "memory.db.rebuild-999999")
	os.WriteFile(leak, nil, 0o644)
	r := memhost(t, home, nil, "health")
	if r.code != corecmd.ExitDegraded || !strings.HasPrefix(r.stdout, "DEGRADED\n") || !strings.Contains(r.stdout, "warn  leaked-files") || r.stderr != "" {
		t.Fatalf("a leaked file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	os.Remove(leak)
	ok(t, home, "sync")
	if _, err := os.Stat(filepath.Join(home, "health", "latest-report.md")); err != nil {
		t.Fatal(err)
	}

	// Unhealthy: the drift limit lowered below a damaged index's.
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("health:\n  driftFail: 1\n"), 0o644)
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(home, "brain", "memory.db")+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`DELETE FROM chunks_fts`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	r = memhost(t, home, nil, "--json", "health")
	resp := decode[mh.HealthResponse](t, r.stdout)
	if r.code != corecmd.ExitUnhealthy || resp.Overall != health.Unhealthy || r.stderr != "" {
		t.Fatalf("damaged index: exit %d, %s %+v, stderr %q", r.code, resp.Overall, resp.Checks, r.stderr)
	}
	r = memhost(t, home, nil, "health", "--repair")
	if r.code != 0 || !strings.Contains(r.stdout, "repaired:\n") {
		t.Fatalf("repair: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := memhost(t, home, nil, "health", "extra"); r.code != cmdapp.ExitUsage {
		t.Fatalf("an argument: exit %d", r.code)
	}
	// A home that cannot be checked at all is unhealthy, with a reason.
	broken := t.TempDir()
	os.WriteFile(filepath.Join(broken, "config.yaml"), []byte("memory: [\n"), 0o644)
	r = memhost(t, broken, nil, "--json", "health")
	if r.code != corecmd.ExitUnhealthy || !strings.Contains(r.stdout, `"overall": "UNHEALTHY"`) || !strings.Contains(r.stderr, "config.yaml") {
		t.Fatalf("broken config: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	out = ok(t, home, "health", "--into-notebook")
	if _, err := os.Stat(filepath.Join(home, "notebook", "HEARTBEAT.md")); err != nil || !strings.Contains(out, "HEARTBEAT.md") {
		t.Fatalf("--into-notebook: %v\n%s", err, out)
	}
}

// TestHealthHistory: every check is kept and listed newest first, with
// the checks that did not pass.
func TestHealthHistory(t *testing.T) {
	home := t.TempDir()
	ok(t, home, "init")
	if out := ok(t, home, "health", "history"); out != "no health reports kept yet\n" {
		t.Fatalf("no history yet:\n%s", out)
	}
	os.WriteFile(filepath.Join(home, "brain", "memory.db.rebuild-999999"), nil, 0o644)
	if r := memhost(t, home, nil, "health"); r.code != corecmd.ExitDegraded {
		t.Fatalf("a leaked file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := ok(t, home, "health", "history", "--limit", "1")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  DEGRADED$`).MatchString(lines[0]) ||
		!strings.HasPrefix(lines[1], "  warn  leaked-files        ") {
		t.Fatalf("health history --limit 1:\n%s", out)
	}
	r := memhost(t, home, nil, "--json", "health", "history")
	if resp := decode[mh.HealthHistoryResponse](t, r.stdout); r.code != 0 || len(resp.Reports) != 1 || resp.Reports[0].Overall != health.Degraded {
		t.Fatalf("--json health history: exit %d %+v", r.code, resp)
	}
	if r := memhost(t, home, nil, "health", "history", "--limit", "-1"); r.code == 0 || !strings.Contains(r.stderr, "limit must not be negative") {
		t.Fatalf("a negative limit: exit %d, stderr %q", r.code, r.stderr)
	}
}
