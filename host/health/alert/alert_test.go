package alert

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost"
)

// receiver is a local webhook that keeps what it was sent.
type receiver struct {
	mu   sync.Mutex
	got  []Message
	fail bool
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.fail {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	var m Message
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &m); err != nil || r.Method != http.MethodPost {
		http.Error(w, "bad", http.StatusBadRequest)
		return
	}
	rc.got = append(rc.got, m)
}

func (rc *receiver) messages() []Message {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Message(nil), rc.got...)
}

func report(checks ...memhost.HealthCheck) memhost.HealthReport {
	return memhost.HealthReport{Overall: "UNHEALTHY", Checks: checks}
}

func check(name, status, msg string) memhost.HealthCheck {
	return memhost.HealthCheck{Name: name, Status: memhost.HealthStatus(status), Message: msg}
}

var t0 = time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)

func newRouter(t *testing.T, sinks ...Sink) *Router {
	return &Router{Home: t.TempDir(), Sinks: sinks, Location: time.UTC}
}

func TestUnchangedFailureIsSentOnce(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	r := newRouter(t, Webhook{URL: srv.URL, Timeout: 5 * time.Second})
	ctx := context.Background()
	fail := report(check("database", "fail", "cannot read the index"), check("queue", "pass", "ok"))
	for i := range 5 {
		if err := r.Route(ctx, fail, t0.Add(time.Duration(i)*30*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	got := rc.messages()
	if len(got) != 1 || got[0].Kind != Critical || len(got[0].Alerts) != 1 || got[0].Alerts[0].Check != "database" {
		t.Fatalf("after 5 runs of one failure the webhook got %+v, want one critical alert", got)
	}
	// A changed message is a new alert; passing again is one resolved.
	changed := report(check("database", "fail", "database disk image is malformed"))
	ok := report(check("database", "pass", "readable"))
	for i, rep := range []memhost.HealthReport{changed, changed, ok, ok} {
		if err := r.Route(ctx, rep, t0.Add(3*time.Hour+time.Duration(i)*30*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	got = rc.messages()
	if len(got) != 3 || got[1].Alerts[0].Message != "database disk image is malformed" || !got[2].Alerts[0].Resolved || got[2].Kind != Critical {
		t.Fatalf("webhook got %+v, want the first, the changed and one resolved", got)
	}
}

func TestWarningsBatchedHourly(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	r := newRouter(t, Webhook{URL: srv.URL, Timeout: 5 * time.Second})
	ctx := context.Background()
	runs := []memhost.HealthReport{
		report(check("latency", "warn", "p95 2500 ms")),
		report(check("latency", "warn", "p95 2500 ms"), check("drift", "warn", "3 rows")),
		report(check("latency", "warn", "p95 3100 ms"), check("drift", "warn", "3 rows")),
	}
	for i, rep := range runs { // at 0, 20 and 40 minutes: within the hour
		if err := r.Route(ctx, rep, t0.Add(time.Duration(i)*20*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if got := rc.messages(); len(got) != 0 {
		t.Fatalf("warnings sent within the hour: %+v", got)
	}
	if err := r.Route(ctx, runs[2], t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := rc.messages()
	if len(got) != 1 || got[0].Kind != Warning || len(got[0].Alerts) != 3 {
		t.Fatalf("after the hour the webhook got %+v, want one message of 3 warnings", got)
	}
	if err := r.Route(ctx, runs[2], t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := rc.messages(); len(got) != 1 {
		t.Fatalf("unchanged warnings sent again: %+v", got[1:])
	}
}

func TestDailyDigest(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	// The day ends at the home's midnight, not UTC's.
	loc := time.FixedZone("UTC+5", 5*3600)
	r := &Router{Home: t.TempDir(), Sinks: []Sink{Webhook{URL: srv.URL, Timeout: 5 * time.Second}}, Location: loc}
	ctx := context.Background()
	start := time.Date(2026, 11, 28, 17, 0, 0, 0, time.UTC) // 22:00 there
	for i := range 4 {                                      // 22:00 to 23:30
		if err := r.Route(ctx, report(check("db", "pass", "ok")), start.Add(time.Duration(i)*30*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if got := rc.messages(); len(got) != 0 {
		t.Fatalf("sent before the day ended: %+v", got)
	}
	if err := r.Route(ctx, report(check("db", "pass", "ok")), start.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := rc.messages()
	if len(got) != 1 || got[0].Kind != Info || got[0].Day != "2026-11-28" || got[0].Runs != 4 {
		t.Fatalf("webhook got %+v, want the digest of 2026-11-28 with 4 runs", got)
	}
}

func TestCommandGetsTheJSON(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "got.json")
	r := newRouter(t, Command{Argv: []string{"sh", "-c", `cat > "$0"`, out}, Timeout: 10 * time.Second})
	if err := r.Route(context.Background(), report(check("database", "fail", "gone")), t0); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	if err := json.Unmarshal(b, &m); err != nil || m.Kind != Critical || m.Alerts[0].Message != "gone" {
		t.Fatalf("the command read %s (%v)", b, err)
	}
}

func TestFailingSinkRetriedAtTheNextRun(t *testing.T) {
	rc := &receiver{fail: true}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	good := &receiver{}
	srv2 := httptest.NewServer(good)
	defer srv2.Close()
	r := newRouter(t, Command{Argv: []string{"false"}, Timeout: 10 * time.Second}, Webhook{URL: srv.URL, Timeout: 5 * time.Second})
	ctx := context.Background()
	fail := report(check("database", "fail", "gone"))
	if err := r.Route(ctx, fail, t0); err != nil {
		t.Fatalf("a failing sink failed the run: %v", err)
	}
	rc.mu.Lock()
	rc.fail = false
	rc.mu.Unlock()
	if err := r.Route(ctx, fail, t0.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := rc.messages(); len(got) != 1 || got[0].Alerts[0].Check != "database" {
		t.Fatalf("the recovered webhook got %+v, want the alert it missed, once", got)
	}
	var st state
	b, _ := os.ReadFile(filepath.Join(r.Home, StatePath))
	if err := json.Unmarshal(b, &st); err != nil || len(st.Outbox["command"]) != 1 || len(st.Outbox["webhook"]) != 0 {
		t.Fatalf("outbox = %v (%v), want the command's one message kept", st.Outbox, err)
	}
}

func TestWebhookRedirectStaysOnItsHost(t *testing.T) {
	other := &receiver{}
	otherSrv := httptest.NewServer(other)
	defer otherSrv.Close()
	// 127.0.0.1 and localhost are two hosts to the rule.
	redirect := httptest.NewServer(http.RedirectHandler(fmt.Sprintf("http://localhost:%d/", otherSrv.Listener.Addr().(*net.TCPAddr).Port), http.StatusTemporaryRedirect))
	defer redirect.Close()
	err := Webhook{URL: redirect.URL, Timeout: 5 * time.Second}.Send(context.Background(), []byte(`{}`))
	if err == nil || len(other.messages()) != 0 {
		t.Fatalf("redirect to another host: err %v, delivered %d", err, len(other.messages()))
	}
}

func TestCommandTimeout(t *testing.T) {
	start := time.Now()
	err := Command{Argv: []string{"sleep", "30"}, Timeout: 100 * time.Millisecond}.Send(context.Background(), []byte(`{}`))
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("a hung command: err %v after %v", err, time.Since(start))
	}
}

// A command that times out is killed with everything it started (its
// process group), not only its first process.
func TestCommandTimeoutKillsChildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	err := Command{Argv: []string{"sh", "-c", `sleep 300 & echo $! > "$0"; wait`, pidFile}, Timeout: 3 * time.Second}.Send(context.Background(), []byte(`{}`))
	if err == nil {
		t.Fatal("a hung command succeeded")
	}
	b, rerr := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if rerr != nil || pid <= 0 {
		t.Fatalf("the command's child never started: %q %v", b, rerr)
	}
	for deadline := time.Now().Add(20 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the timed-out command's child %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive is whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
