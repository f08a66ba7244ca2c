package conversations

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/chunk"
	"github.com/memhost/memhost/host/sessions"
)

// Working assembles a session's working memory within the
// budgets of memory.context.working: the notebook's block, the memory
// context for req.Query (the session's last user turn when it is empty;
// none when there is neither), the last compaction's summary, then the
// most recent turns that fit, oldest first. A compaction is due when the
// turns since the last one hold more than compactAt tokens.
func (cs *SessionService) Working(ctx context.Context, req memhost.ContextRequest) (memhost.ContextResponse, error) {
	w := cs.k.Config().Memory.Context.Working
	// The memory context's settings are checked before anything is read:
	// its query (the last user turn) may have no searchable word, which
	// leaves the memory out, but a bad setting is the caller's mistake.
	if err := cs.k.CheckContext(req); err != nil {
		return memhost.ContextResponse{}, err
	}
	tr, err := cs.k.Sessions().Read(req.Session)
	if err != nil {
		return memhost.ContextResponse{}, err
	}
	resp, err := cs.k.Context(ctx, memhost.ContextRequest{})
	if err != nil {
		return resp, err
	}
	wc := &memhost.WorkingContext{Session: req.Session, Turns: []memhost.Turn{}}
	system := clip(resp.Text, w.SystemTokens)
	wc.SystemTokens = chunk.EstimateTokens(system)

	var recent []memhost.Turn
	for _, t := range tr.Working() {
		if t.Type == "compaction" {
			wc.Checkpoint = clip(t.Content, w.CheckpointTokens)
			continue
		}
		recent = append(recent, t)
	}
	all := 0
	for _, t := range recent {
		all += sessions.TurnTokens(t)
	}
	wc.CompactionDue = all > w.CompactAt
	start := len(recent)
	for start > 0 && wc.TurnTokens+sessions.TurnTokens(recent[start-1]) <= w.RecentTokens {
		start--
		wc.TurnTokens += sessions.TurnTokens(recent[start])
	}
	wc.Turns, wc.Dropped = append(wc.Turns, recent[start:]...), start

	query := req.Query
	for i := len(recent) - 1; i >= 0 && query == ""; i-- {
		if recent[i].Role == "user" && (recent[i].Type == "" || recent[i].Type == "message") {
			query = recent[i].Content
		}
	}
	var b strings.Builder
	b.WriteString(system)
	if strings.TrimSpace(query) != "" {
		mreq := req
		mreq.Session, mreq.Query, mreq.NotSession = "", query, req.Session
		mem, err := cs.k.Context(ctx, mreq)
		if err != nil && fault.FieldOf(err) != "query" { // a last turn with no searchable word brings no memory
			return resp, err
		}
		if err == nil {
			resp.Mode, resp.Reason, resp.Items, resp.Tokens, resp.Budget, resp.Left = mem.Mode, mem.Reason, mem.Items, mem.Tokens, mem.Budget, mem.Left
			b.WriteString("\n" + mem.Text)
		}
	}
	if wc.Checkpoint != "" {
		b.WriteString("\n# Summary of earlier turns\n\n" + wc.Checkpoint + "\n")
	}
	b.WriteString("\n# Recent turns\n")
	if wc.Dropped > 0 {
		fmt.Fprintf(&b, "\n(%d earlier turns left out)\n", wc.Dropped)
	}
	for _, t := range wc.Turns {
		who := t.Role
		if t.Speaker != "" {
			who += " " + t.Speaker
		}
		when := t.Timestamp
		if at, ok := sessions.TurnTime(t.Timestamp, cs.k.Location()); ok {
			when = at.In(cs.k.Location()).Format("2006-01-02 15:04")
		}
		fmt.Fprintf(&b, "\n[%s, %s] %s\n", when, who, t.Content)
	}
	resp.Text = b.String()
	wc.Tokens = chunk.EstimateTokens(resp.Text)
	resp.Working = wc
	return resp, nil
}

// clip cuts text to about tokens tokens, on a line when it can, saying so.
func clip(text string, tokens int) string {
	if chunk.EstimateTokens(text) <= tokens {
		return text
	}
	const mark = "\n[…cut to fit the budget]\n"
	cut := text
	for chunk.EstimateTokens(cut)+chunk.EstimateTokens(mark) > tokens && cut != "" {
		n := len(cut) * 9 / 10
		for n > 0 && !utf8.RuneStart(cut[n]) {
			n--
		}
		cut = cut[:n]
	}
	if i := strings.LastIndexByte(cut, '\n'); i > len(cut)/2 {
		cut = cut[:i]
	}
	return cut + mark
}
