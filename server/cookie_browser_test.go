package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboardCookieStaysHome: cookies ignore ports, so every local
// server the browser visits receives the dashboard's cookie. In a real
// chromium, the dashboard of server A is opened with its token address,
// then the browser visits server B, another port of 127.0.0.1, which
// records the Cookie header it receives. B gets A's cookie (the browser
// sends it, as it would to any local port) but never A's API token, and
// the value it got is no bearer token for A's API; the cookie still
// opens A's dashboard.
func TestDashboardCookieStaysHome(t *testing.T) {
	chromium := chromiumPath(t)
	home := t.TempDir()
	token := strings.Repeat("k", 32)
	os.WriteFile(filepath.Join(home, "tok"), []byte(token), 0o600)
	a := start(t, home, "127.0.0.1:0", "server:\n  tokenFile: tok\n")

	var (
		mu      sync.Mutex
		cookies []string // Cookie headers B received
	)
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cookies = append(cookies, r.Header.Get("Cookie"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html><title>B</title><p id=b>another local server</p>"))
	}))
	defer b.Close()

	ctx := chromiumContext(t, chromium, 2*time.Minute)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(a.info.URL+"/?token="+token),
		chromedp.WaitVisible(chromedp.CSS("nav")),
	); err != nil {
		t.Fatalf("opening A's dashboard with its token: %v", err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(b.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#b")),
	); err != nil {
		t.Fatalf("visiting B: %v", err)
	}

	mu.Lock()
	got := strings.Join(cookies, "; ")
	mu.Unlock()
	if strings.Contains(got, token) {
		t.Fatalf("B, another port of 127.0.0.1, received A's API token: Cookie %q", got)
	}
	// What B holds: A's cookie (cookies have no port). It must be no key
	// to A's API, yet still A's dashboard's.
	var values []string
	for _, c := range strings.Split(got, ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(c), "=")
		if ok && strings.HasPrefix(name, "memhost-") {
			values = append(values, value)
		}
	}
	if len(values) == 0 {
		t.Fatalf("B received no cookie of A's (Cookie %q): the test would prove nothing", got)
	}
	for _, v := range values {
		if code, body, _ := do(t, "POST", a.info.URL+"/api/v1/status", `{}`, "Authorization", "Bearer "+v); code != http.StatusUnauthorized {
			t.Errorf("the cookie's value %q as A's bearer token: %d %s", v, code, body)
		}
	}

	// Back on A, the dashboard works with its cookie, its scripts' calls
	// too.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(a.info.URL+"/ui/settings"),
		chromedp.WaitVisible(chromedp.CSS("nav")),
	); err != nil {
		t.Fatalf("A's dashboard after the visit to B: %v", err)
	}
	status, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch("/ui/api/status").then(r => String(r.status))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("the dashboard's script calling A: %v", err)
	}
	if status != "200" {
		t.Errorf("the dashboard's script calling A: %s", status)
	}
}

// chromiumPath finds the browser, or skips the test.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed: the browser test skips (scripts/chromium.sh installs it as root)")
	return ""
}

// chromiumContext starts a headless chromium that stops with the test or
// after timeout.
func chromiumContext(t *testing.T, path string, timeout time.Duration) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	ctx, cancelC := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	return ctx
}
