package server

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCrossSiteRefused: what a browser says of where a request comes from
// (fetch metadata) is judged on every route of the TCP listener. A request
// made by a page of another site, or of another origin of this site (a
// script on another port of 127.0.0.1: same-site), is refused, whatever it
// is (an image, a fetch, a form, a frame, a link) and with or without a
// credential; what the address bar opens and the dashboard's own links and
// calls are served, and so are programs that send no fetch metadata (curl,
// the CLI).
func TestCrossSiteRefused(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "notebook"), 0o755)
	os.WriteFile(filepath.Join(home, "notebook", "a.md"), []byte("# A\n\nalpha\n"), 0o644)
	token := strings.Repeat("t", 32)
	os.WriteFile(filepath.Join(home, "tok"), []byte(token), 0o600)
	open := start(t, t.TempDir(), "127.0.0.1:0", "health:\n  everyMin: 0\n")
	guarded := start(t, home, "127.0.0.1:0", "health:\n  everyMin: 0\nserver:\n  tokenFile: tok\n")
	os.MkdirAll(filepath.Join(open.home, "notebook"), 0o755)
	os.WriteFile(filepath.Join(open.home, "notebook", "a.md"), []byte("# A\n\nalpha\n"), 0o644)

	image := []string{"Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "image"}
	script := []string{"Sec-Fetch-Mode", "cors", "Sec-Fetch-Dest", "empty"}
	page := []string{"Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}
	frame := []string{"Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "iframe"}
	with := func(site string, kind []string, more ...string) []string {
		return append(append([]string{"Sec-Fetch-Site", site}, kind...), more...)
	}
	cases := []struct {
		name, method, path, body string
		header                   []string
		refused                  bool
	}{
		{"an image of another site showing the health report", "GET", "/api/health", "", with("cross-site", image), true},
		{"an image of another site showing the settings", "GET", "/ui/settings", "", with("cross-site", image), true},
		{"an image of another port reading a page", "GET", "/api/debug/notebook/a.md", "", with("same-site", image), true},
		{"a script of another port reading a page", "GET", "/ui/api/page/a.md", "", with("same-site", script), true},
		{"a script of another port listening to events", "GET", "/api/v1/events", "", with("same-site", script), true},
		{"a form of another port writing", "POST", "/api/v1/remember", `{"text": "evil"}`, with("same-site", []string{"Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}), true},
		{"a script of another site writing", "POST", "/api/debug/notebook/evil.md", `{"content": "evil"}`, with("cross-site", []string{"Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "empty"}), true},
		{"a frame of another port", "GET", "/ui/notebook", "", with("same-site", frame), true},
		{"a frame of another site", "GET", "/", "", with("cross-site", frame), true},
		{"the address bar", "GET", "/ui/notebook", "", with("none", page), false},
		{"a link of the dashboard", "GET", "/ui/page/a.md", "", with("same-origin", page), false},
		{"the dashboard's script", "GET", "/ui/api/page/a.md", "", with("same-origin", script), false},
		{"a link of another site", "GET", "/ui/notebook", "", with("cross-site", page), true},
		{"a link of another port", "GET", "/", "", with("same-site", page), true},
		{"curl", "GET", "/api/debug/notebook/a.md", "", nil, false},
	}
	for _, srv := range []struct {
		name string
		r    *running
		auth []string
	}{
		{"loopback, no token", open, nil},
		{"with a token", guarded, []string{"Authorization", "Bearer " + token}},
	} {
		for _, c := range cases {
			code, body := answer(t, c.method, srv.r.info.URL+c.path, c.body, append(append([]string{}, c.header...), srv.auth...)...)
			switch {
			case c.refused && (code != 403 || errorOf(t, body).Field != "Sec-Fetch-Site"):
				t.Errorf("%s, %s: %s %s: %d %s; want 403 on field Sec-Fetch-Site", srv.name, c.name, c.method, c.path, code, body)
			case !c.refused && code != 200:
				t.Errorf("%s, %s: %s %s: %d %s; want 200", srv.name, c.name, c.method, c.path, code, body)
			}
		}
		if pages := pagesIn(t, srv.r.home); len(pages) != 1 || pages[0] != "a.md" {
			t.Errorf("%s: refused writes left the notebook with %v", srv.name, pages)
		}
		// The refused health check ran nothing: it wrote no report.
		if _, err := os.Stat(filepath.Join(srv.r.home, "health", "latest-report.md")); err == nil {
			t.Errorf("%s: a refused GET /api/health wrote the report", srv.name)
		}
	}
}

// answer is do for a request that may answer an endless event stream: the
// status of a stream, and no body.
func answer(t *testing.T, method, url, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, ""
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
