package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestDashboardCredentialStaysHome: cookies ignore ports, so a cookie of
// the dashboard would reach every server of 127.0.0.1 the browser visits,
// which could replay it (with any header it likes). In a real chromium the
// dashboard of server A is opened with its token address; the browser then
// visits B, another port of 127.0.0.1, which records what it receives and
// whose page calls A with the browser's credentials (a fetch, an image, a
// delete). B must receive nothing of A's, and A must refuse every call of
// B's page; A's dashboard still works, in a new tab too.
func TestDashboardCredentialStaysHome(t *testing.T) {
	chromium := chromiumPath(t)
	home := t.TempDir()
	token := strings.Repeat("k", 32)
	os.WriteFile(filepath.Join(home, "tok"), []byte(token), 0o600)
	os.MkdirAll(filepath.Join(home, "notebook"), 0o755)
	os.WriteFile(filepath.Join(home, "notebook", "secret.md"), []byte("# Secret\n\nthe vault code is 4711\n"), 0o644)
	a := start(t, home, "127.0.0.1:0", "server:\n  tokenFile: tok\n")

	var (
		mu   sync.Mutex
		seen []string // every request B received: its URL and headers
	)
	attack := fmt.Sprintf(`<!doctype html><title>B</title><p id=b>another local server</p>
<img id=img src="%[1]s/ui/settings">
<script>
Promise.allSettled([
  fetch("%[1]s/ui/api/page/secret.md", {mode: "no-cors", credentials: "include"}),
  fetch("%[1]s/ui/api/status", {credentials: "include"}),
  fetch("%[1]s/ui/api/delete", {method: "POST", mode: "no-cors", credentials: "include", body: JSON.stringify({path: "secret.md"})}),
]).then(() => { document.getElementById("b").id = "done"; });
</script>`, a.info.URL)
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %v", r.URL, r.Header))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(attack))
	}))
	defer b.Close()

	ctx := chromiumContext(t, chromium, 2*time.Minute)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(a.info.URL+"/?token="+token),
		chromedp.WaitVisible(chromedp.CSS("nav")),
	); err != nil {
		t.Fatalf("opening A's dashboard with its token: %v", err)
	}
	if u, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`)); err != nil || strings.Contains(u, token) {
		t.Errorf("the address still holds the token: %q %v", u, err)
	}
	key, err := chromedp.Run(ctx, chromedp.Evaluate[string](`localStorage.getItem("memhost-dashboard-key") || ""`))
	if err != nil {
		t.Fatal(err)
	}

	// The status of every answer of A's the browser gets from now on. The
	// events of a request may come in any order: a request's path and
	// status are matched by its id.
	var (
		smu    sync.Mutex
		status = map[string]int64{}             // path of A's → status code
		paths  = map[network.RequestID]string{} // request → path of A's
		codes  = map[network.RequestID]int64{}  // request → status code
		got    = make(chan struct{}, 256)
	)
	chromedp.Listen(ctx, func(ev any) {
		smu.Lock()
		defer smu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if p, ok := strings.CutPrefix(ev.Request.URL, a.info.URL); ok {
				paths[ev.RequestID] = p
			}
		case *network.EventResponseReceived:
			codes[ev.RequestID] = ev.Response.Status
		case *network.EventResponseReceivedExtraInfo:
			codes[ev.RequestID] = ev.StatusCode
		default:
			return
		}
		for id, p := range paths {
			if c, ok := codes[id]; ok {
				status[p] = c
			}
		}
		select {
		case got <- struct{}{}:
		default:
		}
	})
	if err := chromedp.Do(ctx,
		chromedp.Navigate(b.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#done")),
	); err != nil {
		t.Fatalf("visiting B: %v", err)
	}
	calls := []string{"/ui/settings", "/ui/api/page/secret.md", "/ui/api/status", "/ui/api/delete"}
	for deadline := time.After(30 * time.Second); ; {
		smu.Lock()
		n := 0
		for _, c := range calls {
			if _, ok := status[c]; ok {
				n++
			}
		}
		smu.Unlock()
		if n == len(calls) {
			break
		}
		select {
		case <-got:
		case <-deadline:
			t.Fatalf("A's answers to B's page: %v", status)
		}
	}
	smu.Lock()
	for _, c := range calls {
		if s := status[c]; s != http.StatusForbidden && s != http.StatusUnauthorized {
			t.Errorf("B's page calling A's %s with the browser's credentials: %d", c, s)
		}
	}
	smu.Unlock()
	if _, err := os.Stat(filepath.Join(home, "notebook", "secret.md")); err != nil {
		t.Errorf("B's page deleted A's page: %v", err)
	}

	// What B received: nothing it could replay against A.
	mu.Lock()
	all := strings.Join(seen, "\n")
	mu.Unlock()
	if strings.Contains(all, token) || key != "" && strings.Contains(all, key) || strings.Contains(all, "memhost-") {
		t.Errorf("B, another port of 127.0.0.1, received a credential of A's:\n%s", all)
	}
	for _, line := range seen {
		for _, c := range strings.Split(between(line, "Cookie:[", "]"), ";") {
			name, value, ok := strings.Cut(strings.TrimSpace(c), "=")
			if !ok {
				continue
			}
			// Replayed by B's server, with the headers a same-origin
			// fetch would carry.
			code, body, _ := do(t, "GET", a.info.URL+"/ui/api/page/secret.md", "", "Cookie", name+"="+value, "Sec-Fetch-Site", "same-origin")
			if code == http.StatusOK {
				t.Errorf("B replaying its cookie %s against A: %d %s", name, code, body)
			}
		}
	}

	// Back on A, the dashboard works, its scripts' calls (the status poll,
	// the event stream, the plugin list) too.
	if key == "" {
		t.Fatal("A's dashboard keeps no key in its origin's storage")
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(a.info.URL+"/ui/settings"),
		chromedp.WaitVisible(chromedp.CSS("nav")),
		chromedp.WaitVisible(chromedp.CSS("#plugins-box[data-loaded]")),
		chromedp.Poll[chromedp.Void](`document.querySelector("#provider-status")?.textContent.includes("pending")`),
		chromedp.Poll[chromedp.Void](`document.querySelector("#live")?.textContent === "live"`),
	); err != nil {
		t.Fatalf("A's dashboard after the visit to B: %v", err)
	}
	// A new tab of the same browser opens the dashboard without the token.
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(tab,
		chromedp.Navigate(a.info.URL+"/ui/page/secret.md"),
		chromedp.WaitVisible(chromedp.CSS("#view")),
	); err != nil {
		t.Fatalf("A's dashboard in a new tab: %v", err)
	}
}

// between is the text of s after open up to the next close.
func between(s, open, close string) string {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return ""
	}
	in, _, _ := strings.Cut(rest, close)
	return in
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
