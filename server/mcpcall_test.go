package server

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/mcp"
)

// A tools/call sent again over HTTP with the same JSON-RPC id in the same
// session (the client lost the answer) writes once and answers as the
// first time; another id writes again.
func TestMCPResentCallWritesOnce(t *testing.T) {
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
	call := func(id int) string {
		code, body, _ := post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"notebook_write","arguments":{"path":"knowledge/w.md","text":"- resent line"}}}`, id))
		if code != 200 || !strings.Contains(body, `"result"`) {
			t.Fatalf("call %d: %d %s", id, code, body)
		}
		return body
	}
	if first, again := call(2), call(2); first != again {
		t.Fatalf("the resent call answered %s, the first %s", again, first)
	}
	call(3)
	b, _ := os.ReadFile(filepath.Join(home, "notebook", "knowledge", "w.md"))
	if n := strings.Count(string(b), "resent line"); n != 2 {
		t.Fatalf("knowledge/w.md holds the line %d times, want 2 (ids 2 and 3):\n%s", n, b)
	}
}
