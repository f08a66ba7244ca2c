package host

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/knowledge"
)

// contextHome is a home with a memory of kayaking in every tier: a fact,
// turns of two channels on two days, a daily log, a skill page and a
// notebook page (and the notebook page's text again in another page).
func contextHome(t *testing.T) (*Host, *clock) {
	t.Helper()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	cfg := config.Default()
	cfg.Timezone = "UTC"
	h, err := Open(ctx, Options{Home: t.TempDir(), Config: cfg, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if _, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "Sarah Chen", Attribute: "hobby", Value: "sea kayaking"}); err != nil {
		t.Fatal(err)
	}
	turns := []memhost.SessionAppendRequest{
		{Session: "wa-sarah", Role: "user", Text: "Sarah: I bought a new kayak for the lake", Channel: "whatsapp", SourceID: "919876543210"},
		{Session: "tg-sam", Role: "user", Text: "Sam: the kayak club meets on Sundays", Channel: "telegram", SourceID: "-100"},
	}
	for i, a := range turns {
		clk.set(time.Date(2026, 1, 1+i*50, 10, 0, 0, 0, time.UTC)) // 1 Jan, then 20 Feb
		if _, err := h.SessionAppend(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	clk.set(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	writePage(t, h, "daily/2026-02-28.md", "# Daily Log — 2026-02-28\n\n- Packed the kayak for the weekend.\n")
	writePage(t, h, "skills/kayak-launch.md", "# Launching a kayak\n\n1. Check the weather. 2. Carry the kayak to the water.\n")
	writePage(t, h, "knowledge/boats.md", "# Boats\n\nA kayak is a narrow boat moved by a double paddle.\n")
	writePage(t, h, "knowledge/boats-copy.md", "# Boats\n\nA kayak is a narrow boat moved by a double paddle.\n")
	return h, clk
}

// TestMemoryContextTiers: one query brings each tier's memories, facts
// first, then episodes, skills and notebook pages, each once and with
// where it came from, within the budget.
func TestMemoryContextTiers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := contextHome(t)
	resp, err := h.Context(ctx, memhost.ContextRequest{Query: "kayak"})
	if err != nil {
		t.Fatal(err)
	}
	var tiers []string
	for _, it := range resp.Items {
		if len(tiers) == 0 || tiers[len(tiers)-1] != it.Tier {
			tiers = append(tiers, it.Tier)
		}
		if it.Path == "" || it.Text == "" || it.Tokens == 0 {
			t.Errorf("item without its source, text or size: %+v", it)
		}
	}
	if !slices.Equal(tiers, memhost.ContextTiers) {
		t.Fatalf("tiers in order %v, want %v:\n%s", tiers, memhost.ContextTiers, resp.Text)
	}
	if resp.Budget != 5000 || resp.Tokens > resp.Budget || resp.Tokens == 0 {
		t.Errorf("tokens %d of a budget of %d", resp.Tokens, resp.Budget)
	}
	if n := strings.Count(resp.Text, "A kayak is a narrow boat"); n != 1 {
		t.Errorf("the page's text appears %d times, want once:\n%s", n, resp.Text)
	}
	for _, want := range []string{"## Facts\n- sarah-chen — hobby: sea kayaking (knowledge/entities/sarah-chen.md:", "whatsapp/919876543210] user: Sarah: I bought a new kayak",
		"## Skills\n- [skills/kayak-launch.md:", "## Notebook\n"} {
		if !strings.Contains(resp.Text, want) {
			t.Errorf("context lacks %q:\n%s", want, resp.Text)
		}
	}
	turn := resp.Items[slices.IndexFunc(resp.Items, func(it memhost.ContextItem) bool { return it.Session == "wa-sarah" })]
	if len(turn.Turns) != 1 || turn.Timestamp == "" || turn.Path != "sessions/wa-sarah.jsonl" {
		t.Errorf("a turn's item: %+v", turn)
	}
}

// TestMemoryContextBudget: a small budget keeps the first tiers' items
// that fit and counts the rest; the block never passes the budget.
func TestMemoryContextBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := contextHome(t)
	for _, budget := range []int{5, 60, 100} {
		resp, err := h.Context(ctx, memhost.ContextRequest{Query: "kayak", Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Tokens > budget || resp.Left == 0 || len(resp.Items) == 0 && resp.Text != "" {
			t.Errorf("budget %d: %d tokens, %d left out:\n%s", budget, resp.Tokens, resp.Left, resp.Text)
		}
		if budget == 60 && (len(resp.Items) == 0 || resp.Items[0].Tier != memhost.TierFacts) {
			t.Errorf("budget 60: the fact comes first: %+v", resp.Items)
		}
	}
}

// TestMemoryContextFilters: tiers, channel, source and entity each narrow
// what comes back.
func TestMemoryContextFilters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := contextHome(t)
	for _, tt := range []struct {
		name string
		req  memhost.ContextRequest
		ok   func(memhost.ContextItem) bool
	}{
		{"episodes only", memhost.ContextRequest{Tiers: []string{"episodes"}}, func(it memhost.ContextItem) bool { return it.Tier == memhost.TierEpisodes }},
		{"telegram", memhost.ContextRequest{Tiers: []string{"episodes"}, Channel: "Telegram"}, func(it memhost.ContextItem) bool { return it.Session == "tg-sam" }},
		{"one source", memhost.ContextRequest{Tiers: []string{"episodes"}, Channel: "whatsapp", SourceID: "919876543210"}, func(it memhost.ContextItem) bool { return it.Session == "wa-sarah" }},
		{"another entity", memhost.ContextRequest{Tiers: []string{"facts"}, Entity: "bob"}, func(memhost.ContextItem) bool { return false }},
	} {
		tt.req.Query = "kayak"
		resp, err := h.Context(ctx, tt.req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for _, it := range resp.Items {
			if !tt.ok(it) {
				t.Errorf("%s: %+v", tt.name, it)
			}
		}
		if tt.name != "another entity" && len(resp.Items) == 0 {
			t.Errorf("%s: nothing found", tt.name)
		}
	}
}

// TestMemoryContextDecay: with a half-life the recent turn ranks above an
// older one that matches as well; without, relevance alone ranks them.
func TestMemoryContextDecay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, clk := contextHome(t)
	// Two turns as relevant as each other (same words, same length): the
	// ranking's ties go by path, a-old first.
	for i, tt := range []struct{ session, text string }{{"a-old", "the canoe trip is booked for May"}, {"b-new", "the canoe trip is booked for Jun"}} {
		clk.set(time.Date(2025, time.Month(3+i*11), 1, 10, 0, 0, 0, time.UTC)) // a year ago, then a month ago
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: tt.session, Role: "user", Text: tt.text}); err != nil {
			t.Fatal(err)
		}
	}
	clk.set(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	order := func(half string) []string {
		resp, err := h.Context(ctx, memhost.ContextRequest{Query: "canoe trip", Tiers: []string{"episodes"}, HalfLife: half})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range resp.Items {
			out = append(out, it.Session)
		}
		return out
	}
	if got := order("30d"); !slices.Equal(got, []string{"b-new", "a-old"}) {
		t.Errorf("with a half-life of 30 days: %v, want the newer first", got)
	}
	if got := order(""); !slices.Equal(got, []string{"a-old", "b-new"}) {
		t.Errorf("without decay: %v", got)
	}
}

// TestMemoryContextBadInput: each bad setting names itself.
func TestMemoryContextBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := contextHome(t)
	for field, req := range map[string]memhost.ContextRequest{
		"query":    {Budget: 100},
		"tiers":    {Query: "kayak", Tiers: []string{"dreams"}},
		"budget":   {Query: "kayak", Budget: -1},
		"perTier":  {Query: "kayak", PerTier: -2},
		"halfLife": {Query: "kayak", HalfLife: "soon"},
		"channel":  {Query: "kayak", Channel: "what sapp"},
		"session":  {Session: "no-such-session"},
	} {
		_, err := h.Context(ctx, req)
		if fault.FieldOf(err) != field {
			t.Errorf("%+v: %v, want an error about %s", req, err, field)
		}
	}
	// A session's working memory checks the settings of its memory
	// context, and settings without a query or a session name the query.
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "w", Role: "user", Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	for field, req := range map[string]memhost.ContextRequest{
		"tiers":    {Session: "w", Tiers: []string{"dreams"}},
		"budget":   {Session: "w", Budget: -5},
		"halfLife": {Session: "w", HalfLife: "soon"},
		"query":    {Entity: "sarah-chen"},
	} {
		_, err := h.Context(ctx, req)
		if fault.FieldOf(err) != field {
			t.Errorf("%+v: %v, want an error about %s", req, err, field)
		}
	}
}

// TestWorkingContext: a session's working memory holds the notebook's
// block, the memory for its last user turn, its last summary and the
// recent turns that fit, and says when a compaction is due.
func TestWorkingContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := contextHome(t)
	say := func(role, text string) {
		t.Helper()
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "work", Role: role, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	say("user", "first question, long ago")
	say("assistant", "first answer")
	h.editConfig(func(c *config.Config) { c.Memory.Compaction.KeepRecentTokens = 1 })
	if _, err := h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "work", Summary: "We talked about boats."}); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		say("assistant", strings.Repeat("filler words ", 10)+string(rune('a'+i)))
	}
	say("user", "where is my kayak?")
	h.editConfig(func(c *config.Config) {
		c.Memory.Context.Working.RecentTokens = 60
		c.Memory.Context.Working.CompactAt = 100
	})
	resp, err := h.Context(ctx, memhost.ContextRequest{Session: "work"})
	if err != nil {
		t.Fatal(err)
	}
	w := resp.Working
	if w == nil || w.Checkpoint != "We talked about boats." || w.TurnTokens > 60 || w.Dropped == 0 || !w.CompactionDue {
		t.Fatalf("working context: %+v", w)
	}
	if last := w.Turns[len(w.Turns)-1]; last.Content != "where is my kayak?" {
		t.Errorf("the last turn is %q", last.Content)
	}
	for _, want := range []string{"# Memory\n", "# Memory context\n", "## Facts", "# Summary of earlier turns\n\nWe talked about boats.", "# Recent turns\n", "earlier turns left out"} {
		if !strings.Contains(resp.Text, want) {
			t.Errorf("working context lacks %q:\n%s", want, resp.Text)
		}
	}
	if len(resp.Items) == 0 || resp.Items[0].Tier != memhost.TierFacts {
		t.Errorf("the memory of the last user turn: %+v", resp.Items)
	}
	// The session's own turns are its recent turns, not memories; other
	// sessions' turns about the query are.
	var others int
	for _, it := range resp.Items {
		if it.Session == "work" {
			t.Errorf("the session's own turn among its memories: %+v", it)
		}
		if it.Session == "wa-sarah" {
			others++
		}
	}
	if others != 1 {
		t.Errorf("another session's turn about kayaks: %d in %+v", others, resp.Items)
	}
}

// TestMemoryContextFilterScores: an entity's or a channel's memories are
// judged against the best of their own, not against better ones of
// another entity or channel the filter left out; facts decay by their day.
func TestMemoryContextFilterScores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, clk := contextHome(t)
	for _, f := range [][3]string{{"Bob", "club", "kayak club lake sunday morning"}, {"Carol", "plan", "lake trip"}} {
		if _, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: f[0], Attribute: f[1], Value: f[2]}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := h.Context(ctx, memhost.ContextRequest{Query: "kayak club lake sunday morning", Tiers: []string{"facts"}, Entity: "carol"})
	if err != nil || len(resp.Items) != 1 || resp.Items[0].Path != "knowledge/entities/carol.md" || resp.Items[0].Score != 1 {
		t.Fatalf("carol's fact, weaker than bob's: %+v, %v", resp.Items, err)
	}
	resp, err = h.Context(ctx, memhost.ContextRequest{Query: "new kayak for the lake", Tiers: []string{"episodes"}, Channel: "telegram"})
	if err != nil || len(resp.Items) != 1 || resp.Items[0].Session != "tg-sam" {
		t.Fatalf("the telegram turn, weaker than the whatsapp one: %+v, %v", resp.Items, err)
	}
	clk.set(time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)) // four years after the facts were seen
	resp, err = h.Context(ctx, memhost.ContextRequest{Query: "sea kayaking", Tiers: []string{"facts"}, HalfLife: "365d", MinScore: new(float64)})
	if err != nil || len(resp.Items) == 0 || resp.Items[0].Score > 0.07 {
		t.Fatalf("a fact four half-lives old: %+v, %v", resp.Items, err)
	}
}
