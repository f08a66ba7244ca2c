package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/knowledge"
)

// TestHostConcurrentUse drives one Host from many goroutines through every
// operation at once, with the real hello plugin, a running watcher (and so
// the embedding worker), an editor writing pages behind memhost's back, and
// the provider switched between two models meanwhile. Run with -race: the
// package comment's claim that a Host may be shared rests on it. Afterwards
// every write must be indexed exactly once and findable.
func TestHostConcurrentUse(t *testing.T) {
	h := semanticHost(t, func(c *config.Config) {
		c.Memory.Embedding.Plugin = "hello"
		c.Memory.Sync.WatchDebounceMs = 50
		c.Memory.Compaction.KeepRecentTokens = 0 // every compaction has turns to cover
	}, "hello")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	watchCtx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan error, 1)
	go func() {
		watchDone <- h.Watch(watchCtx, WatchRequest{OnSync: func(memhost.SyncResult) {}, OnEmbed: func(memhost.EmbedResult) {}})
	}()

	// Every change published is named by the table: a write operation's
	// name (or the dashboard editor's and the watcher's writes, which are
	// page writes).
	writes := map[string]bool{}
	for _, op := range api.Ops {
		if op.Info().Write {
			writes[op.Info().Name] = true
		}
	}
	var published sync.Map
	defer h.Subscribe(func(c memhost.Change) {
		published.Store(c.Op, true)
		if !writes[c.Op] {
			t.Errorf("a change named %q, not a write of the operation table: %+v", c.Op, c)
		}
	})()

	const rounds = 6
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	// tolerated: a search may answer keyword-only, and an operation may
	// meet a provider restarting after a switch; nothing else may fail.
	called := map[string]bool{}
	check := func(op string, err error) {
		mu.Lock()
		called[op] = true
		mu.Unlock()
		if err == nil || fault.KindOf(err) == fault.Unavailable {
			return
		}
		mu.Lock()
		errs = append(errs, fmt.Errorf("%s: %w", op, err))
		mu.Unlock()
	}
	run := func(fn func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				fn(i)
			}
		}()
	}
	run(func(i int) {
		_, err := h.Remember(ctx, memhost.RememberRequest{Text: fmt.Sprintf("the zebra number %d eats grass at the zoo", i)})
		check("remember", err)
	})
	run(func(i int) {
		_, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/giraffes.md", Text: fmt.Sprintf("giraffe fact %d", i), Section: "Facts"})
		check("write", err)
	})
	run(func(i int) {
		_, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: fmt.Sprintf("met the penguin keeper, visit %d", i)})
		check("daily-log", err)
	})
	run(func(i int) {
		p := filepath.Join(h.NotebookDir(), "knowledge", fmt.Sprintf("otter-%d.md", i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("# Otter %d\nThe otter number %d swims.\n", i, i)), 0o644); err != nil {
			check("editor", err)
		}
	})
	run(func(i int) {
		rel := fmt.Sprintf("lists/tmp-%d.md", i)
		_, err := h.Write(ctx, memhost.WriteRequest{Path: rel, Text: "temporary"})
		check("write tmp", err)
		_, err = h.Remove(ctx, memhost.RemoveRequest{Path: rel})
		check("rm", err)
	})
	run(func(i int) {
		// The editor's save, conditional on the page it read.
		rel := fmt.Sprintf("lists/edited-%d.md", i)
		_, err := h.SavePage(ctx, memhost.SavePageRequest{Path: rel, Text: "# Edited\nfirst"})
		check("page/save", err)
		p, err := h.Page(ctx, memhost.PageRequest{Path: rel})
		check("page", err)
		_, err = h.SavePage(ctx, memhost.SavePageRequest{Path: rel, Text: "# Edited\nsecond", BaseHash: p.Hash})
		check("page/save", err)
	})
	for s := range 3 {
		run(func(i int) {
			_, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: fmt.Sprintf("chat-%d", s), Role: "user", Text: fmt.Sprintf("the kangaroo jumped %d times", i)})
			check("session/append", err)
		})
	}
	run(func(i int) {
		_, err := h.SessionTokens(ctx, memhost.SessionTokensRequest{Session: "chat-0"})
		if fault.KindOf(err) != fault.NotFound { // not created yet is fine
			check("session tokens", err)
		}
		_, err = h.SessionCheck(ctx, memhost.SessionCheckRequest{Session: "chat-0", Incoming: 10})
		if fault.KindOf(err) != fault.NotFound {
			check("session check", err)
		}
	})
	run(func(i int) {
		_, err := h.Recall(ctx, memhost.RecallRequest{Query: "zebra zoo"})
		check("recall", err)
		_, err = h.Recall(ctx, memhost.RecallRequest{Query: "kangaroo", Sources: []string{SourceSessions, SourceNotebook}})
		check("recall sessions", err)
		_, err = h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "kangaroo jumped"})
		check("conversation search", err)
	})
	run(func(i int) {
		_, err := h.Get(ctx, memhost.GetRequest{Path: "reference/contacts.md"})
		if fault.KindOf(err) != fault.NotFound {
			check("get", err)
		}
		_, err = h.Context(ctx, memhost.ContextRequest{})
		check("context", err)
		_, err = h.Status(ctx, memhost.StatusRequest{})
		check("status", err)
		_, err = h.Files(ctx, memhost.FilesRequest{})
		check("files", err)
		_, err = h.Models(ctx, memhost.ModelsRequest{})
		check("models", err)
		_ = h.Config()
	})
	run(func(i int) {
		_, err := h.Sync(ctx, memhost.SyncRequest{})
		check("sync", err)
		_, err = h.Embed(ctx, memhost.EmbedRequest{Budget: 200 * time.Millisecond})
		check("embed", err)
		if i == rounds/2 {
			_, err = h.Rebuild(ctx, memhost.RebuildRequest{})
			check("rebuild", err)
		}
	})
	run(func(i int) {
		dims := []string{"64", "32"}[i%2]
		_, err := h.UsePlugin(ctx, memhost.UsePluginRequest{Name: "hello", Set: map[string]string{"dimensions": dims}})
		check("plugins/use", err)
		_, err = h.PluginStatus(ctx, memhost.PluginStatusRequest{})
		check("plugin status", err)
		_, err = h.Plugins(ctx, memhost.PluginsRequest{})
		check("plugins", err)
	})
	run(func(i int) {
		_, err := h.Hook(ctx, memhost.HookRequest{Event: memhost.HookSessionStart, Payload: []byte(`{"session_id":"x"}`)})
		check("hook", err)
	})
	run(func(i int) {
		_, err := h.Episodes(ctx, memhost.EpisodesRequest{})
		check("episodes", err)
	})
	// The other writes of the operation table, with the notebook, the
	// transcripts and the index busy with the ones above.
	exportTo := t.TempDir()
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/mover-0.md", Text: "a page that moves"}); err != nil {
		t.Fatal(err)
	}
	run(func(i int) {
		_, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: fmt.Sprintf("Otter %d", i%2), Attribute: "likes", Value: fmt.Sprintf("fish %d", i)})
		check("fact/add", err)
		_, err = h.FactForget(ctx, knowledge.FactForgetRequest{Entity: fmt.Sprintf("Otter %d", i%2), Attribute: "likes"})
		check("fact/forget", err)
		_, err = h.Move(ctx, memhost.MoveRequest{From: fmt.Sprintf("knowledge/mover-%d.md", i), To: fmt.Sprintf("knowledge/mover-%d.md", i+1)})
		check("mv", err)
		_, err = h.Rollup(ctx, memhost.RollupRequest{Period: "week"})
		check("rollup", err)
		_, err = h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 3650})
		check("prune", err)
		_, err = h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "compacted", Role: "user", Text: fmt.Sprintf("turn %d to compact", i)})
		check("session/append", err)
		_, err = h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "compacted", Summary: fmt.Sprintf("summary %d", i)})
		check("session/compact", err)
		_, err = h.Consolidate(ctx, knowledge.ConsolidateRequest{}) // no generator: unavailable
		check("consolidate", err)
		_, err = h.SkillLearn(ctx, memhost.SkillLearnRequest{})
		check("skills/learn", err)
		if _, err = h.SkillReview(ctx, memhost.SkillReviewRequest{Slug: "read-edit", Status: memhost.SkillAccepted}); fault.KindOf(err) == fault.NotFound {
			err = nil // no page yet: the transcripts here run no tools
		}
		check("skills/review", err)
		_, err = h.Init(ctx, memhost.InitRequest{})
		check("init", err)
		if _, err = h.RemoveModel(ctx, memhost.RemoveModelRequest{Name: "none.gguf"}); fault.KindOf(err) == fault.NotFound {
			err = nil
		}
		check("models/rm", err)
		_, err = h.Export(ctx, memhost.ExportRequest{Path: filepath.Join(exportTo, fmt.Sprintf("home-%d.tar.gz", i))})
		check("export", err)
		_, err = h.SecretsRedact(ctx, memhost.SecretsRedactRequest{})
		check("secrets/redact", err)
		_, err = h.SecretsScan(ctx, memhost.SecretsScanRequest{})
		check("secrets/scan", err)
	})
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	// Every write of the table ran, but those that need what this home
	// has not: a git remote (git/init, git/sync: TestFederation* and
	// TestLoopReportsIndexPaths run them beside writes), a model server
	// (models/pull: modelstore's tests), a transcript file or an archive
	// of another home (session/ingest, import: their own tests).
	elsewhere := map[string]bool{"git/init": true, "git/sync": true, "models/pull": true, "session/ingest": true, "import": true}
	for _, op := range api.Ops {
		if in := op.Info(); in.Write && !called[in.Name] && !elsewhere[in.Name] {
			t.Errorf("the write %s was not run", in.Name)
		}
	}
	for _, name := range []string{"remember", "write", "daily-log", "rm", "session/append", "session/compact", "fact/add", "fact/forget", "mv", "page/save", "plugins/use"} {
		if _, ok := published.Load(name); !ok {
			t.Errorf("%s ran and published no change", name)
		}
	}

	// Settle: the watcher indexes the editor's pages, the worker embeds.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := h.Status(ctx, memhost.StatusRequest{})
		if err == nil && st.Stale == 0 && st.Pending == 0 && st.Mode == memhost.ModeHybrid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never settled: %+v, %v", st, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	stopWatch()
	if err := <-watchDone; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("watch: %v", err)
	}
	if got := h.Config().Memory.Embedding.Options["hello"]["dimensions"]; got != "32" {
		t.Errorf("options after the last switch: dimensions %q, want 32", got)
	}

	// Every write indexed once and found.
	for i := range rounds {
		otter := fmt.Sprintf("knowledge/otter-%d.md", i)
		if got := found(t, h, fmt.Sprintf("otter number %d swims", i)); !slices.Contains(got, otter) {
			t.Errorf("%s not found: %v", otter, got)
		}
		if page := readPage(t, h, "knowledge/facts.md"); strings.Count(page, fmt.Sprintf("zebra number %d ", i)) != 1 {
			t.Errorf("remembered zebra %d is on the page %d times", i, strings.Count(page, fmt.Sprintf("zebra number %d ", i)))
		}
	}
	for s := range 3 {
		tok, err := h.SessionTokens(ctx, memhost.SessionTokensRequest{Session: fmt.Sprintf("chat-%d", s)})
		if err != nil || tok.Turns != rounds {
			t.Errorf("chat-%d: %+v, %v; want %d turns", s, tok, err, rounds)
		}
	}
	files, err := h.Files(ctx, memhost.FilesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files.Files {
		if f.Path == "sessions/chat-0.jsonl" && f.Chunks != rounds {
			t.Errorf("%s has %d chunks for %d turns", f.Path, f.Chunks, rounds)
		}
		if f.Stale {
			t.Errorf("%s is stale after settling", f.Path)
		}
	}
}

// TestConcurrentAppendsAcrossHosts: writers in several processes (here
// several Hosts on one home, each with its own indexer lock) append to one
// session at once; each turn is indexed exactly once. Before Apply
// re-checked a grown transcript's file row inside its transaction, 20
// appenders left 33 chunks for 20 turns.
func TestConcurrentAppendsAcrossHosts(t *testing.T) {
	home := t.TempDir()
	hosts := make([]*Host, 4)
	for i := range hosts {
		hosts[i] = openHost(t, home, nil)
	}
	ctx := context.Background()
	const turns = 20
	var wg sync.WaitGroup
	errs := make(chan error, turns)
	for i := range turns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := hosts[i%len(hosts)].SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s", Role: "user", Text: fmt.Sprintf("turn number %d", i)})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := hosts[0].Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	files, err := hosts[0].idx.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := files["sessions/s.jsonl"].Chunks; got != turns {
		t.Fatalf("%d chunks for %d turns", got, turns)
	}
}
