package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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
	"github.com/memhost/memhost/index/factrows"
	"github.com/memhost/memhost/knowledge"
)

func openClocked(t *testing.T, home string, c *clock) *Host {
	t.Helper()
	h, err := Open(context.Background(), Options{Home: home, Config: config.Default(), Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestFactSupersededWithHistory(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	c := &clock{t: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
	h := openClocked(t, home, c)
	first, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "Sarah Chen", Attribute: "works at", Value: "[[techflow]]", Source: "chat-1 turn 1a2b3c4d5e6f"})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Created || first.Path != "knowledge/entities/sarah-chen.md" || first.Entity != "sarah-chen" {
		t.Fatalf("first add: %+v", first)
	}
	c.set(c.now().AddDate(0, 0, 3))
	// By title, in another case: the same entity.
	second, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "sarah chen", Attribute: "works at", Value: "[[acme-corp]]", Source: "chat-1 turn 8f3a2b1c9d0e", Confidence: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if second.Created || len(second.Superseded) != 1 || second.Superseded[0].ID != first.Fact.ID {
		t.Fatalf("second add: %+v; want it to supersede %s", second, first.Fact.ID)
	}
	cur, err := h.Facts(ctx, knowledge.FactsRequest{Entity: "Sarah Chen"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cur.Facts) != 1 || cur.Facts[0].Value != "[[acme-corp]]" || cur.Facts[0].Confidence != 0.9 || cur.Facts[0].SourceTurn != "8f3a2b1c9d0e" {
		t.Fatalf("current facts: %+v", cur.Facts)
	}
	hist, err := h.Facts(ctx, knowledge.FactsRequest{Entity: "sarah-chen", History: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Facts) != 2 || hist.Facts[0].Status != facts.Superseded || hist.Facts[0].Until != "2026-11-23" || hist.Facts[0].SupersededBy != second.Fact.ID {
		t.Fatalf("history: %+v", hist.Facts)
	}
	rel, err := h.Relations(ctx, knowledge.RelationsRequest{Entity: "acme-corp"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rel.In) != 1 || rel.In[0].From != "sarah-chen" || rel.In[0].Relation != "works at" || len(rel.Out) != 0 {
		t.Fatalf("relations of acme-corp: %+v", rel)
	}
	if _, err := h.Relations(ctx, knowledge.RelationsRequest{Entity: "techflow"}); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("relations of techflow (only a superseded link): %v, want not found", err)
	}

	// recall: the FACTS group first, with the current value only.
	res, err := h.Recall(ctx, memhost.RecallRequest{Query: "where does Sarah work"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results.Facts) != 1 || res.Results.Facts[0].FactID != second.Fact.ID {
		t.Fatalf("recall facts: %+v", res.Results.Facts)
	}

	// forget keeps the line, struck through.
	c.set(c.now().AddDate(0, 0, 1))
	fg, err := h.FactForget(ctx, knowledge.FactForgetRequest{Entity: "sarah-chen", Attribute: "works at"})
	if err != nil || len(fg.Forgotten) != 1 || fg.Forgotten[0].ForgotOn != "2026-11-24" {
		t.Fatalf("forget: %+v, %v", fg, err)
	}
	page := readPage(t, h, first.Path)
	if !strings.Contains(page, "- ~~[[acme-corp]]~~ [confidence:: 0.9] [seen:: 2026-11-23] [forgotten:: 2026-11-24]") {
		t.Fatalf("the forgotten fact is not on the page, struck through:\n%s", page)
	}
	if _, err := h.FactForget(ctx, knowledge.FactForgetRequest{ID: second.Fact.ID}); fault.KindOf(err) != fault.Conflict {
		t.Fatalf("forgetting it again: %v, want a conflict", err)
	}
	if res, _ := h.Recall(ctx, memhost.RecallRequest{Query: "acme"}); len(res.Results.Facts) != 0 {
		t.Fatalf("a forgotten fact is recalled: %+v", res.Results.Facts)
	}
}

// A person's edit in an editor wins: the index follows the page.
func TestFactPageEditedByHand(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	add, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "Max", Attribute: "species", Value: "dog"})
	if err != nil {
		t.Fatal(err)
	}
	page := readPage(t, h, add.Path)
	page = strings.Replace(page, "- dog", "- puppy", 1) + "\n## favourite toy\n- a red ball\n"
	writePage(t, h, add.Path, page)
	got, err := h.Facts(ctx, knowledge.FactsRequest{Entity: "max"})
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, f := range got.Facts {
		vals = append(vals, f.Attribute+"="+f.Value)
	}
	if want := []string{"species=puppy", "favourite toy=a red ball"}; !reflect.DeepEqual(vals, want) {
		t.Fatalf("after the edit: %v, want %v", vals, want)
	}
	// memhost's next write keeps the person's lines.
	if _, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "max", Attribute: "age", Value: "1"}); err != nil {
		t.Fatal(err)
	}
	if after := readPage(t, h, add.Path); !strings.Contains(after, "## favourite toy\n- a red ball\n") || !strings.Contains(after, "- puppy") {
		t.Fatalf("the person's lines changed:\n%s", after)
	}
}

// Deleting brain/memory.db rebuilds the facts tables exactly.
func TestFactsRebuiltFromPages(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	c := &clock{t: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
	h := openClocked(t, home, c)
	adds := []knowledge.FactAddRequest{
		{Entity: "Sarah Chen", Attribute: "works at", Value: "[[techflow]]", Source: "chat-1 turn aaa"},
		{Entity: "Sarah Chen", Attribute: "email", Value: "sarah@example.com", Source: "daily/2026-11-20.md line 4"},
		{Entity: "Bob", Attribute: "manager", Value: "[[sarah-chen]]"},
		{Entity: "Sarah Chen", Attribute: "works at", Value: "[[acme-corp]]", Confidence: 0.8},
		{Entity: "Acme Corp", Attribute: "industry", Value: "robotics"},
		{Entity: "Bob", Attribute: "likes", Value: "tea", Keep: true},
		{Entity: "Bob", Attribute: "likes", Value: "chess", Keep: true},
	}
	for i, a := range adds {
		c.set(c.now().Add(time.Duration(i) * 24 * time.Hour))
		if _, err := h.FactAdd(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.FactForget(ctx, knowledge.FactForgetRequest{Entity: "bob", Attribute: "likes", Value: "tea"}); err != nil {
		t.Fatal(err)
	}
	snapshot := func(h *Host) (knowledge.FactsResponse, knowledge.EntitiesResponse, knowledge.RelationsResponse) {
		f, err := h.Facts(ctx, knowledge.FactsRequest{History: true})
		if err != nil {
			t.Fatal(err)
		}
		e, err := h.Entities(ctx, knowledge.EntitiesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := h.Relations(ctx, knowledge.RelationsRequest{Entity: "sarah-chen"})
		if err != nil {
			t.Fatal(err)
		}
		return f, e, r
	}
	f1, e1, r1 := snapshot(h)
	if len(f1.Facts) != 7 || len(e1.Entities) != 3 || len(r1.Out) != 1 || len(r1.In) != 1 {
		t.Fatalf("before: %d facts, %d entities, relations %+v", len(f1.Facts), len(e1.Entities), r1)
	}
	h.Close()
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(home, "brain", "memory.db"+s))
	}
	h = openClocked(t, home, c)
	f2, e2, r2 := snapshot(h)
	if !reflect.DeepEqual(f1, f2) || !reflect.DeepEqual(e1, e2) || !reflect.DeepEqual(r1, r2) {
		t.Fatalf("rebuilt facts differ:\n%+v\n%+v\n%+v\nwant\n%+v\n%+v\n%+v", f2, e2, r2, f1, e1, r1)
	}
	if _, err := h.Rebuild(ctx, memhost.RebuildRequest{}); err != nil {
		t.Fatal(err)
	}
	if f3, e3, r3 := snapshot(h); !reflect.DeepEqual(f1, f3) || !reflect.DeepEqual(e1, e3) || !reflect.DeepEqual(r1, r3) {
		t.Fatal("facts differ after memhost rebuild")
	}
}

func TestFactAddBadInput(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	for _, req := range []knowledge.FactAddRequest{
		{Entity: "", Attribute: "a", Value: "v"},
		{Entity: "---", Attribute: "a", Value: "v"},
		{Entity: "x", Attribute: "", Value: "v"},
		{Entity: "x", Attribute: "a\nb", Value: "v"},
		{Entity: "x", Attribute: "a", Value: ""},
		{Entity: "x", Attribute: "a", Value: "two\nlines"},
		{Entity: "x", Attribute: "a", Value: "v [k:: w]"},
		{Entity: "x", Attribute: "a", Value: "v", Confidence: 1.5},
		{Entity: "x", Attribute: "a", Value: "v", Source: "a]b"},
	} {
		if _, err := h.FactAdd(ctx, req); fault.KindOf(err) != fault.BadInput {
			t.Errorf("%+v: %v, want bad input", req, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(h.NotebookDir(), facts.Dir)); len(entries) != 0 {
		t.Fatalf("bad input wrote %d pages", len(entries))
	}
	if _, err := h.Facts(ctx, knowledge.FactsRequest{Entity: "nobody"}); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("facts of an unknown entity: %v", err)
	}
	if _, err := h.FactForget(ctx, knowledge.FactForgetRequest{ID: "fnothing"}); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("forget an unknown id: %v", err)
	}
}

// With an embeddings provider ready (the hello plugin, through go-plugin),
// a fact restating a current one under another attribute supersedes it;
// an unrelated one does not.
func TestFactNearDuplicateByEmbedding(t *testing.T) {
	ctx := context.Background()
	h := semanticHost(t, func(c *config.Config) { c.Memory.Embedding.Plugin = "hello" }, "hello")
	first, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "Sarah Chen", Attribute: "role", Value: "senior robotics engineer at Acme"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "Sarah Chen", Attribute: "likes", Value: "green tea"})
	if err != nil {
		t.Fatal(err)
	}
	if len(other.NearDups) != 0 || other.Similarity != "" || len(other.Superseded) != 0 {
		t.Fatalf("an unrelated fact: %+v", other)
	}
	dup, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "sarah-chen", Attribute: "job", Value: "senior robotics engineer at Acme."})
	if err != nil {
		t.Fatal(err)
	}
	if len(dup.NearDups) != 1 || dup.NearDups[0].ID != first.Fact.ID || dup.NearDups[0].Cosine < semantic.NearDuplicate {
		t.Fatalf("near-duplicate: %+v", dup)
	}
	if len(dup.Superseded) != 1 || dup.Superseded[0].ID != first.Fact.ID || dup.Fact.Supersedes != first.Fact.ID {
		t.Fatalf("the near-duplicate did not supersede %s: %+v", first.Fact.ID, dup)
	}
	cur, _ := h.Facts(ctx, knowledge.FactsRequest{Entity: "sarah-chen"})
	if len(cur.Facts) != 2 {
		t.Fatalf("current facts: %+v", cur.Facts)
	}
}

// Without a provider, fact add says why no near-duplicates were looked
// for, and still supersedes by attribute.
func TestFactSimilarityWithoutProvider(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "x", Attribute: "a", Value: "one"})
	r, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "x", Attribute: "b", Value: "two"})
	if err != nil || !strings.HasPrefix(r.Similarity, "not compared by meaning: ") {
		t.Fatalf("%+v, %v", r, err)
	}
}

func TestContextShowsMostMentionedFacts(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	h := openHost(t, home, func(c *config.Config) { c.Memory.Prompt.MaxFactsChars = 150 })
	for _, a := range []knowledge.FactAddRequest{
		{Entity: "Acme Corp", Attribute: "industry", Value: "robotics"},
		{Entity: "Sarah Chen", Attribute: "works at", Value: "[[acme-corp]]"},
		{Entity: "Bob", Attribute: "works at", Value: "[[acme-corp]]"},
		{Entity: "Bob", Attribute: "likes", Value: "a very long description of everything Bob likes, which does not fit in the budget at all, not even close"},
	} {
		if _, err := h.FactAdd(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	b, err := h.Context(ctx, memhost.ContextRequest{})
	if err != nil {
		t.Fatal(err)
	}
	_, got, _ := strings.Cut(b.Text, "\n## Facts\n")
	want := "\n### Acme Corp (knowledge/entities/acme-corp.md)\n\n- industry: robotics\n" +
		"\n### Sarah Chen (knowledge/entities/sarah-chen.md)\n\n- works at: [[acme-corp]]\n" +
		"\n[… 1 more entities left out: the facts are limited to 150 characters; list them with `memhost entities`]\n"
	if got != want {
		t.Fatalf("facts in context:\n%q\nwant\n%q", got, want)
	}
	h2 := openHost(t, t.TempDir(), func(c *config.Config) { c.Memory.Prompt.MaxFactsChars = 0 })
	h2.FactAdd(ctx, knowledge.FactAddRequest{Entity: "x", Attribute: "a", Value: "b"})
	if b, _ := h2.Context(ctx, memhost.ContextRequest{}); strings.Contains(b.Text, "## Facts") {
		t.Fatal("maxFactsChars 0 still shows facts")
	}
}

// The watcher (memhost serve's) re-reads an entity page edited in an
// editor: the facts tables follow without any command.
func TestWatcherReindexesFactPages(t *testing.T) {
	h := openHost(t, t.TempDir(), func(c *config.Config) {
		c.Memory.Sync.WatchDebounceMs = 50
		c.Memory.Sync.SyncOnSearch = false // prove the watcher did the indexing
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	synced := make(chan memhost.SyncResult, 16)
	done := make(chan error, 1)
	go func() { done <- h.Watch(ctx, WatchRequest{OnSync: func(r memhost.SyncResult) { synced <- r }}) }()
	<-synced
	writePage(t, h, facts.Path("max"), "# Max\n\n## species\n- dog\n")
	current := func() []string {
		rows, err := h.idx.Facts().List(context.Background(), factrows.Query{Entity: "max"})
		if err != nil {
			t.Fatal(err)
		}
		var vals []string
		for _, r := range rows {
			vals = append(vals, r.Value)
		}
		return vals
	}
	deadline := time.After(10 * time.Second)
	for !reflect.DeepEqual(current(), []string{"dog"}) {
		select {
		case <-synced:
		case <-deadline:
			t.Fatalf("the watcher did not index the new entity page: %v", current())
		}
	}
	writePage(t, h, facts.Path("max"), "# Max\n\n## species\n- ~~dog~~\n- puppy\n")
	deadline = time.After(10 * time.Second)
	for !reflect.DeepEqual(current(), []string{"puppy"}) {
		select {
		case <-synced:
		case <-deadline:
			t.Fatalf("the watcher did not follow the edit: %v", current())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch returned %v", err)
	}
}

// Fact adds from many goroutines at once (and consolidations, and the
// generator swapped meanwhile) lose nothing: the notebook's lock
// serialises page edits, the generator is an atomic pointer.
func TestFactsConcurrentUse(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "c", Role: "user", Text: "Zed likes chess"})
	gen := &scriptedGenerator{answer: func(string, int) (string, error) {
		return `{"facts": [{"entity": "Yan", "attribute": "likes", "value": "chess", "episode": "e1"}], "relations": []}`, nil
	}}
	var wg sync.WaitGroup
	const n = 12
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "Zed", Attribute: "likes", Value: fmt.Sprintf("game %d", i), Keep: true}); err != nil {
				t.Error(err)
			}
		}()
	}
	for range 3 {
		wg.Add(2)
		go func() { defer wg.Done(); h.impl.SetGenerator(gen) }()
		go func() {
			defer wg.Done()
			_, err := h.Consolidate(ctx, knowledge.ConsolidateRequest{})
			if err != nil && fault.KindOf(err) != fault.Conflict && err != generate.ErrNoGenerator {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := h.Facts(ctx, knowledge.FactsRequest{Entity: "zed"})
	if err != nil {
		t.Fatal(err)
	}
	games := 0
	for _, f := range got.Facts {
		if strings.HasPrefix(f.Value, "game ") {
			games++
		}
	}
	if games != n {
		t.Fatalf("%d of %d facts added at once are current: %+v", games, n, got.Facts)
	}
}
