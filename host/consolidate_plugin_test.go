package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/facts"
	"github.com/memhost/memhost/internal/fakellm"
	"github.com/memhost/memhost/internal/fakeollama"
	"github.com/memhost/memhost/internal/fakeopenai"
	"github.com/memhost/memhost/knowledge"
	"github.com/memhost/memhost/registry"
)

// pluginHome opens a clocked home whose plugins/ folder holds the real
// generator plugin name (built from plugins/generator-NAME), configured
// with opts: consolidation goes through go-plugin, not SetGenerator.
func pluginHome(t *testing.T, name string, opts map[string]string, c *clock, edit func(*config.Config)) *Host {
	t.Helper()
	return pluginHomeWith(t, name, opts, c, edit, Options{})
}

// pluginHomeWith is pluginHome with more of the Host's options (its Home,
// Config and Now are pluginHome's).
func pluginHomeWith(t *testing.T, name string, opts map[string]string, c *clock, edit func(*config.Config), o Options) *Host {
	t.Helper()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	b, err := os.ReadFile(generatorBinary(t, name))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "plugins", registry.GeneratorPrefix+name), b, 0o755)
	cfg := config.Default()
	cfg.Memory.Generator.Plugin = name
	cfg.Memory.Generator.Options[name] = opts
	if edit != nil {
		edit(&cfg)
	}
	o.Home, o.Config, o.Now = home, cfg, c.now
	h, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// episodesOf is the user message holding a batch's episodes ("[e1] ...").
func episodesOf(req fakellm.Request) string {
	for _, m := range req.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Content, "[e1] ") {
			return m.Content
		}
	}
	return ""
}

// scriptedModel answers the conversation of TestConsolidateThroughPlugin
// as a model would: the TechFlow session's first answer is cut off (not
// JSON) and its retry good; the wifi session's answers are bad twice.
type scriptedModel struct {
	mu   sync.Mutex
	seen map[string]int
	t    *testing.T
}

func (m *scriptedModel) answer(req fakellm.Request) string {
	ep := episodesOf(req)
	m.mu.Lock()
	if m.seen == nil {
		m.seen = map[string]int{}
	}
	m.seen[ep]++
	attempt := m.seen[ep]
	m.mu.Unlock()
	switch {
	case strings.Contains(ep, "TechFlow"):
		if attempt == 1 {
			return `{"facts": [{"entity": "Sarah Chen", "attribute": "role"` // cut off
		}
		return `{"facts": [{"entity": "Sarah Chen", "attribute": "role", "value": "designer", "episode": "e1"}],
		 "relations": [{"from": "Sarah Chen", "relation": "works at", "to": "TechFlow", "episode": "e1", "confidence": 0.9},
		               {"from": "Sarah Chen", "relation": "works at", "to": "Acme Corp", "episode": "e3", "confidence": 0.9}]}`
	case strings.Contains(ep, "wifi"):
		if attempt == 1 {
			return `{"facts": [{"entity": "office", "attribute": "wifi", "value": "changed", "episode": "e9"}], "relations": []}`
		}
		return `not json at all`
	}
	m.t.Errorf("unexpected request: %q", ep)
	return `{"facts": [], "relations": []}`
}

func TestConsolidateThroughPlugin(t *testing.T) {
	for _, name := range []string{"openai", "ollama"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			model := &scriptedModel{t: t}
			var opts map[string]string
			var requests func() []fakellm.Request
			switch name {
			case "openai":
				srv := fakeopenai.New(genKey, "deepseek-chat")
				t.Cleanup(srv.Close)
				srv.SetAnswer(model.answer)
				requests = srv.Requests
				t.Setenv("MEMHOST_TEST_GEN_KEY", genKey)
				opts = map[string]string{"url": srv.Base(), "model": "deepseek-chat", "apiKeyEnv": "MEMHOST_TEST_GEN_KEY", "retries": "1"}
			case "ollama":
				srv := fakeollama.New(map[string]fakeollama.Model{"llama3.2:latest": {Capabilities: []string{"completion"}}})
				t.Cleanup(srv.Close)
				srv.Chat.SetAnswer(model.answer)
				requests = srv.Chat.Requests
				opts = map[string]string{"url": srv.URL, "model": "llama3.2", "retries": "1"}
			}
			c := &clock{t: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}
			h := pluginHome(t, name, opts, c, nil)
			say := func(session, role, text string) string {
				r, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: session, Role: role, Text: text})
				if err != nil {
					t.Fatal(err)
				}
				c.set(c.now().Add(time.Minute))
				return r.Turn.ID
			}
			t1 := say("chat-1", "user", "My colleague Sarah Chen works at TechFlow as a designer.")
			say("chat-1", "assistant", "Noted.")
			c.set(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
			t3 := say("chat-1", "user", "Sarah moved to Acme Corp last week.")
			say("chat-2", "user", "The office wifi changed.")

			res, err := h.Consolidate(ctx, knowledge.ConsolidateRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Episodes != 4 || res.Batches != 1 || len(res.Applied) != 3 || len(res.Skipped) != 1 ||
				res.Skipped[0].Group != "chat-2" || !strings.Contains(res.Skipped[0].Reason, "not JSON") {
				t.Fatalf("consolidation: %+v", res)
			}
			// Two calls per batch: the bad answer was asked again once,
			// with the reason, through the plugin.
			reqs := requests()
			if len(reqs) != 4 {
				t.Fatalf("%d chat requests, want 4", len(reqs))
			}
			retried := false
			for _, r := range reqs {
				last := r.Messages[len(r.Messages)-1]
				if strings.Contains(episodesOf(r), "TechFlow") && strings.HasPrefix(last.Content, "That answer is not usable: not JSON") {
					retried = true
				}
			}
			if !retried {
				t.Fatalf("no retry carried the reason: %+v", reqs)
			}

			// On disk: the old employer struck through with its dates,
			// the new one current, each with its turn.
			page := readPage(t, h, facts.Path("sarah-chen"))
			for _, want := range []string{
				"~~[[techflow]]~~",
				"2026-11-20",
				"2026-11-23",
				"- [[acme-corp]]",
				"chat-1 turn " + t1,
				"chat-1 turn " + t3,
			} {
				if !strings.Contains(page, want) {
					t.Fatalf("knowledge/entities/sarah-chen.md lacks %q:\n%s", want, page)
				}
			}
			if _, err := os.Stat(filepath.Join(h.NotebookDir(), facts.Path("office"))); !os.IsNotExist(err) {
				t.Fatalf("the skipped batch wrote a page: %v", err)
			}
			hist, err := h.Facts(ctx, knowledge.FactsRequest{Entity: "sarah-chen", History: true})
			if err != nil {
				t.Fatal(err)
			}
			var works []string
			for _, f := range hist.Facts {
				if f.Attribute == "works at" {
					works = append(works, f.Value+" "+f.Status+" "+f.Seen+".."+f.Until)
				}
			}
			if strings.Join(works, "; ") != "[[techflow]] superseded 2026-11-20..2026-11-23; [[acme-corp]] current 2026-11-23.." {
				t.Fatalf("works at: %q", works)
			}

			// recall's FACTS group (printed first by the CLI) holds the new employer.
			rec, err := h.Recall(ctx, memhost.RecallRequest{Query: "where does Sarah work"})
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Results.Facts) == 0 || rec.Results.Facts[0].Value != "[[acme-corp]]" {
				t.Fatalf("recall FACTS: %+v", rec.Results.Facts)
			}

			// A hand edit of the page is read again.
			writePage(t, h, facts.Path("sarah-chen"), strings.Replace(page, "- [[acme-corp]]", "- [[globex]]", 1))
			rec, _ = h.Recall(ctx, memhost.RecallRequest{Query: "where does Sarah work"})
			if len(rec.Results.Facts) == 0 || rec.Results.Facts[0].Value != "[[globex]]" {
				t.Fatalf("recall after the hand edit: %+v", rec.Results.Facts)
			}

			// A second run asks again only about the skipped batch (bad
			// again) and adds nothing.
			before := readPage(t, h, facts.Path("sarah-chen"))
			model.mu.Lock()
			model.seen = nil
			model.mu.Unlock()
			res, err = h.Consolidate(ctx, knowledge.ConsolidateRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Episodes != 1 || len(res.Applied) != 0 || len(res.Skipped) != 1 || len(requests()) != 6 {
				t.Fatalf("second run: %+v, %d requests", res, len(requests()))
			}
			if after := readPage(t, h, facts.Path("sarah-chen")); after != before {
				t.Fatalf("the second run changed the page:\n%s", after)
			}

			// Status reports the generator and the last run.
			st, err := h.Status(ctx, memhost.StatusRequest{})
			if err != nil {
				t.Fatal(err)
			}
			g := st.Generator
			if g.Plugin != name || g.State != "configured" || g.Last == nil || g.Last.Episodes != 1 || g.Last.Applied != 0 ||
				g.Last.Skipped != 1 || g.Last.Error != "" || g.Last.Finished != "2026-11-23T09:02:00Z" {
				t.Fatalf("status: %+v %+v", g, g.Last)
			}
			var state struct {
				Episodes map[string]string           `json:"episodes"`
				Last     *knowledge.ConsolidationRun `json:"last"`
			}
			b, _ := os.ReadFile(filepath.Join(h.home, "brain", "consolidated.json"))
			if err := json.Unmarshal(b, &state); err != nil || len(state.Episodes) != 3 || state.Last == nil {
				t.Fatalf("brain/consolidated.json: %s, %v", b, err)
			}
		})
	}
}

// Under Watch (memhost serve's loop), memory.generator.consolidateEveryMin
// consolidates on its own, through the plugin, and status reports it.
func TestConsolidateOnSchedule(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(genKey, "deepseek-chat")
	t.Cleanup(srv.Close)
	srv.SetAnswer(func(req fakellm.Request) string {
		if strings.Contains(episodesOf(req), "green tea") {
			return `{"facts": [{"entity": "Bob", "attribute": "prefers", "value": "green tea", "episode": "e1"}], "relations": []}`
		}
		return `{"facts": [], "relations": []}`
	})
	t.Setenv("MEMHOST_TEST_GEN_KEY", genKey)
	c := &clock{t: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}
	h := pluginHomeWith(t, "openai", map[string]string{"url": srv.Base(), "model": "deepseek-chat", "apiKeyEnv": "MEMHOST_TEST_GEN_KEY"}, c,
		func(cfg *config.Config) { cfg.Memory.Generator.ConsolidateEveryMin = 2 },
		Options{ScheduleMinute: 20 * time.Millisecond}) // a "minute"
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "Bob prefers green tea."}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var published []string
	h.Subscribe(func(c memhost.Change) { mu.Lock(); published = append(published, c.Op); mu.Unlock() })
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Watch(wctx, WatchRequest{}) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := h.Status(ctx, memhost.StatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if l := st.Generator.Last; l != nil && l.Applied == 1 {
			if st.Generator.EveryMin != 2 || l.Episodes != 1 || l.Error != "" || l.Model != "deepseek-chat" {
				t.Fatalf("status: %+v %+v", st.Generator, l)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scheduled consolidation in 30s: %+v", st.Generator)
		}
		time.Sleep(20 * time.Millisecond)
	}
	bob, err := h.Facts(ctx, knowledge.FactsRequest{Entity: "bob"})
	if err != nil || len(bob.Facts) != 1 || bob.Facts[0].Value != "green tea" {
		t.Fatalf("Bob: %+v, %v", bob.Facts, err)
	}
	stop()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(published) == 0 || published[0] != "consolidate" {
		t.Fatalf("the scheduled run was not published: %v", published)
	}
}

// A run the generator fails (the endpoint answers 500 to every try) is
// an error, writes nothing, and is recorded with its error for status;
// the episodes stay to be read again.
func TestConsolidateFailureRecorded(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(genKey, "deepseek-chat")
	t.Cleanup(srv.Close)
	for i := 0; i < 4; i++ {
		srv.Push(fakellm.Reply{Status: 500, Error: "the model is overloaded"})
	}
	t.Setenv("MEMHOST_TEST_GEN_KEY", genKey)
	c := &clock{t: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}
	h := pluginHome(t, "openai", map[string]string{"url": srv.Base(), "model": "deepseek-chat", "apiKeyEnv": "MEMHOST_TEST_GEN_KEY", "retries": "1"}, c, nil)
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "Bob prefers green tea."}); err != nil {
		t.Fatal(err)
	}
	_, err := h.Consolidate(ctx, knowledge.ConsolidateRequest{})
	if err == nil || !strings.Contains(err.Error(), "overloaded") {
		t.Fatalf("consolidate against a failing endpoint: %v", err)
	}
	st, _ := h.Status(ctx, memhost.StatusRequest{})
	if l := st.Generator.Last; l == nil || l.Error != err.Error() || l.Applied != 0 || l.Episodes != 1 {
		t.Fatalf("status after a failed run: %+v", l)
	}
	if _, err := os.Stat(filepath.Join(h.NotebookDir(), facts.Path("bob"))); !os.IsNotExist(err) {
		t.Fatalf("a failed run wrote a page: %v", err)
	}
	// The endpoint is back: the episode is read again and applied.
	srv.SetAnswer(func(fakellm.Request) string {
		return `{"facts": [{"entity": "Bob", "attribute": "prefers", "value": "green tea", "episode": "e1"}], "relations": []}`
	})
	for srv.Pending() > 0 {
		srv.Next(fakellm.Request{}) // drop any 500 the plugin's retries left unused
	}
	res, err := h.Consolidate(ctx, knowledge.ConsolidateRequest{})
	if err != nil || len(res.Applied) != 1 {
		t.Fatalf("after the endpoint recovered: %+v, %v", res, err)
	}
	st, _ = h.Status(ctx, memhost.StatusRequest{})
	if l := st.Generator.Last; l == nil || l.Error != "" || l.Applied != 1 {
		t.Fatalf("status after a good run: %+v", l)
	}
}
