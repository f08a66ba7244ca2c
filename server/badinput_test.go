package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/mcp"
)

// overSocket sends a request through the server's unix socket, as the CLI
// does (requests naming the server's files are taken only there).
func overSocket(t *testing.T, r *running, path, body string) (int, string) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", r.info.Socket)
	}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Post("http://memhost"+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestModelBadInput: a model name or argument that cannot name a model (a
// folder in a name, a control character) is the caller's mistake, 400 with
// the input named, not the server's 500; a good name that is not there
// stays 404.
func TestModelBadInput(t *testing.T) {
	home := t.TempDir()
	r := start(t, home, "127.0.0.1:0", "")
	os.MkdirAll(filepath.Join(home, "models"), 0o755)
	keep := filepath.Join(home, "keep.gguf")
	os.WriteFile(keep, []byte("GGUF"), 0o644)
	for _, tc := range []struct {
		name, path, body string
		socket           bool
		status           int
		field, says      string
	}{
		{"rm ..", "/api/v1/models/rm", `{"name": "../keep"}`, false, 400, "name", `"../keep"`},
		{"rm empty", "/api/v1/models/rm", `{"name": ""}`, false, 400, "name", "no model name"},
		{"rm folder", "/api/v1/models/rm", `{"name": "a/b.gguf"}`, false, 400, "name", `"a/b.gguf"`},
		{"rm dot dot", "/api/v1/models/rm", `{"name": ".."}`, false, 400, "name", `".."`},
		{"rm NUL", "/api/v1/models/rm", `{"name": "a\u0000b"}`, false, 400, "name", `control character (U+0000)`},
		{"rm missing", "/api/v1/models/rm", `{"name": "nope"}`, false, 404, "name", "nope"},
		{"pull URL with NUL", "/api/v1/models/pull", `{"model": "https://models.example/a\u0000.gguf"}`, false, 400, "model", `control character (U+0000)`},
		{"pull path with NUL", "/api/v1/models/pull", `{"model": "./a\u0000.gguf"}`, true, 400, "model", `"./a\x00.gguf" holds a control character (U+0000)`},
		{"pull file URL with NUL", "/api/v1/models/pull", `{"model": "file:///tmp/a\u0000.gguf"}`, true, 400, "model", `control character (U+0000)`},
		{"pull name with a control character", "/api/v1/models/pull", `{"model": "mini\u0001lm"}`, true, 400, "model", `control character (U+0001)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var code int
			var body string
			if tc.socket {
				code, body = overSocket(t, r, tc.path, tc.body)
			} else {
				code, body, _ = do(t, "POST", r.info.URL+tc.path, tc.body)
			}
			if code != tc.status {
				t.Fatalf("status %d, want %d: %s", code, tc.status, body)
			}
			e := errorOf(t, body)
			if e.Field != tc.field || !strings.Contains(e.Message, tc.says) {
				t.Errorf("error %+v, want field %q and a message with %q", e, tc.field, tc.says)
			}
			if strings.Count(strings.TrimSpace(body), "\n") != 0 {
				t.Errorf("error body is not one line: %q", body)
			}
		})
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the file beside the models folder: %v", err)
	}
}

// TestLoneSurrogate: a \ud800 escape without its other half is refused as
// invalid UTF-8 is, 400 naming the field, rather than stored as U+FFFD;
// a whole pair (an emoji) is text.
func TestLoneSurrogate(t *testing.T) {
	home := t.TempDir()
	r := start(t, home, "127.0.0.1:0", "")
	for _, tc := range []struct {
		name, path, body string
		field, says      string
	}{
		{"remember", "/api/v1/remember", `{"text": "kumquat \ud800 pie", "category": "reference"}`, "text", `text holds \ud800 at byte 18`},
		{"second half alone", "/api/v1/write", `{"path": "reference/k.md", "text": "kumquat \udfff"}`, "text", `\udfff`},
		{"first half then a letter", "/api/v1/daily-log", `{"text": "kumquat \uD83D\u0041"}`, "text", `\uD83D`},
		{"in a list", "/api/v1/recall", `{"query": "kumquat", "sources": ["notebook", "\udc00"]}`, "sources", `sources[1] holds \udc00`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := do(t, "POST", r.info.URL+tc.path, tc.body)
			if code != 400 {
				t.Fatalf("status %d, want 400: %s", code, body)
			}
			e := errorOf(t, body)
			if e.Kind != "bad-input" || e.Field != tc.field || !strings.Contains(e.Message, tc.says) {
				t.Errorf("error %+v, want bad-input, field %q, a message with %q", e, tc.field, tc.says)
			}
		})
	}
	if pages := pagesIn(t, home); len(pages) != 0 {
		t.Errorf("refused writes landed: %v", pages)
	}
	code, body, _ := do(t, "POST", r.info.URL+"/api/v1/remember", `{"text": "kumquat \ud83d\ude00 pie", "category": "reference", "file": "k"}`)
	if code != 200 {
		t.Fatalf("a surrogate pair: %d %s", code, body)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "notebook", "reference", "k.md")); !strings.Contains(string(b), "kumquat 😀 pie") {
		t.Errorf("reference/k.md: %q", b)
	}
}

// TestConfigBroken: while config.yaml cannot be used (a YAML error, a bad
// value), the API says so as the CLI does, with the file, the line or the
// key, instead of answering with settings the file no longer holds:
// health and operations answer 503; the server's own endpoints still
// answer (which server runs, stop it). Fixing the file is enough.
func TestConfigBroken(t *testing.T) {
	home := t.TempDir()
	good := "memory:\n  search:\n    maxResults: 5\n"
	r := start(t, home, "127.0.0.1:0", good, func(o *RunOptions) {
		o.Open = reloadingOpen(home)
	})
	u := r.info.URL
	if code, body, _ := do(t, "POST", u+"/api/v1/status", `{}`); code != 200 {
		t.Fatalf("status: %d %s", code, body)
	}
	path := filepath.Join(home, "config.yaml")
	for _, bad := range []struct{ yaml, says string }{
		{"memory:\n  search:\n    maxResults: [oops\n", "config.yaml: yaml: line "},
		{"memory:\n  search:\n    maxResults: many\n", "memory.search.maxResults"},
	} {
		if err := os.WriteFile(path, []byte(bad.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, req := range []struct{ method, path, body string }{
			{"POST", "/api/v1/status", `{}`},
			{"POST", "/api/v1/recall", `{"query": "x"}`},
			{"POST", "/api/v1/remember", `{"text": "kumquat"}`},
			{"POST", "/api/v1/health", `{}`},
			{"GET", "/api/health", ``},
			{"GET", "/api/debug/memory/status", ``},
		} {
			code, body, _ := do(t, req.method, u+req.path, req.body)
			if code != 503 {
				t.Errorf("%s %s with %q: status %d, want 503: %.200s", req.method, req.path, bad.yaml, code, body)
				continue
			}
			if e := errorOf(t, body); e.Kind != "unavailable" || e.Field != "config" || !strings.Contains(e.Message, bad.says) {
				t.Errorf("%s %s: error %+v, want unavailable, field config, a message with %q", req.method, req.path, e, bad.says)
			}
		}
	}
	if code, body, _ := do(t, "GET", u+"/api/v1/server", ``); code != 200 {
		t.Errorf("server info: %d %s", code, body)
	}
	if pages := pagesIn(t, home); len(pages) != 0 {
		t.Errorf("a refused remember landed: %v", pages)
	}
	if err := os.WriteFile(path, []byte(good+"# fixed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body, _ := do(t, "POST", u+"/api/v1/status", `{}`); code != 200 {
		t.Fatalf("status once config.yaml is fixed: %d %s", code, body)
	}
}

// TestMCPLoneSurrogate: MCP over HTTP refuses a lone surrogate escape in a
// tool's arguments with JSON-RPC's invalid params, as memhost mcp on stdio
// does, rather than have the tool store U+FFFD; the session goes on.
func TestMCPLoneSurrogate(t *testing.T) {
	home := t.TempDir()
	r := start(t, home, "127.0.0.1:0", "", func(o *RunOptions) {
		o.MCP = func(h *host.Host, s *Server) http.Handler { return NewMCPHandler(h, s, mcp.Options{}) }
	})
	post := func(session, body string) (int, string, http.Header) {
		h := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2025-06-18"}
		if session != "" {
			h = append(h, "Mcp-Session-Id", session)
		}
		return do(t, "POST", r.info.URL+"/mcp", body, h...)
	}
	code, body, hdr := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := hdr.Get("Mcp-Session-Id")
	if code != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := func(id int, content string) string {
		_, body, _ := post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember","arguments":{"text":%s,"category":"reference","file":"k"}}}`, id, content))
		return body
	}
	body = call(2, `"kumquat \ud800 pie"`)
	if !strings.Contains(body, `"id":2`) || !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, `params.arguments.text holds \\ud800`) {
		t.Errorf("a lone surrogate: %s", body)
	}
	if pages := pagesIn(t, home); len(pages) != 0 {
		t.Errorf("the refused remember landed: %v", pages)
	}
	body = call(3, `"kumquat \ud83d\ude00 pie"`)
	if !strings.Contains(body, `"id":3,"result"`) {
		t.Fatalf("a surrogate pair: %s", body)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "notebook", "reference", "k.md")); !strings.Contains(string(b), "kumquat 😀 pie") {
		t.Errorf("reference/k.md: %q", b)
	}
}

// reloadingOpen opens the home as memhost serve does: config.yaml read,
// and read again when it changes.
func reloadingOpen(home string) func(context.Context) (*host.Host, error) {
	noEnv := func(string) string { return "" }
	return func(ctx context.Context) (*host.Host, error) {
		cfg, err := config.Load(filepath.Join(home, "config.yaml"), noEnv)
		if err != nil {
			return nil, err
		}
		return host.Open(ctx, host.Options{Home: home, Config: cfg, Getenv: noEnv})
	}
}
