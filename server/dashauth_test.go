package server

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDashboardAuth: with a token, a browser opens the dashboard once as
// /?token=TOKEN, which answers a page holding the dashboard's key (a secret
// of the server's run, not the token) and sets no cookie; the page keeps
// the key in its origin's storage and sends it as a header, which opens the
// pages and the API calls of the dashboard's script, but not from a page of
// another origin, and no other route. A navigation without the key gets
// the page that loads it (401); the static files need nothing. Without a
// token on loopback the dashboard is served like the API, and refused to
// other origins and hosts.
func TestDashboardAuth(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "tok"), []byte(strings.Repeat("k", 32)), 0o600)
	r := start(t, home, "127.0.0.1:0", "server:\n  tokenFile: tok\n")
	token := strings.Repeat("k", 32)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, header ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", r.info.URL+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp, b.String()
	}
	keyMeta := regexp.MustCompile(`<meta name="memhost-dashboard-key" content="([0-9a-f]+)">`)
	if resp, body := get("/"); resp.StatusCode != 401 || keyMeta.MatchString(body) || !strings.Contains(body, "/ui/static/boot.js") || !strings.Contains(body, "?token=") {
		t.Errorf("the dashboard without the token: %d\n%s", resp.StatusCode, body)
	}
	if resp, body := get("/?token=wrong"); resp.StatusCode != 401 || len(resp.Cookies()) != 0 || keyMeta.MatchString(body) {
		t.Errorf("a wrong token: %d, cookies %v\n%s", resp.StatusCode, resp.Cookies(), body)
	}
	resp, body := get("/ui/notebook?dir=lists&token=" + token)
	m := keyMeta.FindStringSubmatch(body)
	if resp.StatusCode != 200 || m == nil || resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("?token=: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	if len(resp.Cookies()) != 0 || resp.Header.Get("Set-Cookie") != "" {
		t.Fatalf("?token= sets a cookie, which every port of the host receives: %v", resp.Cookies())
	}
	key := m[1]
	if key == token || strings.Contains(key, token) || len(key) < 32 {
		t.Fatalf("the key is the API token or a short secret: %q", key)
	}
	if resp, body := get("/ui/notebook?dir=lists", "Memhost-Dashboard-Key", key); resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") == "" || !strings.Contains(body, "<nav") {
		t.Errorf("with the key: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	if resp, _ := get("/ui/static/app.js"); resp.StatusCode != 200 {
		t.Errorf("the dashboard's script without the key: %d", resp.StatusCode)
	}
	if code, body, _ := do(t, "GET", r.info.URL+"/ui/api/status", ``, "Memhost-Dashboard-Key", key, "Origin", r.info.URL); code != 200 {
		t.Errorf("the dashboard's API with the key from the dashboard: %d %s", code, body)
	}
	// EventSource sends no header of the page's: the key may be in the
	// address of the event streams alone.
	if resp, err := http.Get(r.info.URL + "/api/v1/events?key=" + key); err != nil || resp.StatusCode != 200 {
		t.Errorf("the event stream with the key in its address: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if code, body, _ := do(t, "GET", r.info.URL+"/ui/api/status?key="+key, ``); code != 401 {
		t.Errorf("the key in the address of a route that is no event stream: %d %s", code, body)
	}
	if code, body, _ := do(t, "POST", r.info.URL+"/api/v1/models", `{}`, "Memhost-Dashboard-Key", key, "Origin", r.info.URL); code != 401 {
		t.Errorf("an API route the dashboard does not call, with the key: %d %s", code, body)
	}
	if code, body, _ := do(t, "POST", r.info.URL+"/api/v1/status", `{}`, "Authorization", "Bearer "+key); code != 401 {
		t.Errorf("the key as the bearer token: %d %s", code, body)
	}
	if code, body, _ := do(t, "POST", r.info.URL+"/api/v1/remember", `{"text":"evil"}`, "Memhost-Dashboard-Key", key, "Origin", "http://evil.example"); code != 403 {
		t.Errorf("the key from another origin: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", r.info.URL+"/ui/api/status", ``, "Memhost-Dashboard-Key", "wrong"); code != 401 || !strings.Contains(body, "?token=") {
		t.Errorf("a wrong key: %d %s", code, body)
	}

	// No token: loopback rules.
	r2 := start(t, t.TempDir(), "127.0.0.1:0", "")
	if code, _, _ := do(t, "GET", r2.info.URL+"/", ""); code != 200 {
		t.Errorf("the dashboard on loopback: %d", code)
	}
	if code, _, _ := do(t, "POST", r2.info.URL+"/ui/api/save", `{"path":"a.md","text":"x","baseHash":""}`, "Origin", "http://evil.example"); code != 403 {
		t.Errorf("a save from another origin: %d", code)
	}
	req, _ := http.NewRequest("GET", r2.info.URL+"/", nil)
	req.Host = "evil.example"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("another Host (DNS rebinding): %v %v", resp, err)
	}
}
