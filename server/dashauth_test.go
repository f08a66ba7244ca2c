package server

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDashboardAuth: with a token, a browser opens the dashboard once as
// /?token=TOKEN, which sets a SameSite cookie (a secret of the server's
// run, not the token) and redirects to the address without it; the
// cookie then opens the pages and the API calls of the dashboard's script,
// but not from a page of another origin, and no other route. Without a token on loopback the dashboard is
// served like the API, and refused to other origins and hosts.
func TestDashboardAuth(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "tok"), []byte(strings.Repeat("k", 32)), 0o600)
	r := start(t, home, "127.0.0.1:0", "server:\n  tokenFile: tok\n")
	token := strings.Repeat("k", 32)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, header ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", r.info.URL+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := get("/"); resp.StatusCode != 401 {
		t.Errorf("the dashboard without the token: %d", resp.StatusCode)
	}
	if resp := get("/?token=wrong"); resp.StatusCode != 401 || len(resp.Cookies()) != 0 {
		t.Errorf("a wrong token: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	resp := get("/ui/notebook?dir=lists&token=" + token)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/notebook?dir=lists" {
		t.Fatalf("?token=: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	cs := resp.Cookies()
	if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Path != "/" {
		t.Fatalf("cookie %+v", cs)
	}
	if cs[0].Value == token || strings.Contains(cs[0].Value, token) || len(cs[0].Value) < 32 {
		t.Fatalf("the cookie holds the API token or a short secret: %+v", cs[0])
	}
	cookie := cs[0].Name + "=" + cs[0].Value
	if resp := get("/ui/notebook?dir=lists", "Cookie", cookie); resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("with the cookie: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	if code, body, _ := do(t, "GET", r.info.URL+"/ui/api/status", ``, "Cookie", cookie, "Origin", r.info.URL); code != 200 {
		t.Errorf("the dashboard's API with the cookie from the dashboard: %d %s", code, body)
	}
	if code, body, _ := do(t, "POST", r.info.URL+"/api/v1/models", `{}`, "Cookie", cookie, "Origin", r.info.URL); code != 401 {
		t.Errorf("an API route the dashboard does not call, with the cookie: %d %s", code, body)
	}
	if code, body, _ := do(t, "POST", r.info.URL+"/api/v1/status", `{}`, "Authorization", "Bearer "+cs[0].Value); code != 401 {
		t.Errorf("the cookie's secret as the bearer token: %d %s", code, body)
	}
	if code, body, _ := do(t, "POST", r.info.URL+"/api/v1/remember", `{"text":"evil"}`, "Cookie", cookie, "Origin", "http://evil.example"); code != 403 {
		t.Errorf("the cookie from another origin: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", r.info.URL+"/ui/api/status", ``, "Cookie", cs[0].Name+"=wrong"); code != 401 || !strings.Contains(body, "?token=") {
		t.Errorf("a wrong cookie: %d %s", code, body)
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
