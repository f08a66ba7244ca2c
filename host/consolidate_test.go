package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/facts"
	"github.com/memhost/memhost/host/generate"
	"github.com/memhost/memhost/host/semantic"
	"github.com/memhost/memhost/knowledge"
	"github.com/memhost/memhost/sdk"
)

// scriptedGenerator answers each call with answer(the episodes text, the
// number of the call for that text), and records the calls.
type scriptedGenerator struct {
	mu     sync.Mutex
	calls  []sdk.CompleteRequest
	answer func(episodes string, attempt int) (string, error)
	seen   map[string]int
}

func (g *scriptedGenerator) Complete(ctx context.Context, req sdk.CompleteRequest) (sdk.CompleteResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, req)
	if g.seen == nil {
		g.seen = map[string]int{}
	}
	ep := req.Messages[1].Content
	g.seen[ep]++
	text, err := g.answer(ep, g.seen[ep])
	return sdk.CompleteResponse{Text: text, Model: "scripted", InputTokens: len(ep) / 4, OutputTokens: len(text) / 4}, err
}

func (g *scriptedGenerator) count() int { g.mu.Lock(); defer g.mu.Unlock(); return len(g.calls) }

func TestConsolidateSupersedesWithHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	c := &clock{t: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}
	h := openClocked(t, home, c)
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
	// A session whose answers are bad twice.
	say("chat-2", "user", "The office wifi changed.")
	// A daily log entry.
	if _, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "Lunch with Bob\nBob prefers green tea."}); err != nil {
		t.Fatal(err)
	}

	g := &scriptedGenerator{answer: func(ep string, attempt int) (string, error) {
		switch {
		case strings.Contains(ep, "TechFlow"):
			if attempt == 1 {
				return `{"facts": [{"entity": "Sarah Chen", "attribute": "role"`, nil // cut off: not JSON
			}
			return "```json\n" + `{"facts": [{"entity": "Sarah Chen", "attribute": "role", "value": "designer", "episode": "e1"}],
			 "relations": [{"from": "Sarah Chen", "relation": "works at", "to": "Acme Corp", "episode": "e3", "confidence": 0.9},
			               {"from": "Sarah Chen", "relation": "works at", "to": "TechFlow", "episode": "e1"}]}` + "\n```", nil
		case strings.Contains(ep, "wifi"):
			if attempt == 1 {
				return `{"facts": [{"entity": "office", "attribute": "wifi", "value": "changed", "episode": "e7"}], "relations": []}`, nil // no such episode
			}
			return `{"facts": [{"entity": "office", "attribute": "wifi"}], "relations": []}`, nil // schema: value missing
		case strings.Contains(ep, "Bob"):
			return `{"facts": [{"entity": "Bob", "attribute": "prefers", "value": "green tea", "episode": "e1"}], "relations": []}`, nil
		}
		t.Errorf("unexpected episodes: %q", ep)
		return `{"facts": [], "relations": []}`, nil
	}}

	if _, err := h.Consolidate(ctx, knowledge.ConsolidateRequest{}); err != generate.ErrNoGenerator || fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("without a generator: %v", err)
	}
	h.impl.SetGenerator(g)
	res, err := h.Consolidate(ctx, knowledge.ConsolidateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Episodes != 5 || res.Batches != 2 || len(res.Skipped) != 1 || res.Skipped[0].Group != "chat-2" ||
		!strings.Contains(res.Skipped[0].Reason, "episode") {
		t.Fatalf("consolidation: %+v", res)
	}
	if g.count() != 5 {
		t.Fatalf("%d generator calls, want 5 (chat-1 twice, chat-2 twice, the daily log once)", g.count())
	}
	// The retry carried the bad answer and why.
	for _, call := range g.calls {
		if len(call.Messages) == 4 && !strings.HasPrefix(call.Messages[3].Content, "That answer is not usable: not JSON") && strings.Contains(call.Messages[1].Content, "TechFlow") {
			t.Fatalf("the retry said %q", call.Messages[3].Content)
		}
		if string(call.Schema) != string(semantic.AnswerSchema) {
			t.Fatal("a call without the answer schema")
		}
	}
	hist, err := h.Facts(ctx, knowledge.FactsRequest{Entity: "Sarah Chen", History: true})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ attr, value, status, seen, until, source string }
	var got []row
	for _, f := range hist.Facts {
		got = append(got, row{f.Attribute, f.Value, f.Status, f.Seen, f.Until, f.Source})
	}
	want := []row{
		{"role", "designer", facts.Current, "2026-11-20", "", "chat-1 turn " + t1},
		{"works at", "[[techflow]]", facts.Superseded, "2026-11-20", "2026-11-23", "chat-1 turn " + t1},
		{"works at", "[[acme-corp]]", facts.Current, "2026-11-23", "", "chat-1 turn " + t3},
	}
	if len(got) != len(want) {
		t.Fatalf("facts of Sarah:\n%+v\nwant\n%+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("fact %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	bob, _ := h.Facts(ctx, knowledge.FactsRequest{Entity: "bob"})
	if len(bob.Facts) != 1 || bob.Facts[0].Value != "green tea" || !strings.HasPrefix(bob.Facts[0].Source, "daily/2026-11-23.md line ") {
		t.Fatalf("Bob: %+v", bob.Facts)
	}
	if _, err := os.Stat(filepath.Join(h.NotebookDir(), facts.Path("office"))); !os.IsNotExist(err) {
		t.Fatalf("a skipped batch wrote a page: %v", err)
	}
	rec, _ := h.Recall(ctx, memhost.RecallRequest{Query: "where does Sarah work"})
	if len(rec.Results.Facts) == 0 || rec.Results.Facts[0].Value != "[[acme-corp]]" {
		t.Fatalf("recall facts: %+v", rec.Results.Facts)
	}

	// The person corrects the page by hand: recall and facts follow it.
	page := readPage(t, h, facts.Path("sarah-chen"))
	writePage(t, h, facts.Path("sarah-chen"), strings.Replace(page, "- [[acme-corp]]", "- [[globex]]", 1))
	rec, _ = h.Recall(ctx, memhost.RecallRequest{Query: "where does Sarah work"})
	if len(rec.Results.Facts) == 0 || rec.Results.Facts[0].Value != "[[globex]]" {
		t.Fatalf("recall after the edit: %+v", rec.Results.Facts)
	}
	if r, _ := h.Relations(ctx, knowledge.RelationsRequest{Entity: "globex"}); len(r.In) != 1 || r.In[0].From != "sarah-chen" {
		t.Fatalf("relations after the edit: %+v", r)
	}

	// A second run asks only about the skipped batch, and adds nothing.
	before := readPage(t, h, facts.Path("sarah-chen"))
	calls := g.count()
	res, err = h.Consolidate(ctx, knowledge.ConsolidateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Episodes != 1 || len(res.Applied) != 0 || g.count() != calls+2 {
		t.Fatalf("second run: %+v, %d calls", res, g.count()-calls)
	}
	if after := readPage(t, h, facts.Path("sarah-chen")); after != before {
		t.Fatalf("the second run changed the page:\n%s", after)
	}
	// --since leaves older episodes out.
	h.impl.SetGenerator(&scriptedGenerator{answer: func(string, int) (string, error) {
		return `{"facts": [], "relations": []}`, nil
	}})
	res, err = h.Consolidate(ctx, knowledge.ConsolidateRequest{Since: "2026-11-24"})
	if err != nil || res.Episodes != 0 {
		t.Fatalf("since tomorrow: %+v, %v", res, err)
	}
	// The state is JSON in brain/.
	var st struct {
		Episodes map[string]string `json:"episodes"`
	}
	b, _ := os.ReadFile(filepath.Join(home, "brain", "consolidated.json"))
	if err := json.Unmarshal(b, &st); err != nil || len(st.Episodes) != 4 {
		t.Fatalf("state: %s, %v", b, err)
	}
	if _, err := h.Consolidate(ctx, knowledge.ConsolidateRequest{Since: "last week"}); fault.KindOf(err) != fault.BadInput {
		t.Fatalf("a bad since: %v", err)
	}
}

// An old episode consolidated after a newer value was confirmed does not
// supersede it.
func TestConsolidateOldEpisodeDoesNotUndoNewerFact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	h := openClocked(t, t.TempDir(), c)
	h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "old", Role: "user", Text: "Sarah works at TechFlow"})
	c.set(time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC))
	if _, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "Sarah", Attribute: "works at", Value: "[[acme-corp]]"}); err != nil {
		t.Fatal(err)
	}
	h.impl.SetGenerator(&scriptedGenerator{answer: func(string, int) (string, error) {
		return `{"facts": [], "relations": [{"from": "Sarah", "relation": "works at", "to": "TechFlow", "episode": "e1"}]}`, nil
	}})
	res, err := h.Consolidate(ctx, knowledge.ConsolidateRequest{})
	if err != nil || len(res.Applied) != 1 || !res.Applied[0].Stale {
		t.Fatalf("%+v, %v", res, err)
	}
	cur, _ := h.Facts(ctx, knowledge.FactsRequest{Entity: "sarah"})
	if len(cur.Facts) != 1 || cur.Facts[0].Value != "[[acme-corp]]" {
		t.Fatalf("current: %+v", cur.Facts)
	}
}

// A generator that fails (a timeout, a 500) after some batches were
// applied: what was written is reported, not an error, and the rest is
// done by the next run.
func TestConsolidateStopsKeepingWhatWasWritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "a", Role: "user", Text: "Ann lives in Oslo"})
	h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "b", Role: "user", Text: "Ben lives in Rome"})
	down := true
	h.impl.SetGenerator(&scriptedGenerator{answer: func(ep string, _ int) (string, error) {
		if strings.Contains(ep, "Ben") && down {
			return "", fmt.Errorf("HTTP 500 from the model server")
		}
		who := "Ann"
		if strings.Contains(ep, "Ben") {
			who = "Ben"
		}
		return `{"facts": [{"entity": "` + who + `", "attribute": "lives in", "value": "somewhere", "episode": "e1"}], "relations": []}`, nil
	}})
	res, err := h.Consolidate(ctx, knowledge.ConsolidateRequest{})
	if err != nil || len(res.Applied) != 1 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "HTTP 500") {
		t.Fatalf("%+v, %v", res, err)
	}
	// Nothing written yet in a run: the error itself.
	res, err = h.Consolidate(ctx, knowledge.ConsolidateRequest{})
	if fault.KindOf(err) != fault.Unavailable || res.Episodes != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	down = false
	res, err = h.Consolidate(ctx, knowledge.ConsolidateRequest{})
	if err != nil || len(res.Applied) != 1 || res.Applied[0].Entity != "ben" {
		t.Fatalf("%+v, %v", res, err)
	}
}

// TestCompactWithFacts: session compact with facts writes the checkpoint
// and extracts the facts of the conversation in the same call; without a
// generator the compaction still stands, with a warning.
func TestCompactWithFacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}
	h := openClocked(t, t.TempDir(), c)
	h.editConfig(func(cfg *config.Config) { cfg.Memory.Compaction.KeepRecentTokens = 1 })
	for _, text := range []string{"My colleague Sarah Chen works at TechFlow.", "Noted.", "And Bob likes green tea."} {
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s", Role: "user", Text: text}); err != nil {
			t.Fatal(err)
		}
		c.set(c.now().Add(time.Minute))
	}
	r, err := h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "s", Summary: "Sarah's job; Bob's tea.", Facts: true})
	if err != nil || r.RemovedCount == 0 || r.Consolidated != nil || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "facts were not extracted") {
		t.Fatalf("compact with facts, no generator: %+v, %v", r, err)
	}
	h.impl.SetGenerator(&scriptedGenerator{answer: func(string, int) (string, error) {
		return `{"facts": [{"entity": "Sarah Chen", "attribute": "works at", "value": "TechFlow", "episode": "e1"}], "relations": []}`, nil
	}})
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s", Role: "user", Text: "One more thing."}); err != nil {
		t.Fatal(err)
	}
	r, err = h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "s", Summary: "Still Sarah and Bob.", Facts: true})
	if err != nil || r.Consolidated == nil || r.Consolidated.Episodes == 0 || len(r.Consolidated.Applied) != 1 {
		t.Fatalf("compact with facts: %+v, %+v, %v", r, r.Consolidated, err)
	}
	if f, err := h.Facts(ctx, knowledge.FactsRequest{Entity: "sarah-chen"}); err != nil || len(f.Facts) != 1 || f.Facts[0].Value != "TechFlow" {
		t.Errorf("the fact: %+v, %v", f, err)
	}
}
