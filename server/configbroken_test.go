package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/mcp"
)

// TestConfigBrokenEverywhere: while config.yaml cannot be used, the
// dashboard and MCP over HTTP refuse what the API refuses, with the same
// one-line error naming the file and the line, instead of acting with
// settings the file no longer holds: every dashboard page and call (saves,
// deletes and the provider switch, which would rewrite the broken file,
// included) answers 503, and every MCP tool call, resource read and prompt
// is an error. What lets a client see the error still answers: the
// dashboard's style sheet and script, MCP's handshake and lists. Nothing is
// written meanwhile; fixing the file is enough.
func TestConfigBrokenEverywhere(t *testing.T) {
	home := t.TempDir()
	good := "memory:\n  search:\n    maxResults: 5\n"
	r := start(t, home, "127.0.0.1:0", good, func(o *RunOptions) {
		o.Open = reloadingOpen(home)
		o.MCP = func(h *host.Host, s *Server) http.Handler { return NewMCPHandler(h, s, mcp.Options{}) }
	})
	u := r.info.URL
	keep := filepath.Join(home, "notebook", "lists", "keep.md")
	if err := os.WriteFile(keep, []byte("# Keep\n\nkumquat\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: u + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	path := filepath.Join(home, "config.yaml")
	bad := []byte("memory:\n  search:\n    maxResults: [oops\n")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	const says = "config.yaml: yaml: line "
	origin := []string{"Origin", u, "Content-Type", "application/json"}

	// The dashboard.
	for _, req := range []struct{ method, path, body string }{
		{"POST", "/ui/api/save", `{"path":"lists/new.md","text":"new\n","baseHash":""}`},
		{"POST", "/ui/api/delete", `{"path":"lists/keep.md"}`},
		{"POST", "/ui/api/use", `{"name":"memhost-embeddings-none"}`},
		{"POST", "/ui/api/preview", `{"text":"# x"}`},
		{"GET", "/ui/api/status", ``},
		{"GET", "/ui/api/page/lists/keep.md", ``},
	} {
		code, body, _ := do(t, req.method, u+req.path, req.body, origin...)
		if code != 503 {
			t.Errorf("%s %s with a broken config.yaml: status %d, want 503: %.200s", req.method, req.path, code, body)
			continue
		}
		if e := errorOf(t, body); e.Kind != "unavailable" || e.Field != "config" || !strings.Contains(e.Message, says) || strings.Contains(e.Message, "\n") {
			t.Errorf("%s %s: error %+v, want unavailable, field config, one line with %q", req.method, req.path, e, says)
		}
	}
	for _, p := range []string{"/", "/ui/notebook", "/ui/page/lists/keep.md", "/ui/search?q=kumquat", "/ui/settings"} {
		code, body, hdr := do(t, "GET", u+p, ``)
		if code != 503 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || !strings.Contains(body, says) {
			t.Errorf("GET %s with a broken config.yaml: %d %s, want 503 and a page saying %q: %.300s", p, code, hdr.Get("Content-Type"), says, body)
		}
		if strings.Contains(body, "kumquat") {
			t.Errorf("GET %s showed the notebook with a broken config.yaml", p)
		}
	}
	for _, p := range []string{"/ui/static/app.css", "/ui/static/app.js"} {
		if code, body, _ := do(t, "GET", u+p, ``); code != 200 {
			t.Errorf("GET %s (the error page's style and script): %d %.200s", p, code, body)
		}
	}

	// MCP over HTTP.
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Errorf("tools/list with a broken config.yaml: %v", err)
	}
	for _, call := range []struct {
		name string
		args map[string]any
	}{
		{"remember", map[string]any{"text": "durian", "category": "reference", "file": "fruit"}},
		{"notebook_write", map[string]any{"path": "lists/new.md", "text": "new\n"}},
		{"daily_log", map[string]any{"text": "durian"}},
		{"mv", map[string]any{"from": "lists/keep.md", "to": "lists/moved.md"}},
		{"memory_search", map[string]any{"query": "kumquat"}},
		{"memory_get", map[string]any{"path": "lists/keep.md"}},
	} {
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: call.name, Arguments: call.args})
		if err != nil {
			t.Errorf("tools/call %s: %v, want a tool error", call.name, err)
			continue
		}
		text := ""
		for _, c := range res.Content {
			if tc, ok := c.(*mcpsdk.TextContent); ok {
				text += tc.Text
			}
		}
		if !res.IsError || !strings.Contains(text, says) || strings.Contains(text, "\n") || strings.Contains(text, "kumquat") {
			t.Errorf("tools/call %s with a broken config.yaml: isError %v, %q; want a one-line tool error with %q", call.name, res.IsError, text, says)
		}
	}
	if res, err := cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: "memhost://notebook/lists/keep.md"}); err == nil || !strings.Contains(err.Error(), says) {
		t.Errorf("resources/read with a broken config.yaml: %v, %v; want an error with %q", res, err, says)
	}
	if res, err := cs.GetPrompt(ctx, &mcpsdk.GetPromptParams{Name: "pre-compaction-flush"}); err == nil || !strings.Contains(err.Error(), says) {
		t.Errorf("prompts/get with a broken config.yaml: %v, %v; want an error with %q", res, err, says)
	}

	if pages := pagesIn(t, home); strings.Join(pages, " ") != "lists/keep.md" {
		t.Errorf("refused writes landed: the notebook holds %v", pages)
	}
	if b, _ := os.ReadFile(path); string(b) != string(bad) {
		t.Errorf("config.yaml was rewritten while broken: %q", b)
	}

	// Fixed, everything answers again.
	if err := os.WriteFile(path, []byte(good+"# fixed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body, _ := do(t, "POST", u+"/ui/api/save", `{"path":"lists/new.md","text":"new\n","baseHash":""}`, origin...); code != 200 {
		t.Errorf("a dashboard save once config.yaml is fixed: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", u+"/ui/page/lists/keep.md", ``); code != 200 || !strings.Contains(body, "kumquat") {
		t.Errorf("a dashboard page once config.yaml is fixed: %d %.200s", code, body)
	}
	res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "remember", Arguments: map[string]any{"text": "durian", "category": "reference", "file": "fruit"}})
	if err != nil || res.IsError {
		t.Errorf("remember over MCP once config.yaml is fixed: %+v, %v", res, err)
	}
	if _, err := cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: "memhost://notebook/lists/keep.md"}); err != nil {
		t.Errorf("resources/read once config.yaml is fixed: %v", err)
	}
}
