package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/internal/benchdata"
	"github.com/memhost/memhost/internal/syncbuf"
)

// mcpStdio starts `memhost mcp` (the launcher, as a client config runs it)
// on home and returns a client session on its stdin and stdout; its
// stderr is returned too.
func mcpStdio(t testing.TB, home string, copts *mcpsdk.ClientOptions, args ...string) (*mcpsdk.ClientSession, *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--home", home, "mcp"}, args...)...)
	cmd.Env = os.Environ()
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, copts).
		Connect(context.Background(), &mcpsdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("memhost mcp: %v; stderr: %s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, &stderr
}

func mcpCall(t testing.TB, cs *mcpsdk.ClientSession, name string, args any, v any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		t.Fatalf("%s: tool error: %s", name, text.String())
	}
	if v != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %s: %v", name, b, err)
		}
	}
	return text.String()
}

func toolNames(t testing.TB, cs *mcpsdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestBinaryMCPStdio: `memhost mcp` as an MCP client starts it, with no
// server running: tools, a remember found by memory_search, a page read as
// a resource, --read-only; nothing but protocol on stdout (the client
// would fail on anything else).
func TestBinaryMCPStdio(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	cs, stderr := mcpStdio(t, home, nil)
	if got := toolNames(t, cs); len(got) != 19 {
		t.Fatalf("tools: %v", got)
	}
	var rem mh.RememberResponse
	mcpCall(t, cs, "remember", map[string]any{"text": "The wifi password is kumquat-42", "category": "reference", "file": "home"}, &rem)
	if rem.Path != "reference/home.md" {
		t.Fatalf("remember: %+v", rem)
	}
	var found mh.RecallResponse
	mcpCall(t, cs, "memory_search", map[string]any{"query": "wifi password"}, &found)
	if len(found.Results.Notebook) == 0 || found.Results.Notebook[0].Path != "reference/home.md" {
		t.Fatalf("memory_search: %+v", found)
	}
	rr, err := cs.ReadResource(context.Background(), &mcpsdk.ReadResourceParams{URI: "memhost://notebook/reference/home.md"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "kumquat-42") {
		t.Fatalf("resources/read: %+v %v", rr, err)
	}
	if s := stderr.String(); s != "" {
		t.Errorf("stderr: %s", s)
	}

	ro, _ := mcpStdio(t, home, nil, "--read-only")
	if got := toolNames(t, ro); !slices.Equal(got, []string{"context", "conversation_search", "facts", "health_history", "links", "memory_get", "memory_search", "memory_status", "skills"}) {
		t.Fatalf("read-only tools: %v", got)
	}
	// The page the first session wrote is there for the second.
	mcpCall(t, ro, "memory_search", map[string]any{"query": "kumquat"}, &found)
	if len(found.Results.Notebook) != 1 {
		t.Fatalf("read-only memory_search: %+v", found)
	}
}

// TestBinaryMCPServe: with `memhost serve` running, `memhost mcp` forwards
// its calls to it, and the server answers MCP over streamable HTTP at /mcp
// (loopback, no token), where a client subscribed to a page hears of an
// edit of it.
func TestBinaryMCPServe(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	if _, _, err := exe(home, "", nil, "init"); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := exe(home, "", nil, "serve", "--detach", "--listen", "127.0.0.1:0"); err != nil {
		t.Fatalf("serve --detach: %v %s %s", err, out, errOut)
	}
	in, err := serveInfo(t, home)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(in.PID, syscall.SIGKILL) })

	// stdio, forwarded: the server counts the calls.
	cs, _ := mcpStdio(t, home, nil)
	before, _ := serveInfo(t, home)
	mcpCall(t, cs, "remember", map[string]any{"text": "Grace's phone is 555-0199", "category": "reference", "file": "contacts", "section": "Grace"}, nil)
	after, _ := serveInfo(t, home)
	if after.Requests-before.Requests < 2 {
		t.Errorf("the server answered %d requests for remember over stdio", after.Requests-before.Requests)
	}

	// Streamable HTTP at /mcp.
	updated := make(chan string, 8)
	hc, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, &mcpsdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcpsdk.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	}).Connect(context.Background(), &mcpsdk.StreamableClientTransport{Endpoint: in.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect to %s/mcp: %v", in.URL, err)
	}
	defer hc.Close()
	if got := toolNames(t, hc); len(got) != 19 {
		t.Fatalf("tools over HTTP: %v", got)
	}
	var found mh.RecallResponse
	mcpCall(t, hc, "memory_search", map[string]any{"query": "Grace phone"}, &found)
	if len(found.Results.Notebook) == 0 || found.Results.Notebook[0].Path != "reference/contacts.md" {
		t.Fatalf("memory_search over HTTP: %+v", found)
	}
	uri := "memhost://notebook/reference/contacts.md"
	if err := hc.Subscribe(context.Background(), &mcpsdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	for i := 0; ; i++ { // until the subscription is recorded (see mcp's TestChangesFromEvents)
		// Edited on disk, as by a person: the server's watcher indexes it
		// and publishes a sync event.
		f, err := os.OpenFile(filepath.Join(home, "notebook", "reference", "contacts.md"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "- Heidi's phone is 555-01%02d\n", i)
		f.Close()
		select {
		case got := <-updated:
			if got != uri {
				t.Fatalf("updated %s", got)
			}
		case <-time.After(3 * time.Second): // the watcher waits 1.5 s for quiet
			continue
		case <-deadline:
			t.Fatal("no resources/updated over HTTP after an edit")
		}
		break
	}

	// The API's auth rules hold: a page of another origin is refused.
	req, _ := http.NewRequest("POST", in.URL+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Origin", "http://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /mcp from another origin: %s", resp.Status)
	}
}

// BenchmarkMCPStdio measures a memory_search tool call's round trip over
// stdio, client to `memhost mcp` and back, on synthetic notebooks:
// in-process (no server: each search stats every page first) and
// forwarded to a running `memhost serve`; keyword-only (no provider), and
// hybrid with the hello plugin at 384 dimensions (everything embedded
// first).
func BenchmarkMCPStdio(b *testing.B) {
	queries := benchdata.NewWords(1).Queries(50, 3)
	for _, c := range []struct {
		pages  int
		hybrid bool
	}{{1000, false}, {10000, false}, {10000, true}} {
		pages := c.pages
		dir, err := benchdata.Synthetic(pages)
		if err != nil {
			b.Skip(err)
		}
		home := b.TempDir()
		cfg := "memory:\n  notebookDir: " + dir + "\n"
		mode := "keyword"
		if c.hybrid {
			cfg += "  embedding:\n    plugin: hello\n    options: {hello: {dimensions: \"384\"}}\n"
			mode = "hybrid"
		}
		os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o644)
		if _, errOut, err := exe(home, "", nil, "sync"); err != nil {
			b.Fatal(err, errOut)
		}
		if c.hybrid {
			if _, errOut, err := exe(home, "", nil, "embed"); err != nil {
				b.Fatal(err, errOut)
			}
		}
		measure := func(b *testing.B) {
			cs, _ := mcpStdio(b, home, nil)
			ctx := context.Background()
			search := func(q string) {
				res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": q}})
				if err != nil || res.IsError {
					b.Fatalf("memory_search %q: %v %+v", q, err, res)
				}
				if text := res.Content[0].(*mcpsdk.TextContent).Text; !strings.Contains(text, "("+mode+" search") {
					b.Fatalf("memory_search %q answered %q, want %s search", q, text[:min(len(text), 200)], mode)
				}
			}
			search(queries[0]) // warm: the first call opens the home
			b.ResetTimer()
			for range b.N {
				var ds []time.Duration
				for range 2 {
					for _, q := range queries {
						t0 := time.Now()
						search(q)
						ds = append(ds, time.Since(t0))
					}
				}
				report(b, ds)
			}
		}
		b.Run(fmt.Sprintf("in-process/%s/pages=%d", mode, pages), measure)
		srv := exec.Command(binary, "--home", home, "serve", "--listen", "")
		if err := srv.Start(); err != nil {
			b.Fatal(err)
		}
		for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if in, err := serveInfo(b, home); err == nil && in.Watcher {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("the server did not answer")
			}
		}
		b.Run(fmt.Sprintf("via-serve/%s/pages=%d", mode, pages), measure)
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
	}
}

// TestMCPStdioBadLine: a line that is not JSON gets JSON-RPC's parse
// error and the session goes on (the SDK's transport ended it, losing the
// answers already due).
func TestMCPStdioBadLine(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`this is not json`,
		`123`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	}, "\n") + "\n"
	pr, pw := io.Pipe()
	cmd := exec.Command(filepath.Join(filepath.Dir(binary), "memhost-core"), "--home", t.TempDir(), "mcp")
	cmd.Stdin = pr
	var out, errb syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(pw, in)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), `"id":1,`) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	pw.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("memhost mcp: %v, stderr %q", err, errb.String())
	}
	got := out.String()
	for _, want := range []string{`"code":-32700`, `"id":0,"result"`, `"id":1,"result"`} {
		if !strings.Contains(got, want) {
			t.Errorf("stdout lacks %s:\n%s", want, got)
		}
	}
}
