package host

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/generate"
	"github.com/memhost/memhost/internal/fakellm"
	"github.com/memhost/memhost/internal/fakeopenai"
	"github.com/memhost/memhost/internal/testbin"
	"github.com/memhost/memhost/registry"
)

// generatorBinary is generator plugin name (openai, ollama), built once
// (internal/testbin): copy it, never change it.
func generatorBinary(t testing.TB, name string) string {
	t.Helper()
	return testbin.Path(t, "../plugins/generator-"+name, "")
}

const genKey = "sk-host-test-key-4242"

// generatorHost opens a home whose plugins/ folder holds the real
// memhost-generator-openai, configured for srv; the key reaches the
// plugin through the environment only.
func generatorHost(t *testing.T, srv *fakeopenai.Server, edit func(*config.Config)) *Host {
	t.Helper()
	t.Setenv("MEMHOST_TEST_GEN_KEY", genKey)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	b, err := os.ReadFile(generatorBinary(t, "openai"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "plugins", registry.GeneratorPrefix+"openai"), b, 0o755)
	return openHost(t, home, func(c *config.Config) {
		c.Memory.Generator.Plugin = "openai"
		c.Memory.Generator.Options["openai"] = map[string]string{"url": srv.Base(), "model": "deepseek-chat",
			"apiKeyEnv": "MEMHOST_TEST_GEN_KEY", "retries": "1"}
		if edit != nil {
			edit(c)
		}
	})
}

func TestWithoutGenerator(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	resp, err := h.Remember(ctx, memhost.RememberRequest{Text: "Sarah Chen - Phone: 555-1234", Auto: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Path != "reference/contacts.md" || resp.Routing != RoutedByRules || len(resp.Warnings) != 1 ||
		resp.Warnings[0] != "no generator configured: set memory.generator.plugin (ollama or openai); routed by the rules instead" {
		t.Errorf("remember --auto without a generator: %+v", resp)
	}
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "x", Auto: true, Category: "lists"}); fault.KindOf(err) != fault.BadInput {
		t.Errorf("auto with a category: %v", err)
	}
	h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: strings.Repeat("words and more words ", 3000)})
	h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "recent"})
	_, err = h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "s1", Summarize: true})
	if !errors.Is(err, generate.ErrNoGenerator) || fault.KindOf(err) != fault.Unavailable {
		t.Errorf("compact --summarize without a generator: %v", err)
	}
	if tok, _ := h.SessionTokens(ctx, memhost.SessionTokensRequest{Session: "s1"}); tok.Compactions != 0 {
		t.Errorf("a compaction was written: %+v", tok)
	}
	st, err := h.PluginStatus(ctx, memhost.PluginStatusRequest{})
	if err != nil || st.Generator.State != "none" || !strings.Contains(st.Generator.Message, "memory.generator.plugin") {
		t.Errorf("PluginStatus.Generator = %+v, %v", st.Generator, err)
	}
	// A configured plugin that is not installed says so.
	h = openHost(t, t.TempDir(), func(c *config.Config) { c.Memory.Generator.Plugin = "deepseek" })
	resp, _ = h.Remember(ctx, memhost.RememberRequest{Text: "buy milk", Auto: true})
	if resp.Path != "lists/shopping.md" || !strings.Contains(resp.Warnings[0], `unknown generator plugin "deepseek"`) {
		t.Errorf("uninstalled generator: %+v", resp)
	}
}

func TestRememberAuto(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(genKey, "deepseek-chat")
	defer srv.Close()
	h := generatorHost(t, srv, nil)
	writePage(t, h, "reference/people.md", "---\ntags: [people]\n---\n# People\n\n## Sarah Chen\n- Works at TechFlow\n")
	srv.SetAnswer(func(req fakellm.Request) string {
		return `{"category": "reference", "page": "people", "section": "Sarah Chen", "tags": ["people", "Work"]}`
	})
	resp, err := h.Remember(ctx, memhost.RememberRequest{Text: "Sarah moved to Acme Corp in March", Auto: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Path != "reference/people.md" || resp.Section != "Sarah Chen" || resp.Routing != RoutedByGenerator ||
		strings.Join(resp.Tags, ",") != "people,work" || len(resp.Warnings) != 0 {
		t.Errorf("Remember = %+v", resp)
	}
	want := "---\ntags: [people, work]\n---\n# People\n\n## Sarah Chen\n- Works at TechFlow\n- Sarah moved to Acme Corp in March\n"
	if got := readPage(t, h, "reference/people.md"); got != want {
		t.Errorf("page:\n%s\nwant:\n%s", got, want)
	}
	if lines := strings.Split(want, "\n"); resp.Lines.Start != 8 || lines[resp.Lines.Start-1] != "- Sarah moved to Acme Corp in March" {
		t.Errorf("lines %+v", resp.Lines)
	}
	// The librarian was shown the notebook's pages, sections and tags, and
	// asked for JSON following the schema.
	req := srv.Requests()[0]
	user := req.Messages[1].Content
	if !strings.Contains(user, "- reference/people (sections: Sarah Chen) [tags: people]") || !strings.Contains(user, "Existing tags: people") ||
		!strings.Contains(user, "Sarah moved to Acme Corp in March") || len(req.Schema) == 0 {
		t.Errorf("prompt:\n%s\nschema %s", user, req.Schema)
	}
	if got, _ := h.Recall(ctx, memhost.RecallRequest{Query: "Acme"}); len(got.Results.Notebook) == 0 {
		t.Error("the remembered text is not searchable")
	}
}

func TestRememberAutoFallsBack(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(genKey, "deepseek-chat")
	defer srv.Close()
	h := generatorHost(t, srv, nil)
	tests := []struct {
		name    string
		replies []fakellm.Reply
		warn    string
	}{
		{"prose", []fakellm.Reply{{Content: "I would put it on the contacts page."}}, "a JSON answer was asked for"},
		{"off schema", []fakellm.Reply{{Content: `{"category": "diary", "page": "x", "section": "", "tags": []}`}}, "does not follow the schema"},
		{"bad page", []fakellm.Reply{{Content: `{"category": "reference", "page": "Contacts Page!", "section": "", "tags": []}`}}, "does not follow the schema"},
		{"heading in section", []fakellm.Reply{{Content: `{"category": "reference", "page": "contacts", "section": "a\n## b", "tags": []}`}}, "the generator chose the section"},
		{"server down", []fakellm.Reply{{Status: 500, RetryAfter: "0.05"}, {Status: 500, RetryAfter: "0.05"}}, "failed (500) after 1 retries"},
		{"malformed", []fakellm.Reply{{Raw: `{"choices":[{"message":`}}, "malformed JSON"},
	}
	for i, tt := range tests {
		srv.Push(tt.replies...)
		text := "Bob " + strings.Repeat("x", i) + " - Phone: 555-000" + string(rune('0'+i))
		resp, err := h.Remember(ctx, memhost.RememberRequest{Text: text, Auto: true})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if resp.Path != "reference/contacts.md" || resp.Routing != RoutedByRules || len(resp.Warnings) != 1 ||
			!strings.Contains(resp.Warnings[0], tt.warn) || !strings.HasSuffix(resp.Warnings[0], "; routed by the rules instead") {
			t.Errorf("%s: %+v", tt.name, resp)
		}
		if strings.Contains(strings.Join(resp.Warnings, " "), genKey) {
			t.Errorf("%s: the key leaked into a warning", tt.name)
		}
	}
	if n := srv.Pending(); n != 0 {
		t.Errorf("%d scripted replies unused", n)
	}
}

func TestCompactSummarize(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(genKey, "deepseek-chat")
	defer srv.Close()
	h := generatorHost(t, srv, func(c *config.Config) {
		c.Memory.Compaction = config.Compaction{ContextWindow: 1000, ReserveTokens: 100, SoftThresholdTokens: 200, KeepRecentTokens: 20, FlushPrompt: "flush now"}
	})
	turns := []struct{ role, text string }{
		{"user", "Let's pick a database for the billing service."},
		{"assistant", "Postgres fits: you need transactions and the team knows it."},
		{"user", "Agreed, Postgres it is. Sarah will set it up by Friday."},
		{"assistant", "Noted: Sarah sets up Postgres by Friday."},
		{"user", "Thanks, what's next?"},
	}
	for _, tt := range turns {
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "billing", Role: tt.role, Text: tt.text}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "billing", Summarize: true, Summary: "mine"}); fault.KindOf(err) != fault.BadInput {
		t.Errorf("summary and summarize: %v", err)
	}
	// A generator that fails: nothing is written.
	srv.Push(fakellm.Reply{Status: 503, RetryAfter: "0.05"}, fakellm.Reply{Status: 503, RetryAfter: "0.05"})
	if _, err := h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "billing", Summarize: true}); fault.KindOf(err) != fault.Unavailable {
		t.Errorf("failing generator: %v", err)
	}
	if tok, _ := h.SessionTokens(ctx, memhost.SessionTokensRequest{Session: "billing"}); tok.Compactions != 0 {
		t.Fatalf("a failed summary wrote a compaction: %+v", tok)
	}
	summary := "- Chose Postgres for billing (transactions, team knows it).\n- Sarah sets it up by Friday."
	srv.Push(fakellm.Reply{Content: summary})
	resp, err := h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "billing", Summarize: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Turn.Content != summary || resp.Model != "deepseek-chat" || resp.RemovedCount != 3 || resp.Turn.Type != "compaction" {
		t.Errorf("SessionCompact = %+v", resp)
	}
	reqs := srv.Requests()
	prompt := reqs[len(reqs)-1].Messages[1].Content
	if !strings.Contains(prompt, "user: Let's pick a database") || !strings.Contains(prompt, "user: Agreed, Postgres it is.") ||
		strings.Contains(prompt, "Noted:") || strings.Contains(prompt, "what's next") {
		t.Errorf("summary prompt:\n%s", prompt)
	}
	if got, _ := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "transactions team"}); len(got.Results) == 0 {
		t.Error("the summary is not searchable")
	}
	// A second compaction folds the first summary in.
	for _, text := range []string{"We also need backups nightly, kept for thirty days, and tested every month by restoring one.", "Backups: nightly to S3, agreed, with a monthly restore test.", "ok"} {
		h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "billing", Role: "user", Text: text})
	}
	resp, err = h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "billing", Summarize: true})
	if err != nil {
		t.Fatal(err)
	}
	reqs = srv.Requests()
	prompt = reqs[len(reqs)-1].Messages[1].Content
	if !strings.Contains(prompt, "Summary of the conversation before these turns:\n"+summary) || !strings.Contains(prompt, "kept for thirty days") {
		t.Errorf("second summary prompt:\n%s", prompt)
	}
	var sent map[string]any
	b, _ := json.Marshal(reqs[len(reqs)-1].Body)
	json.Unmarshal(b, &sent)
	if _, ok := sent["response_format"]; ok {
		t.Error("a summary asked for JSON")
	}
}

// TestSummarizeInParts: a transcript larger than the model's context is
// summarised in parts, then the parts merged.
func TestSummarizeInParts(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(genKey, "deepseek-chat")
	defer srv.Close()
	h := generatorHost(t, srv, func(c *config.Config) {
		c.Memory.Generator.Options["openai"]["contextTokens"] = "4000" // 4000*3/4 - 1524 = 1476 tokens of transcript a request
		c.Memory.Compaction.KeepRecentTokens = 10
	})
	for i := range 12 {
		h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "long", Role: "user", Text: strings.Repeat("topic"+string(rune('a'+i))+" ", 400)})
	}
	h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "long", Role: "user", Text: "end"})
	srv.SetAnswer(func(req fakellm.Request) string {
		if strings.HasPrefix(req.Messages[0].Content, "You merge") {
			return "merged summary"
		}
		return "part summary"
	})
	resp, err := h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "long", Summarize: true})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if resp.Turn.Content != "merged summary" || len(reqs) < 3 || !strings.Contains(reqs[len(reqs)-1].Messages[1].Content, "Part 2:\npart summary") {
		t.Errorf("%d requests; summary %q", len(reqs), resp.Turn.Content)
	}
}

func TestPluginsListsGenerators(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(genKey, "deepseek-chat")
	defer srv.Close()
	h := generatorHost(t, srv, nil)
	resp, err := h.Plugins(ctx, memhost.PluginsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Generators) != 1 {
		t.Fatalf("Generators = %+v (warnings %v)", resp.Generators, resp.Warnings)
	}
	g := resp.Generators[0]
	if g.Kind != "generator" || g.Name != "openai" || !g.Active || g.Status != "ready" || g.Model != "openai/deepseek-chat@"+strings.TrimPrefix(srv.URL, "http://") {
		t.Errorf("generator listed as %+v", g)
	}
	for _, p := range resp.Plugins {
		if p.Name == "openai" {
			t.Error("the generator is listed among embeddings providers")
		}
	}
	st, err := h.PluginStatus(ctx, memhost.PluginStatusRequest{})
	if err != nil || st.Generator.Plugin != "openai" || st.Generator.State != "ready" || st.Generator.PingError != "" || st.Generator.SHA256 == "" {
		t.Errorf("PluginStatus.Generator = %+v, %v", st.Generator, err)
	}
}

// TestRollupSummarize: a rollup asked to summarize puts the generator's
// summary above the logs (a heading in it written as text), names the
// model, and prune still finds every log held; without a generator it is
// unavailable and writes nothing.
func TestRollupSummarize(t *testing.T) {
	ctx := context.Background()
	bare := openHost(t, t.TempDir(), nil)
	writePage(t, bare, "daily/2026-02-24.md", "# 2026-02-24\n\n## Deploy\n\nShipped the billing service.\n")
	if _, err := bare.Rollup(ctx, memhost.RollupRequest{Period: "week", Date: "2026-02-24", Summarize: true}); fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("summarize without a generator: %v", err)
	}
	if _, err := os.Stat(filepath.Join(bare.NotebookDir(), "daily", "rollups", "2026-W09.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a failed summary wrote the page: %v", err)
	}

	srv := fakeopenai.New(genKey, "deepseek-chat")
	defer srv.Close()
	h := generatorHost(t, srv, nil)
	writePage(t, h, "daily/2026-02-24.md", "# 2026-02-24\n\n## Deploy\n\nShipped the billing service.\n")
	writePage(t, h, "daily/2026-02-26.md", "# 2026-02-26\n\n## Review\n\nSarah reviewed the backups.\n")
	srv.Push(fakellm.Reply{Content: "- Billing shipped on Tuesday.\n## Not a heading\n- Sarah reviewed backups."})
	resp, err := h.Rollup(ctx, memhost.RollupRequest{Period: "week", Date: "2026-02-24", Summarize: true})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Summary || resp.Model != "deepseek-chat" || !resp.Created {
		t.Fatalf("Rollup = %+v", resp)
	}
	page := readPage(t, h, resp.Path)
	if !strings.Contains(page, "## Summary\n\n- Billing shipped on Tuesday.\n\\## Not a heading\n") || !strings.Contains(page, "Shipped the billing service.") {
		t.Fatalf("the rollup page:\n%s", page)
	}
	reqs := srv.Requests()
	if prompt := reqs[len(reqs)-1].Messages[1].Content; !strings.Contains(prompt, "Sarah reviewed the backups.") || !strings.Contains(prompt, "Shipped the billing service.") {
		t.Errorf("the summary prompt lacks the logs:\n%s", prompt)
	}
	pr, err := h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 1})
	if err != nil || len(pr.Archived) != 2 {
		t.Fatalf("prune after a summarized rollup: %+v %v", pr, err)
	}
}
