package mcp_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/mcp"
)

// openHome opens a Host on a new home holding a few pages.
func openHome(t *testing.T) *host.Host {
	t.Helper()
	home := t.TempDir()
	h, err := host.Open(context.Background(), host.Options{Home: home, Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	pages := map[string]string{
		"reference/contacts.md":    "# Contacts\n\n## Alice\n- phone: +44 20 7946 0000\n- likes oolong tea\n",
		"reference/preferences.md": "# Preferences\n\n- window seat on trains\n",
		"lists/shopping.md":        "# Shopping\n\n- kangaroo jerky\n",
	}
	for rel, text := range pages {
		p := filepath.Join(h.NotebookDir(), rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// hostChanges is an Options.Changes of h's writes, as memhost mcp gives
// without a server: its change bus through a Relay.
func hostChanges(t *testing.T, h *host.Host) func(context.Context, func(mcp.Change)) error {
	r := new(mcp.Relay)
	t.Cleanup(h.Subscribe(r.Publish))
	return r.Changes
}

// connect serves srv over the in-memory transport and returns a client
// session on it.
func connect(t *testing.T, srv *mcpsdk.Server, copts *mcpsdk.ClientOptions) *mcpsdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcpsdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, copts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and fails the test on a protocol error.
func call(t *testing.T, cs *mcpsdk.ClientSession, name string, args any) *mcpsdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// structured decodes a successful result's structured content into v.
func structured(t *testing.T, res *mcpsdk.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

func text(res *mcpsdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

var (
	readTools  = []string{"context", "conversation_search", "facts", "health_history", "links", "memory_get", "memory_search", "memory_status", "skills"}
	writeTools = []string{"daily_log", "episodes", "fact_add", "mv", "notebook_write", "prune", "remember", "rollup", "skill_learn", "skill_review"}
	// destructive are the write tools that change or move what exists
	// (the others only add; skill_learn adds pages and keeps their counts).
	destructive = []string{"mv", "notebook_write", "prune", "rollup", "skill_review"}
)

// TestListTools: every tool has a description, annotations and an input
// schema, and no output schema (TestToolsListBudget says why); a read-only
// server serves exactly the tools whose readOnlyHint is true.
func TestListTools(t *testing.T) {
	tools := func(readOnly bool) map[string]*mcpsdk.Tool {
		cs := connect(t, mcp.New(openHome(t), mcp.Options{ReadOnly: readOnly}), nil)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]*mcpsdk.Tool{}
		for _, tool := range res.Tools {
			m[tool.Name] = tool
		}
		return m
	}
	all, ro := tools(false), tools(true)
	if got, want := slices.Sorted(maps.Keys(all)), slices.Sorted(slices.Values(append(slices.Clone(readTools), writeTools...))); !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	for name, tool := range all {
		a := tool.Annotations
		if a == nil || tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema != nil {
			t.Fatalf("%s: want annotations, a description, an input schema and no output schema: %+v", name, tool)
		}
		if want := slices.Contains(readTools, name); a.ReadOnlyHint != want {
			t.Errorf("%s: readOnlyHint = %v, want %v", name, a.ReadOnlyHint, want)
		}
		if !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint != slices.Contains(destructive, name)) {
			t.Errorf("%s: destructiveHint = %v", name, a.DestructiveHint)
		}
		if a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: openWorldHint = %v, want false", name, a.OpenWorldHint)
		}
		if _, served := ro[name]; served != a.ReadOnlyHint {
			t.Errorf("%s: served read-only %v, readOnlyHint %v", name, served, a.ReadOnlyHint)
		}
	}
	if len(ro) != len(readTools) {
		t.Errorf("read-only: %d tools, want %d", len(ro), len(readTools))
	}
}

func TestCallEachTool(t *testing.T) {
	h := openHome(t)
	cs := connect(t, mcp.New(h, mcp.Options{}), nil)

	var rem memhost.RememberResponse
	structured(t, call(t, cs, "remember", map[string]any{"text": "Bob's birthday is on 3 March", "category": "reference", "file": "contacts", "section": "Bob"}), &rem)
	if rem.Path != "reference/contacts.md" || rem.Duplicate || rem.Lines.Start == 0 {
		t.Fatalf("remember: %+v", rem)
	}
	res := call(t, cs, "remember", map[string]any{"text": "Bob's birthday is on 3 March", "category": "reference", "file": "contacts", "section": "Bob"})
	structured(t, res, &rem)
	if !rem.Duplicate || text(res) != "Already remembered: reference/contacts.md § Bob (line 8); nothing written." {
		t.Fatalf("remember again: %+v %q", rem, text(res))
	}
	// A text with no section of its own: the message still names the one it went to.
	res = call(t, cs, "remember", map[string]any{"text": "The spare key is under the mat", "category": "reference", "file": "contacts"})
	if got := text(res); got != "Remembered in reference/contacts.md § Notes (new section, line 11)." {
		t.Fatalf("remember without a section: %q", got)
	}

	var search memhost.RecallResponse
	res = call(t, cs, "memory_search", map[string]any{"query": "Bob birthday"})
	structured(t, res, &search)
	if len(search.Results.Notebook) == 0 || search.Results.Notebook[0].Path != "reference/contacts.md" || search.Mode == "" {
		t.Fatalf("memory_search: %+v", search)
	}
	if !strings.Contains(text(res), "reference/contacts.md") {
		t.Fatalf("memory_search text: %q", text(res))
	}
	structured(t, call(t, cs, "memory_search", map[string]any{"query": "kangaroo", "sources": []string{"notebook"}, "maxResults": 1, "minScore": 0}), &search)
	if len(search.Results.Notebook) != 1 || len(search.Results.Daily) != 0 {
		t.Fatalf("memory_search with sources: %+v", search.Results)
	}

	var get memhost.GetResponse
	structured(t, call(t, cs, "memory_get", map[string]any{"path": "reference/contacts.md", "startLine": 3, "lines": 2}), &get)
	if get.Text != "## Alice\n- phone: +44 20 7946 0000\n" || get.Lines != (memhost.Lines{Start: 3, End: 4}) {
		t.Fatalf("memory_get: %+v", get)
	}

	var wr memhost.WriteResponse
	structured(t, call(t, cs, "notebook_write", map[string]any{"path": "knowledge/projects", "text": "memhost speaks MCP", "section": "memhost"}), &wr)
	if wr.Path != "knowledge/projects.md" || !wr.Created {
		t.Fatalf("notebook_write: %+v", wr)
	}
	structured(t, call(t, cs, "notebook_write", map[string]any{"path": "knowledge/projects.md", "text": "replaced", "replace": true}), &wr)
	if b, _ := os.ReadFile(filepath.Join(h.NotebookDir(), "knowledge/projects.md")); string(b) != "replaced\n" {
		t.Fatalf("after replace: %q", b)
	}

	var dl memhost.DailyLogResponse
	structured(t, call(t, cs, "daily_log", map[string]any{"text": "Shipped the MCP server\nwith tests"}), &dl)
	if !strings.HasPrefix(dl.Path, "daily/") || !strings.Contains(dl.Heading, "Shipped the MCP server") {
		t.Fatalf("daily_log: %+v", dl)
	}

	if _, err := h.SessionAppend(context.Background(), memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "please book the platypus tour"}); err != nil {
		t.Fatal(err)
	}
	var conv memhost.ConversationSearchResponse
	structured(t, call(t, cs, "conversation_search", map[string]any{"query": "platypus", "session": "s1"}), &conv)
	if len(conv.Results) != 1 || conv.Results[0].Session != "s1" {
		t.Fatalf("conversation_search: %+v", conv)
	}

	var block memhost.ContextResponse
	res = call(t, cs, "context", map[string]any{})
	structured(t, res, &block)
	if !strings.Contains(block.Text, "oolong") || text(res) != block.Text {
		t.Fatalf("context: %+v", block)
	}

	var mem memhost.ContextResponse
	res = call(t, cs, "context", map[string]any{"query": "platypus tour", "tiers": []string{"episodes"}, "budget": 200})
	structured(t, res, &mem)
	if len(mem.Items) != 1 || mem.Items[0].Session != "s1" || mem.Tokens > 200 || text(res) != mem.Text {
		t.Fatalf("context for a query: %+v", mem)
	}

	var st memhost.StatusResponse
	res = call(t, cs, "memory_status", nil)
	structured(t, res, &st)
	if st.Files < 4 || !strings.Contains(text(res), "pages") {
		t.Fatalf("memory_status: %+v %q", st, text(res))
	}
}

func TestBadInput(t *testing.T) {
	cs := connect(t, mcp.New(openHome(t), mcp.Options{}), nil)
	big := strings.Repeat("x", 10<<20)
	tests := []struct {
		name string
		tool string
		args any
		want []string // in the error's text
	}{
		{"wrong type", "memory_search", map[string]any{"query": 5}, []string{"query"}},
		{"wrong type of list", "memory_search", map[string]any{"query": "x", "sources": "notebook"}, []string{"sources"}},
		{"unknown source", "memory_search", map[string]any{"query": "x", "sources": []string{"web"}}, []string{"sources"}},
		{"missing argument", "memory_search", map[string]any{}, []string{"query"}},
		{"empty query", "memory_search", map[string]any{"query": " "}, []string{"query", "empty"}},
		{"min score out of range", "memory_search", map[string]any{"query": "x", "minScore": 2}, []string{"minScore"}},
		{"unknown argument", "memory_get", map[string]any{"path": "a.md", "pathh": "b"}, []string{"pathh"}},
		{"dot-dot path", "memory_get", map[string]any{"path": "../config.yaml"}, []string{"outside", "inside the notebook"}},
		{"absolute path", "notebook_write", map[string]any{"path": "/etc/passwd", "text": "x"}, []string{"outside"}},
		{"dot-dot write", "notebook_write", map[string]any{"path": "lists/../../x.md", "text": "x"}, []string{"outside"}},
		{"missing page", "memory_get", map[string]any{"path": "reference/x.md"}, []string{"reference/x.md", "pages in reference/: contacts.md, preferences.md"}},
		{"missing folder", "memory_get", map[string]any{"path": "nowhere/x"}, []string{"nowhere/x.md", "lists/", "reference/"}},
		{"past the end", "memory_get", map[string]any{"path": "lists/shopping.md", "startLine": 90}, []string{"startLine", "past the end"}},
		{"10 MB text", "remember", map[string]any{"text": big}, []string{"text", "1 MB"}},
		{"10 MB write", "notebook_write", map[string]any{"path": "a.md", "text": big}, []string{"text", "1 MB"}},
		{"10 MB entry", "daily_log", map[string]any{"text": big}, []string{"text", "1 MB"}},
		{"empty text", "remember", map[string]any{"text": ""}, []string{"text"}},
		{"a request id", "remember", map[string]any{"text": "x", "requestId": "r1"}, []string{"requestId"}},
		{"a hidden field", "context", map[string]any{"notSession": "s1"}, []string{"notSession"}},
		{"unknown category", "remember", map[string]any{"text": "x", "category": "misc"}, []string{"category"}},
		{"file as a path", "remember", map[string]any{"text": "x", "file": "../x"}, []string{"file"}},
		{"unknown session", "conversation_search", map[string]any{"query": "x", "session": "nope"}, []string{"session", "nope"}},
		{"bad date", "conversation_search", map[string]any{"query": "x", "since": "yesterday"}, []string{"since"}},
		{"unknown tier", "context", map[string]any{"query": "x", "tiers": []string{"dreams"}}, []string{"tiers"}},
		{"bad half-life", "context", map[string]any{"query": "x", "halfLife": "soon"}, []string{"half-life", "soon"}},
	}
	for _, tt := range tests {
		res := call(t, cs, tt.tool, tt.args)
		if !res.IsError {
			t.Errorf("%s: no tool error: %s", tt.name, text(res))
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(text(res), w) {
				t.Errorf("%s: error %q does not say %q", tt.name, text(res), w)
			}
		}
	}
	// An unknown tool is the one protocol error: there is no tool to
	// report it.
	_, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "forget_everything", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "forget_everything") {
		t.Fatalf("unknown tool: %v", err)
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	cs := connect(t, mcp.New(openHome(t), mcp.Options{ReadOnly: true}), nil)
	_, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "remember", Arguments: map[string]any{"text": "x"}})
	if err == nil {
		t.Fatal("remember served in read-only mode")
	}
}

func TestResources(t *testing.T) {
	h := openHome(t)
	updated := make(chan string, 16)
	listChanged := make(chan struct{}, 16)
	cs := connect(t, mcp.New(h, mcp.Options{Changes: hostChanges(t, h), Context: t.Context()}), &mcpsdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcpsdk.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
		ResourceListChangedHandler: func(context.Context, *mcpsdk.ResourceListChangedRequest) { listChanged <- struct{}{} },
	})
	ctx := context.Background()
	list := func() []string {
		t.Helper()
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range res.Resources {
			if r.MIMEType != "text/markdown" {
				t.Fatalf("%s: mime type %q", r.URI, r.MIMEType)
			}
			uris = append(uris, r.URI)
		}
		slices.Sort(uris)
		return uris
	}
	want := []string{"memhost://notebook/lists/shopping.md", "memhost://notebook/reference/contacts.md", "memhost://notebook/reference/preferences.md"}
	if got := list(); !slices.Equal(got, want) {
		t.Fatalf("resources %v, want %v", got, want)
	}
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "memhost://notebook/{+path}" {
		t.Fatalf("templates: %+v %v", tmpl, err)
	}

	rr, err := cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: "memhost://notebook/reference/contacts.md"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "oolong") || rr.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("read: %+v %v", rr, err)
	}
	for _, uri := range []string{"memhost://notebook/reference/nope.md", "memhost://notebook/../config.yaml", "memhost://notebook/%2e%2e/config.yaml", "file:///etc/passwd"} {
		if _, err := cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("read %s: no error", uri)
		}
	}

	// A subscriber hears of a write to its page; every client of a new
	// page.
	if err := cs.Subscribe(ctx, &mcpsdk.SubscribeParams{URI: "memhost://notebook/reference/contacts.md"}); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "remember", map[string]any{"text": "Carol's email is carol@example.com", "category": "reference", "file": "contacts"})
	select {
	case uri := <-updated:
		if uri != "memhost://notebook/reference/contacts.md" {
			t.Fatalf("updated %s", uri)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no resources/updated after remember")
	}
	call(t, cs, "notebook_write", map[string]any{"path": "knowledge/new page.md", "text": "fresh"})
	select {
	case <-listChanged:
	case <-time.After(5 * time.Second):
		t.Fatal("no resources/list_changed after a new page")
	}
	if got := list(); !slices.Contains(got, "memhost://notebook/knowledge/new%20page.md") {
		t.Fatalf("new page not listed: %v", got)
	}
	rr, err = cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: "memhost://notebook/knowledge/new%20page.md"})
	if err != nil || rr.Contents[0].Text != "fresh\n" {
		t.Fatalf("read new page: %+v %v", rr, err)
	}
}

func TestChangesFromEvents(t *testing.T) {
	h := openHome(t)
	feed := make(chan mcp.Change)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := mcp.New(h, mcp.Options{Context: ctx, Changes: func(ctx context.Context, fn func(mcp.Change)) error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case c := <-feed:
				fn(c)
			}
		}
	}})
	updated := make(chan string, 4)
	cs := connect(t, srv, &mcpsdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcpsdk.ResourceUpdatedNotificationRequest) {
		updated <- r.Params.URI
	}})
	if err := cs.Subscribe(ctx, &mcpsdk.SubscribeParams{URI: "memhost://notebook/lists/shopping.md"}); err != nil {
		t.Fatal(err)
	}
	// The SDK's client may return from Subscribe a moment before the
	// server records the subscription: the change is sent until heard.
	deadline := time.After(5 * time.Second)
	for {
		feed <- mcp.Change{Path: "lists/shopping.md"}
		select {
		case uri := <-updated:
			if uri != "memhost://notebook/lists/shopping.md" {
				t.Fatalf("updated %s", uri)
			}
			return
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("no resources/updated for a change from the feed")
		}
	}
}

func TestPrompts(t *testing.T) {
	h := openHome(t)
	cs := connect(t, mcp.New(h, mcp.Options{FlushPrompt: func() string { return "Flush now." }}), nil)
	ctx := context.Background()
	res, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(res.Prompts) != 2 {
		t.Fatalf("prompts: %+v %v", res, err)
	}
	get := func(name string) string {
		t.Helper()
		p, err := cs.GetPrompt(ctx, &mcpsdk.GetPromptParams{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return p.Messages[0].Content.(*mcpsdk.TextContent).Text
	}
	if got := get("pre-compaction-flush"); got != "Flush now.\n\nNothing has been stored through memhost in this session yet." {
		t.Fatalf("flush before writes: %q", got)
	}
	call(t, cs, "remember", map[string]any{"text": "Dana prefers mornings", "category": "reference", "file": "preferences"})
	call(t, cs, "daily_log", map[string]any{"text": "Met Dana"})
	got := get("pre-compaction-flush")
	for _, w := range []string{"Flush now.", "remember → reference/preferences.md", "Dana prefers mornings", "daily_log → daily/", "Met Dana"} {
		if !strings.Contains(got, w) {
			t.Errorf("flush prompt %q does not say %q", got, w)
		}
	}
	if got := get("session-start"); !strings.Contains(got, "Dana prefers mornings") || !strings.Contains(got, "# Memory") {
		t.Fatalf("session-start: %q", got)
	}
	if _, err := cs.GetPrompt(ctx, &mcpsdk.GetPromptParams{Name: "nope"}); err == nil {
		t.Fatal("unknown prompt: no error")
	}
}

// TestEpisodesTool: the tool writes the day's episode log, which then is
// a resource of every client; a second call writes nothing.
func TestEpisodesTool(t *testing.T) {
	ctx := context.Background()
	cfg := config.Default()
	cfg.Timezone = "UTC"
	now := time.Date(2026, 2, 13, 10, 32, 0, 0, time.UTC)
	h, err := host.Open(ctx, host.Options{Home: t.TempDir(), Config: cfg, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "wa-ada", Role: "user", Text: "Can you check the BVS status?", Channel: "whatsapp", SourceID: "919876543210"}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, mcp.New(h, mcp.Options{}), nil)
	var r memhost.EpisodesResponse
	for _, want := range []string{"written", "unchanged"} {
		structured(t, call(t, cs, "episodes", map[string]any{"date": "2026-02-13"}), &r)
		if len(r.Days) != 1 || r.Days[0].State != want || r.Days[0].Path != "episodes/2026-02-13.md" || r.Days[0].Messages != 1 {
			t.Fatalf("episodes: %+v, want %s", r, want)
		}
	}
	rr, err := cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: "memhost://notebook/episodes/2026-02-13.md"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "## Session: whatsapp/919876543210 (10:32 - 10:32)") {
		t.Fatalf("read: %+v %v", rr, err)
	}
}
