package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/sessions"
)

func TestSessionAppendAndSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	cfg := config.Default()
	cfg.Timezone = "UTC"
	h, err := Open(ctx, Options{Home: t.TempDir(), Config: cfg, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	turns := []struct{ session, role, text string }{
		{"s1", "user", "I adopted a golden retriever puppy named Max"},
		{"s1", "assistant", "Congratulations on Max!"},
		{"s2", "user", "Max needs his vaccinations at the vet"},
	}
	for i, tt := range turns {
		clk.set(clk.now().Add(24 * time.Hour))
		resp, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: tt.session, Role: tt.role, Text: tt.text, Meta: json.RawMessage(`{"n":1}`)})
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if resp.Turn.ID == "" || resp.Turn.TokenCount == 0 || resp.Turn.Type != "message" {
			t.Errorf("turn %+v", resp.Turn)
		}
	}
	// Durable and in memhost's JSONL format.
	data, err := os.ReadFile(filepath.Join(h.Home(), "sessions", "s1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var first map[string]any
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &first) != nil {
		t.Fatalf("s1.jsonl = %q", data)
	}
	for _, k := range []string{"id", "type", "role", "content", "timestamp", "tokenCount"} {
		if _, ok := first[k]; !ok {
			t.Errorf("turn lacks %q: %v", k, first)
		}
	}
	// Indexed before returning: no sync needed.
	h.editConfig(func(c *config.Config) { c.Memory.Sync.SyncOnSearch = false })
	r, err := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "Max"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 3 {
		t.Fatalf("search Max: %+v", r.Results)
	}
	r, _ = h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "Max", Session: "s2"})
	if len(r.Results) != 1 || r.Results[0].Session != "s2" || r.Results[0].Role != "user" || len(r.Results[0].Turns) != 1 {
		t.Errorf("--session s2: %+v", r.Results)
	}
	r, _ = h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "Max", Since: "2026-03-03", Until: "2026-03-03"})
	if len(r.Results) != 1 || r.Results[0].Snippet != "assistant: Congratulations on Max!" {
		t.Errorf("--since/--until one day: %+v", r.Results)
	}
	if _, err := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "Max", Session: "nope"}); !isKind(err, fault.BadInput, fault.NotFound) {
		t.Errorf("unknown session: %v", err)
	}
	// recall leaves transcripts out unless asked.
	rec, _ := h.Recall(ctx, memhost.RecallRequest{Query: "vaccinations"})
	if len(rec.Results.Sessions) != 0 {
		t.Errorf("recall without --sources sessions: %+v", rec.Results.Sessions)
	}
	rec, _ = h.Recall(ctx, memhost.RecallRequest{Query: "vaccinations", Sources: []string{"notebook", "sessions"}})
	if len(rec.Results.Sessions) != 1 || rec.Results.Sessions[0].Session != "s2" || !strings.HasPrefix(rec.Results.Sessions[0].Heading, "user, 2026-03-04") {
		t.Errorf("recall --sources sessions: %+v", rec.Results.Sessions)
	}
	for _, bad := range []memhost.SessionAppendRequest{
		{Session: "../x", Role: "user", Text: "x"},
		{Session: "s1", Role: "bot", Text: "x"},
		{Session: "s1", Role: "user", Text: "  "},
		{Session: "s1", Role: "user", Text: "x", Meta: json.RawMessage(`[1]`)},
	} {
		if _, err := h.SessionAppend(ctx, bad); err == nil {
			t.Errorf("SessionAppend(%+v) succeeded", bad)
		}
	}
}

func TestMalformedTranscriptLines(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	os.WriteFile(filepath.Join(h.Home(), "sessions", "imported.jsonl"), []byte(
		`{"id":"D1:1","type":"message","role":"user","speaker":"Caroline","content":"I went to a support group yesterday","timestamp":"2023-05-08T13:56:00"}`+"\n"+
			`{"id":"D1:2", broken`+"\n"+
			`{"id":"D1:3","type":"message","role":"assistant","speaker":"Melanie","content":"That sounds `+"\xff"+` brave","timestamp":"2023-05-08T13:57:00"}`+"\n"), 0o644)
	res, err := h.Sync(context.Background(), memhost.SyncRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Problem, "sessions/imported.jsonl:2") || strings.Contains(res.Problems[0].Problem, ":3") {
		t.Errorf("problems: %+v", res.Problems)
	}
	r, err := h.ConversationSearch(context.Background(), memhost.ConversationSearchRequest{Query: "support group brave"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 2 || r.Results[0].Turns[0] == "" {
		t.Fatalf("results: %+v", r.Results)
	}
	for _, res := range r.Results {
		if res.Speaker == "" || !strings.HasPrefix(res.Snippet, res.Speaker+": ") {
			t.Errorf("speaker not kept: %+v", res)
		}
	}
}

// TestCompactionCycle: a flush is due before the limit, counting the
// incoming message (one big message jumping past the threshold, or the
// limit, still gets it), once per compaction cycle; compaction replaces
// older turns in the working context and deletes nothing.
func TestCompactionCycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := openHost(t, t.TempDir(), func(c *config.Config) {
		c.Memory.Compaction = config.Compaction{ContextWindow: 1000, ReserveTokens: 100, SoftThresholdTokens: 200, KeepRecentTokens: 150, FlushPrompt: "flush now"}
	})
	for i := range 6 {
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s", Role: "user", Text: strings.Repeat("word ", 80) + "turn" + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := h.SessionTokens(ctx, memhost.SessionTokensRequest{Session: "s"})
	if err != nil || tok.Turns != 6 || tok.Tokens < 6*100 {
		t.Fatalf("tokens = %+v, %v", tok, err)
	}
	// flushAt = 1000-100-200 = 700. ~606 tokens now: not due; a big
	// incoming message jumps past the threshold and the limit at once.
	if c, _ := h.SessionCheck(ctx, memhost.SessionCheckRequest{Session: "s", Incoming: 0}); c.FlushDue || c.FlushAt != 700 || c.CompactAt != 900 {
		t.Errorf("check without incoming: %+v", c)
	}
	c, err := h.SessionCheck(ctx, memhost.SessionCheckRequest{Session: "s", Incoming: 500})
	if err != nil || !c.FlushDue || !c.CompactionDue || c.Prompt != "flush now" {
		t.Fatalf("check with a big incoming message: %+v, %v", c, err)
	}
	if c, _ := h.SessionCheck(ctx, memhost.SessionCheckRequest{Session: "s", Incoming: 500}); c.FlushDue || !c.AlreadyFlushed {
		t.Errorf("second check in the same cycle: %+v", c)
	}
	st, _ := h.Status(ctx, memhost.StatusRequest{})
	if st.Flushes != 1 || st.LastFlush == nil || st.LastFlush.Session != "s" {
		t.Errorf("status flushes: %+v", st)
	}
	comp, err := h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "s", Summary: "The user repeated a word many times."})
	if err != nil || comp.RemovedCount == 0 || comp.RemovedCount == 6 || comp.FirstTurn == "" {
		t.Fatalf("compact = %+v, %v", comp, err)
	}
	after, _ := h.SessionTokens(ctx, memhost.SessionTokensRequest{Session: "s"})
	if after.Tokens >= tok.Tokens || after.Compactions != 1 {
		t.Errorf("after compaction: %+v (before %+v)", after, tok)
	}
	// Nothing deleted: every turn is still in the file and searchable.
	data, _ := os.ReadFile(filepath.Join(h.Home(), "sessions", "s.jsonl"))
	if n := strings.Count(string(data), "\n"); n != 7 {
		t.Errorf("transcript has %d lines, want 6 turns + 1 compaction", n)
	}
	h.editConfig(func(c *config.Config) { c.Memory.Search.MinScore = 0 })
	if r, _ := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "turna"}); len(r.Results) == 0 {
		t.Error("a compacted turn is no longer searchable")
	}
	if r, _ := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "repeated"}); len(r.Results) != 1 || r.Results[0].Role != "" {
		t.Errorf("the summary is not searchable as one: %+v", r.Results)
	}
	// A new cycle: the flush can be due again.
	if c, _ := h.SessionCheck(ctx, memhost.SessionCheckRequest{Session: "s", Incoming: 900}); !c.FlushDue {
		t.Errorf("flush after a compaction: %+v", c)
	}
	if _, err := h.SessionCheck(ctx, memhost.SessionCheckRequest{Session: "nope", Incoming: 0}); !isKind(err, fault.BadInput, fault.NotFound) {
		t.Errorf("unknown session: %v", err)
	}
}

// TestFlushByMessages: a chat of short messages, far from the token
// threshold, gets a flush every flushEveryMessages messages, counted from
// the last flush.
func TestFlushByMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	cfg := config.Default()
	cfg.Memory.Compaction.FlushEveryMessages = 4
	h, err := Open(ctx, Options{Home: t.TempDir(), Config: cfg, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	say := func() {
		clk.set(clk.now().Add(time.Minute))
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "chat", Role: "user", Text: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(wantDue bool, wantMessages int) {
		t.Helper()
		clk.set(clk.now().Add(time.Second))
		c, err := h.SessionCheck(ctx, memhost.SessionCheckRequest{Session: "chat", Incoming: 1})
		if err != nil || c.FlushDue != wantDue || c.Messages != wantMessages || c.FlushEvery != 4 || c.Total >= c.FlushAt {
			t.Fatalf("check: %+v, %v; want due %v with %d messages", c, err, wantDue, wantMessages)
		}
	}
	say()
	say()
	check(false, 3) // two and the incoming one
	say()
	check(true, 4)
	say()
	check(false, 2) // one since the flush, and the incoming one
	say()
	say()
	check(true, 4)
}

func TestIngestClaudeCode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	src := filepath.Join(t.TempDir(), "4f35e220-c435.jsonl")
	data, _ := os.ReadFile("testdata/claude/4f35e220-c435.jsonl")
	os.WriteFile(src, data, 0o644)
	r, err := h.Ingest(ctx, memhost.IngestRequest{Paths: []string{src}})
	if err != nil {
		t.Fatal(err)
	}
	f := r.Files[0]
	// u1 text; a1 text + tool call; u2 tool result. Summary, snapshot
	// and thinking left out; one malformed line reported.
	if f.Format != sessions.FormatClaudeCode || f.Session != "claude-4f35e220-c435" || f.Added != 4 || len(f.Problems) != 1 || !strings.Contains(f.Problems[0], ":5:") {
		t.Fatalf("ingest = %+v", f)
	}
	if r, _ := h.Ingest(ctx, memhost.IngestRequest{Paths: []string{src}}); r.Files[0].Added != 0 || r.Files[0].Known != 4 {
		t.Errorf("second ingest = %+v", r.Files[0])
	}
	// The file grows: only the new turn is added.
	os.WriteFile(src, append(data, []byte(`{"sessionId":"4f35e220-c435","type":"user","message":{"role":"user","content":"Thanks, now deploy it"},"uuid":"u3","timestamp":"2025-05-26T07:30:00.000Z"}`+"\n")...), 0o644)
	if r, _ := h.Ingest(ctx, memhost.IngestRequest{Paths: []string{src}}); r.Files[0].Added != 1 {
		t.Errorf("grown file = %+v", r.Files[0])
	}
	h.editConfig(func(c *config.Config) { c.Memory.Search.MinScore = 0 })
	for q, want := range map[string]string{"staging database": "user", "Write config": "tool", "deploy": "user", "private": ""} {
		res, err := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: q, Session: "claude-4f35e220-c435"})
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			if len(res.Results) != 0 {
				t.Errorf("%q: thinking was indexed: %+v", q, res.Results)
			}
			continue
		}
		if len(res.Results) == 0 || res.Results[0].Role != want {
			t.Errorf("%q: %+v, want a %s turn first", q, res.Results, want)
		}
	}
}

func TestIngestMemhostFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	r, err := h.Ingest(ctx, memhost.IngestRequest{Paths: []string{"eval/testdata/sessions/c1/session_01.jsonl"}})
	if err != nil || r.Files[0].Format != sessions.FormatMemhost || r.Files[0].Session != "session_01" || r.Files[0].Added != 3 {
		t.Fatalf("ingest = %+v, %v", r, err)
	}
	if _, err := h.Ingest(ctx, memhost.IngestRequest{Paths: []string{"testdata/nope.jsonl"}}); !isKind(err, fault.BadInput, fault.NotFound) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := h.Ingest(ctx, memhost.IngestRequest{Paths: []string{"x"}, Format: "yaml"}); !isKind(err, fault.BadInput, fault.NotFound) {
		t.Errorf("bad format: %v", err)
	}
}

// TestHooks feeds recorded Claude Code hook payloads.
func TestHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	writePage(t, h, "reference/contacts.md", "# Contacts\n\n## Sarah\n- 555-1234\n")
	transcript := filepath.Join(t.TempDir(), "4f35e220-c435.jsonl")
	data, _ := os.ReadFile("testdata/claude/4f35e220-c435.jsonl")
	os.WriteFile(transcript, data, 0o644)
	payload := func(name string) []byte {
		b, err := os.ReadFile("testdata/hooks/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		return []byte(strings.ReplaceAll(string(b), "TRANSCRIPT", transcript))
	}
	out, err := hook(ctx, h, memhost.HookSessionStart, payload("session-start"))
	if err != nil {
		t.Fatal(err)
	}
	var start struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if json.Unmarshal(out, &start) != nil || start.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(start.HookSpecificOutput.AdditionalContext, "555-1234") {
		t.Errorf("session-start answer: %s", out)
	}
	out, err = hook(ctx, h, memhost.HookPrompt, payload("prompt"))
	if err != nil {
		t.Fatal(err)
	}
	if json.Unmarshal(out, &start) != nil || start.HookSpecificOutput.HookEventName != "UserPromptSubmit" ||
		!strings.Contains(start.HookSpecificOutput.AdditionalContext, "# Memory context") || !strings.Contains(start.HookSpecificOutput.AdditionalContext, "555-1234") {
		t.Errorf("prompt answer: %s", out)
	}
	for _, p := range []string{`{"session_id": "x", "prompt": "?!"}`, `{"session_id": "x", "prompt": " "}`, `{"session_id": "x"}`} {
		if out, err := hook(ctx, h, memhost.HookPrompt, []byte(p)); err != nil || string(out) != `{"suppressOutput":true}` {
			t.Errorf("a prompt with no searchable word, or none (%s): %s, %v", p, out, err)
		}
	}
	out, err = hook(ctx, h, memhost.HookPreCompact, payload("pre-compact"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"systemMessage":"Session nearing compaction.`) {
		t.Errorf("pre-compact answer: %s", out)
	}
	st, _ := h.Status(ctx, memhost.StatusRequest{})
	if st.Flushes != 1 || st.LastFlush.Session != "claude-4f35e220-c435" || st.LastFlush.Tokens == 0 {
		t.Errorf("flush receipt: %+v", st.LastFlush)
	}
	h.editConfig(func(c *config.Config) { c.Memory.Sync.SyncOnSearch = false })
	if r, _ := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "staging database"}); len(r.Results) == 0 {
		t.Error("pre-compact did not store the transcript")
	}
	os.WriteFile(transcript, append(data, []byte(`{"sessionId":"4f35e220-c435","type":"user","message":{"role":"user","content":"one more thing about kiwis"},"uuid":"u9","timestamp":"2025-05-26T08:00:00.000Z"}`+"\n")...), 0o644)
	if _, err := hook(ctx, h, memhost.HookSessionEnd, payload("session-end")); err != nil {
		t.Fatal(err)
	}
	if r, _ := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "kiwis"}); len(r.Results) != 1 {
		t.Errorf("session-end did not store the last turn: %+v", r.Results)
	}
	// Stop fires after every assistant reply: the reply is stored at once,
	// and the answer never blocks (no "decision") or shows output.
	grown, _ := os.ReadFile(transcript)
	os.WriteFile(transcript, append(grown, []byte(`{"sessionId":"4f35e220-c435","type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Noted: the kiwis go in the fruit bowl."}]},"uuid":"a9","timestamp":"2025-05-26T08:00:05.000Z"}`+"\n")...), 0o644)
	out, err = hook(ctx, h, memhost.HookStop, payload("stop"))
	if err != nil || string(out) != `{"suppressOutput":true}` {
		t.Errorf("stop answer: %s, %v", out, err)
	}
	if r, _ := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "fruit bowl"}); len(r.Results) != 1 || r.Results[0].Role != "assistant" {
		t.Errorf("stop did not store the reply: %+v", r.Results)
	}
	for _, bad := range []struct{ event, payload string }{
		{memhost.HookSessionEnd, `{"session_id":"x","hook_event_name":"SessionEnd"}`},
		{memhost.HookPreCompact, `not json`},
		{"lunch", `{}`},
		{memhost.HookSessionEnd, `{"transcript_path":"relative.jsonl"}`},
	} {
		if _, err := hook(ctx, h, bad.event, []byte(bad.payload)); !isKind(err, fault.BadInput, fault.NotFound) {
			t.Errorf("Hook(%s, %s): %v", bad.event, bad.payload, err)
		}
	}
}

// TestTranscriptAppendsAreIndexedIncrementally: a grown transcript has
// only its new lines chunked and written; a rewritten one is redone whole.
func TestTranscriptAppendsAreIndexedIncrementally(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	path := filepath.Join(h.Home(), "sessions", "long.jsonl")
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, `{"id":"t%d","type":"message","role":"user","content":"turn number %d about topic%d"}`+"\n", i, i, i)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	if res, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil || res.Chunks != 500 {
		t.Fatalf("first sync: %+v, %v", res, err)
	}
	for i := 500; i < 503; i++ {
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "long", Role: "assistant", Text: fmt.Sprintf("appended reply %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := h.idx.Stats(ctx)
	if st.Chunks != 503 {
		t.Errorf("chunks after three appends: %d, want 503", st.Chunks)
	}
	h.editConfig(func(c *config.Config) { c.Memory.Search.MinScore = 0 })
	// The turn after it is found too, by its context, and ranked below.
	r, _ := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "topic7"})
	if len(r.Results) != 2 || r.Results[0].Lines.Start != 8 || r.Results[1].Lines.Start != 9 || r.Results[1].Score >= r.Results[0].Score {
		t.Errorf("an early turn: %+v", r.Results)
	}
	r, _ = h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "appended reply"})
	if len(r.Results) != 3 || r.Results[0].Lines.Start < 501 {
		t.Errorf("appended turns: %+v", r.Results)
	}
	// One more line written by another program: only it is indexed.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	f.WriteString(`{"id":"x1","type":"message","role":"user","content":"late addition kiwi"}` + "\n")
	f.Close()
	if res, _ := h.Sync(ctx, memhost.SyncRequest{}); res.Chunks != 1 {
		t.Errorf("sync after one appended line wrote %d chunks", res.Chunks)
	}
	// Rewritten (not appended): everything is redone.
	os.WriteFile(path, []byte(`{"id":"only","type":"message","role":"user","content":"fresh start"}`+"\n"), 0o644)
	if res, _ := h.Sync(ctx, memhost.SyncRequest{}); res.Chunks != 1 {
		t.Errorf("sync after a rewrite wrote %d chunks", res.Chunks)
	}
	if st, _ := h.idx.Stats(ctx); st.Chunks != 1 {
		t.Errorf("chunks after a rewrite: %d, want 1", st.Chunks)
	}
}

// TestReplyFoundByItsQuestion: a reply is found by the words of the turn
// before it, ranked below that turn, and shows it as its context.
func TestReplyFoundByItsQuestion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	data, err := os.ReadFile(filepath.Join("sessions", "turnchunk", "testdata", "context.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.Home(), "sessions", "trip.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "hiking"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 2 || r.Results[0].Turns[0] != "D1:1" || r.Results[0].Context != "" ||
		r.Results[1].Turns[0] != "D1:2" || r.Results[1].Context != "Caroline: Did you go hiking at the lake last weekend?" {
		t.Errorf("results: %+v", r.Results)
	}
	rec, err := h.Recall(ctx, memhost.RecallRequest{Query: "hiking", Sources: []string{SourceSessions}})
	if err != nil || len(rec.Results.Sessions) != 2 || rec.Results.Sessions[1].Context != r.Results[1].Context {
		t.Errorf("recall --sources sessions: %+v, %v", rec.Results.Sessions, err)
	}
}

// hook runs a hook and returns its output.
func hook(ctx context.Context, h *Host, event string, payload []byte) ([]byte, error) {
	r, err := h.Hook(ctx, memhost.HookRequest{Event: event, Payload: payload})
	return r.Output, err
}

// isKind reports whether err is of one of kinds.
func isKind(err error, kinds ...fault.Kind) bool {
	return slices.Contains(kinds, fault.KindOf(err))
}

// TestSessionAppendRetriedOnce: an append sent again with the same turn
// id (the server died after writing, before answering, and the command
// ran again in-process) is stored once; the crash harness saw it twice.
func TestSessionAppendRetriedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	req := memhost.SessionAppendRequest{ID: "a1b2c3d4e5f6", Session: "s", Role: "user", Text: "the ferry leaves at nine"}
	first, err := h.SessionAppend(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s", Role: "assistant", Text: "noted"}); err != nil {
		t.Fatal(err)
	}
	again, err := h.SessionAppend(ctx, req)
	if err != nil || !reflect.DeepEqual(again.Turn, first.Turn) {
		t.Fatalf("retry = %+v, %v; want the first turn %+v", again.Turn, err, first.Turn)
	}
	tr, err := h.sessions.Read("s")
	if err != nil || len(tr.Turns) != 2 {
		t.Fatalf("%d turns, %v; want 2", len(tr.Turns), err)
	}
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{ID: "../x", Session: "s", Role: "user", Text: "x"}); fault.KindOf(err) != fault.BadInput {
		t.Errorf("bad id: %v", err)
	}
}

// TestNamedSpeakerLifted: a question naming one speaker finds that
// speaker's turn first, where the words alone rank the other's first;
// one naming both speakers keeps the words' order.
func TestNamedSpeakerLifted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	data, err := os.ReadFile(filepath.Join("testdata", "speakers.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(h.Home(), "sessions", "paint.jsonl"), data, 0o644)
	first := func(q string) string {
		t.Helper()
		r, err := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: q})
		if err != nil || len(r.Results) == 0 {
			t.Fatalf("%q: %+v, %v", q, r, err)
		}
		return r.Results[0].Speaker + " " + r.Results[0].Turns[0]
	}
	if got := first("what did they paint"); got != "Ben T1:2" {
		t.Fatalf("the words alone rank %s first, want Ben T1:2 (the fixture no longer tests the lift)", got)
	}
	if got := first("what did Anna paint"); got != "Anna T1:5" {
		t.Errorf("named Anna: %s first, want Anna T1:5", got)
	}
	if got := first("what did Anna and Ben paint"); got != "Ben T1:2" {
		t.Errorf("named both: %s first, want the words' order (Ben T1:2)", got)
	}
}
