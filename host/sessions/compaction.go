package sessions

import (
	"context"
	"encoding/json"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/chunk"
	"github.com/memhost/memhost/host/config"
)

// TurnTokens is a turn's tokens: its own count when it has one, else the
// estimate of its content.
func TurnTokens(t memhost.Turn) int {
	if t.TokenCount > 0 {
		return t.TokenCount
	}
	return chunk.EstimateTokens(t.Content)
}

// Tokens estimates a session's working context.
func (s *Store) Tokens(session string) (memhost.SessionTokens, error) {
	tr, err := s.Read(session)
	if err != nil {
		return memhost.SessionTokens{}, err
	}
	resp := memhost.SessionTokens{Session: session, Compactions: tr.Compactions, LastCompacted: tr.LastCompacted}
	for _, t := range tr.Working() {
		resp.Tokens += TurnTokens(t)
		if t.Type != "compaction" {
			resp.Turns++
		}
	}
	return resp, nil
}

// Check counts the working context with the incoming message, so a single
// large message that jumps past the soft threshold, or past the limit
// itself, still gets its flush first. A flush is due once per compaction
// cycle; when it is, the receipt is recorded and the prompt returned for
// the agent.
func (s *Store) Check(session string, incoming int, c config.Compaction) (memhost.SessionCheck, error) {
	if incoming < 0 {
		return memhost.SessionCheck{}, fault.BadInputf("incoming", "incoming tokens must not be negative")
	}
	tok, err := s.Tokens(session)
	if err != nil {
		return memhost.SessionCheck{}, err
	}
	resp := memhost.SessionCheck{Session: session, Tokens: tok.Tokens, Incoming: incoming, Total: tok.Tokens + incoming,
		CompactAt: c.ContextWindow - c.ReserveTokens}
	resp.FlushAt = resp.CompactAt - c.SoftThresholdTokens
	resp.CompactionDue = resp.Total >= resp.CompactAt
	last, err := s.lastFlush(session)
	if err != nil {
		return resp, err
	}
	resp.AlreadyFlushed = last != "" && !before(last, tok.LastCompacted)
	resp.Messages, resp.FlushEvery = tok.Turns, c.FlushEveryMessages
	if last != "" && resp.AlreadyFlushed {
		if resp.Messages, err = s.turnsSince(session, last); err != nil {
			return resp, err
		}
	}
	if incoming > 0 {
		resp.Messages++
	}
	// Two triggers: the tokens, once per compaction cycle, and the
	// messages since the last flush.
	byTokens := resp.Total >= resp.FlushAt && !resp.AlreadyFlushed
	byMessages := resp.FlushEvery > 0 && resp.Messages >= resp.FlushEvery
	if byTokens || byMessages {
		resp.FlushDue, resp.Prompt = true, c.FlushPrompt
		err = s.AddReceipt(session, resp.Total)
	}
	return resp, err
}

// turnsSince counts the working context's turns (not compactions) after
// the time since.
func (s *Store) turnsSince(session, since string) (int, error) {
	tr, err := s.Read(session)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range tr.Working() {
		if t.Type != "compaction" && before(since, t.Timestamp) {
			n++
		}
	}
	return n, nil
}

// Compact appends a compaction entry holding summary (already cleaned):
// the summary replaces, in the agent's working context, the turns since
// the last compaction except the most recent keepRecent tokens. The turns
// themselves stay in the transcript and stay searchable; nothing is
// deleted. id, when given, is the entry's: a compaction run again with
// the id of one in the transcript writes nothing and answers as it did.
func (s *Store) Compact(ctx context.Context, session, summary string, keepRecent int, id string) (memhost.SessionCompactResponse, error) {
	if id != "" {
		if done, ok, err := s.compacted(session, id); err != nil || ok {
			return done, err
		}
	}
	p, err := s.ToCompact(session, keepRecent)
	if err != nil {
		return memhost.SessionCompactResponse{}, err
	}
	removed, kept := p.Turns, p.KeptTokens
	resp := memhost.SessionCompactResponse{Session: session, FirstTurn: removed[0].ID, LastTurn: removed[len(removed)-1].ID, RemovedCount: len(removed), KeptTokens: kept}
	meta, _ := json.Marshal(compactionMeta{RemovedCount: len(removed), FirstTurn: resp.FirstTurn, LastTurn: resp.LastTurn, KeptTokens: kept})
	a, err := s.Append(ctx, session, memhost.Turn{ID: id, Type: "compaction", Content: summary, Metadata: meta})
	resp.Turn = a.Turn
	if a.Repaired != "" {
		resp.Warnings = append(resp.Warnings, a.Repaired)
	}
	return resp, err
}

// compactionMeta is what a compaction entry keeps of its compaction.
type compactionMeta struct {
	RemovedCount int    `json:"removedCount"`
	FirstTurn    string `json:"firstTurn"`
	LastTurn     string `json:"lastTurn"`
	KeptTokens   int    `json:"keptTokens,omitempty"`
}

// compacted finds the compaction entry of id in the session's transcript.
func (s *Store) compacted(session, id string) (memhost.SessionCompactResponse, bool, error) {
	tr, err := s.Read(session)
	if err != nil {
		return memhost.SessionCompactResponse{}, false, err
	}
	for i := len(tr.Turns) - 1; i >= 0; i-- {
		t := tr.Turns[i]
		if t.ID != id || t.Type != "compaction" {
			continue
		}
		var m compactionMeta
		json.Unmarshal(t.Metadata, &m)
		return memhost.SessionCompactResponse{Session: session, FirstTurn: m.FirstTurn, LastTurn: m.LastTurn, RemovedCount: m.RemovedCount,
			KeptTokens: m.KeptTokens, Turn: t}, true, nil
	}
	return memhost.SessionCompactResponse{}, false, nil
}
