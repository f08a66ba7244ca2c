package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/internal/secretsample"
	"github.com/memhost/memhost/knowledge"
	"github.com/memhost/memhost/mcp"
	"github.com/memhost/memhost/server/client"
)

// TestNoSecretReachesTheHomeThroughAnyTransport: under the default policy,
// every write that takes text — remember, write, daily-log, session
// append, session ingest, fact add, the dashboard editor's save — sent
// over each transport of a real server (the client over the unix socket
// and over TCP, MCP over streamable HTTP, the dashboard's own call) says
// it redacted and leaves no byte of a secret in any file of the home: the
// notebook, the transcripts, the index, the journals. No answer carries
// one back either.
func TestNoSecretReachesTheHomeThroughAnyTransport(t *testing.T) {
	home := t.TempDir()
	r := start(t, home, "127.0.0.1:0", "", func(o *RunOptions) {
		o.MCP = func(h *host.Host, s *Server) http.Handler { return NewMCPHandler(h, s, mcp.Options{}) }
	})
	ctx := context.Background()
	aws, gh, slack, urlPwd := secretsample.AWS, secretsample.GitHub, secretsample.Slack, secretsample.URLPassword
	var answers []string
	answered := func(what string, v any, redacted []memhost.Redaction, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(redacted) == 0 {
			t.Errorf("%s answered no redaction: %+v", what, v)
		}
		b, _ := json.Marshal(v)
		answers = append(answers, what+": "+string(b))
	}

	socket := r.client(t)
	tcp := client.NewClient(r.info.URL, &http.Client{})
	for _, c := range []struct {
		name string
		a    api.API
	}{{"socket", socket}, {"tcp", tcp}} {
		n := c.name
		rm, err := c.a.Remember(ctx, memhost.RememberRequest{Text: "the CI key is " + aws, Category: "reference", File: "ci-" + n})
		answered(n+" remember", rm, rm.Redacted, err)
		w, err := c.a.Write(ctx, memhost.WriteRequest{Path: "knowledge/db-" + n + ".md", Text: "---\ntoken: " + gh + "\n---\n# DB\n\npostgres://app:" + urlPwd + "@db.internal/prod\n"})
		answered(n+" write", w, w.Redacted, err)
		d, err := c.a.DailyLog(ctx, memhost.DailyLogRequest{Text: "new bot token " + slack + " over " + n})
		answered(n+" daily-log", d, d.Redacted, err)
		s, err := c.a.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s-" + n, Role: "user", Text: "my key is " + aws})
		answered(n+" session append", s, s.Redacted, err)
		f, err := c.a.FactAdd(ctx, knowledge.FactAddRequest{Entity: "ci", Attribute: "deploy key " + n, Value: gh})
		answered(n+" fact add", f, f.Redacted, err)
		sv, err := c.a.SavePage(ctx, memhost.SavePageRequest{Path: "lists/env-" + n + ".md", Text: "# Env\n\n- SLACK=" + slack})
		answered(n+" page/save", sv, sv.Redacted, err)
	}
	// Ingest names a file of the server's machine: the socket only.
	src := filepath.Join(t.TempDir(), "chat.jsonl")
	os.WriteFile(src, []byte(`{"id":"1","role":"user","content":"use `+gh+`"}`+"\n"+`{"id":"2","role":"tool","content":"env","metadata":{"out":"AWS=`+aws+`"}}`+"\n"), 0o600)
	in, err := socket.Ingest(ctx, memhost.IngestRequest{Paths: []string{src}, Format: "memhost"})
	if err == nil && len(in.Files) != 1 {
		err = fmt.Errorf("ingested %d files", len(in.Files))
	}
	var inRed []memhost.Redaction
	if err == nil {
		inRed = in.Files[0].Redacted
	}
	answered("socket ingest", in, inRed, err)

	// MCP's write tools.
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: r.info.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, call := range []struct {
		name string
		args map[string]any
	}{
		{"remember", map[string]any{"text": "the MCP key is " + aws, "category": "reference", "file": "ci-mcp"}},
		{"notebook_write", map[string]any{"path": "knowledge/db-mcp.md", "text": "redis://:" + urlPwd + "@cache.internal:6379"}},
		{"daily_log", map[string]any{"text": "the MCP bot token " + slack}},
		{"fact_add", map[string]any{"entity": "ci", "attribute": "mcp key", "value": gh}},
	} {
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: call.name, Arguments: call.args})
		if err != nil || res.IsError {
			t.Fatalf("MCP %s: %+v %v", call.name, res, err)
		}
		b, _ := json.Marshal(res)
		if !strings.Contains(string(b), "redacted") {
			t.Errorf("MCP %s answered no redaction: %s", call.name, b)
		}
		answers = append(answers, "mcp "+call.name+": "+string(b))
	}

	// The dashboard editor's save, as its page sends it.
	code, body, _ := do(t, "POST", r.info.URL+"/ui/api/save", `{"path":"lists/env-ui.md","text":"# Env\n\nGITHUB=`+gh+`\n","baseHash":""}`,
		"Origin", r.info.URL, "Content-Type", "application/json")
	if code != 200 || !strings.Contains(body, "redacted") {
		t.Errorf("the dashboard's save: %d %s", code, body)
	}
	answers = append(answers, "dashboard save: "+body)

	for _, a := range answers {
		for _, secret := range secretsample.All {
			if strings.Contains(a, secret) {
				t.Errorf("an answer carries %.8s…: %.300s", secret, a)
			}
		}
	}
	// Stopped first, so that nothing is held in memory only (the index's
	// WAL checkpointed, the journals closed); the cleanup waits again.
	r.stop()
	stopped := <-r.done
	r.done <- stopped
	for _, secret := range secretsample.All {
		if files := secretsample.Holding(home, secret); len(files) > 0 {
			t.Errorf("%.8s… is in %v", secret, files)
		}
	}
	// Each transport's writes landed, with the secrets' markers.
	for _, rel := range []string{"knowledge/db-socket.md", "knowledge/db-tcp.md", "knowledge/db-mcp.md", "lists/env-ui.md", "reference/ci-mcp.md"} {
		b, err := os.ReadFile(filepath.Join(home, "notebook", rel))
		if err != nil || !bytes.Contains(b, []byte("[secret redacted: ")) {
			t.Errorf("%s: %q %v", rel, b, err)
		}
	}
}
