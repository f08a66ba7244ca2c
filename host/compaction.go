package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/memhost/memhost/host/chunk"
)

// receiptsFile records flushes: one JSON line per flush, in the sessions
// folder (hidden, so never indexed as a transcript).
const receiptsFile = ".flush-receipts.jsonl"

// FlushReceipt says a pre-compaction flush was asked of the agent.
type FlushReceipt struct {
	Session string `json:"session"`
	Time    string `json:"time"`
	Tokens  int    `json:"tokens"` // working context at the time, with the incoming message
}

// SessionTokens is an estimate of a session's working context.
type SessionTokens struct {
	Session       string `json:"session"`
	Tokens        int    `json:"tokens"` // since the last compaction, its summary included
	Turns         int    `json:"turns"`  // turns since the last compaction
	Compactions   int    `json:"compactions"`
	LastCompacted string `json:"lastCompacted,omitempty"`
}

// transcript is a session file read for compaction.
type transcript struct {
	turns        []Turn // all entries, in order
	lastCompact  int    // index of the last compaction entry, -1 if none
	lastCompactT string
	compactions  int
}

func (h *Host) readTranscript(session string) (transcript, error) {
	tr := transcript{lastCompact: -1}
	if !sessionID.MatchString(session) {
		return tr, fmt.Errorf("%w: unknown session %q", ErrBadInput, session)
	}
	data, err := os.ReadFile(filepath.Join(h.home, "sessions", session+".jsonl"))
	if os.IsNotExist(err) {
		return tr, fmt.Errorf("%w: unknown session %q (no sessions/%s.jsonl)", ErrBadInput, session, session)
	}
	if err != nil {
		return tr, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var t Turn
		if json.Unmarshal(sc.Bytes(), &t) != nil {
			continue // reported by sync; not counted here
		}
		if t.Type == "compaction" {
			tr.lastCompact, tr.lastCompactT = len(tr.turns), t.Timestamp
			tr.compactions++
		}
		tr.turns = append(tr.turns, t)
	}
	return tr, sc.Err()
}

func turnTokens(t Turn) int {
	if t.TokenCount > 0 {
		return t.TokenCount
	}
	return chunk.EstimateTokens(t.Content)
}

// working returns the turns of the working context: the last compaction's
// summary and everything after it.
func (tr transcript) working() []Turn {
	if tr.lastCompact < 0 {
		return tr.turns
	}
	return tr.turns[tr.lastCompact:]
}

// SessionTokens estimates a session's working context.
func (h *Host) SessionTokens(ctx context.Context, session string) (SessionTokens, error) {
	tr, err := h.readTranscript(session)
	if err != nil {
		return SessionTokens{}, err
	}
	resp := SessionTokens{Session: session, Compactions: tr.compactions, LastCompacted: tr.lastCompactT}
	for _, t := range tr.working() {
		resp.Tokens += turnTokens(t)
		if t.Type != "compaction" {
			resp.Turns++
		}
	}
	return resp, nil
}

// SessionCheck says whether a flush or a compaction is due.
type SessionCheck struct {
	Session        string `json:"session"`
	Tokens         int    `json:"tokens"`   // working context now
	Incoming       int    `json:"incoming"` // the message about to be added
	Total          int    `json:"total"`
	FlushAt        int    `json:"flushAt"`   // contextWindow - reserveTokens - softThresholdTokens
	CompactAt      int    `json:"compactAt"` // contextWindow - reserveTokens
	FlushDue       bool   `json:"flushDue"`
	CompactionDue  bool   `json:"compactionDue"`
	AlreadyFlushed bool   `json:"alreadyFlushed"` // a flush was asked in this compaction cycle
	Prompt         string `json:"prompt,omitempty"`
}

// SessionCheck counts the working context with the incoming message, so a
// single large message that jumps past the soft threshold, or past the
// limit itself, still gets its flush first. A flush is due once per
// compaction cycle; when it is, the receipt is recorded and the prompt
// returned for the agent.
func (h *Host) SessionCheck(ctx context.Context, session string, incoming int) (SessionCheck, error) {
	if incoming < 0 {
		return SessionCheck{}, fmt.Errorf("%w: incoming tokens must not be negative", ErrBadInput)
	}
	tok, err := h.SessionTokens(ctx, session)
	if err != nil {
		return SessionCheck{}, err
	}
	c := h.cfg.Memory.Compaction
	resp := SessionCheck{Session: session, Tokens: tok.Tokens, Incoming: incoming, Total: tok.Tokens + incoming,
		CompactAt: c.ContextWindow - c.ReserveTokens}
	resp.FlushAt = resp.CompactAt - c.SoftThresholdTokens
	resp.CompactionDue = resp.Total >= resp.CompactAt
	last, err := h.lastFlush(session)
	if err != nil {
		return resp, err
	}
	resp.AlreadyFlushed = last != "" && !before(last, tok.LastCompacted)
	if resp.Total >= resp.FlushAt && !resp.AlreadyFlushed {
		resp.FlushDue, resp.Prompt = true, c.FlushPrompt
		err = h.appendReceipt(FlushReceipt{Session: session, Time: h.now().UTC().Format(time.RFC3339Nano), Tokens: resp.Total})
	}
	return resp, err
}

func (h *Host) receipts() ([]FlushReceipt, error) {
	data, err := os.ReadFile(filepath.Join(h.home, "sessions", receiptsFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []FlushReceipt
	for _, line := range bytes.Split(data, []byte("\n")) {
		var r FlushReceipt
		if json.Unmarshal(line, &r) == nil && r.Session != "" {
			out = append(out, r)
		}
	}
	return out, nil
}

// lastFlush is the time of the session's last flush receipt, "" if none.
func (h *Host) lastFlush(session string) (string, error) {
	rs, err := h.receipts()
	last := ""
	for _, r := range rs {
		if r.Session == session && (last == "" || before(last, r.Time)) {
			last = r.Time
		}
	}
	return last, err
}

// before reports whether RFC 3339 time a is before b; "" is before all.
// (Strings do not compare: "…:05Z" sorts after "…:05.1Z".)
func before(a, b string) bool {
	if a == "" || b == "" {
		return a == "" && b != ""
	}
	ta, err1 := time.Parse(time.RFC3339Nano, a)
	tb, err2 := time.Parse(time.RFC3339Nano, b)
	if err1 != nil || err2 != nil {
		return a < b
	}
	return ta.Before(tb)
}

func (h *Host) appendReceipt(r FlushReceipt) error {
	line, _ := json.Marshal(r)
	f, err := os.OpenFile(filepath.Join(h.home, "sessions", receiptsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		return err
	}
	return f.Sync()
}

// SessionCompactResponse describes the compaction entry written.
type SessionCompactResponse struct {
	Session      string `json:"session"`
	FirstTurn    string `json:"firstTurn"`
	LastTurn     string `json:"lastTurn"`
	RemovedCount int    `json:"removedCount"` // turns the summary replaces in the working context
	KeptTokens   int    `json:"keptTokens"`   // recent turns left as they are
	Turn         Turn   `json:"turn"`
}

// SessionCompact appends a compaction entry: the summary replaces, in the
// agent's working context, the turns since the last compaction except the
// most recent keepRecentTokens. The turns themselves stay in the
// transcript and stay searchable; nothing is deleted.
func (h *Host) SessionCompact(ctx context.Context, session, summary string) (SessionCompactResponse, error) {
	text, err := cleanText(summary)
	if err != nil {
		return SessionCompactResponse{}, err
	}
	tr, err := h.readTranscript(session)
	if err != nil {
		return SessionCompactResponse{}, err
	}
	work := tr.working()
	if len(work) > 0 && work[0].Type == "compaction" {
		work = work[1:]
	}
	// Keep the newest turns up to keepRecentTokens.
	keep, kept := len(work), 0
	for keep > 0 && kept+turnTokens(work[keep-1]) <= h.cfg.Memory.Compaction.KeepRecentTokens {
		keep--
		kept += turnTokens(work[keep])
	}
	removed := work[:keep]
	if len(removed) == 0 {
		return SessionCompactResponse{}, fmt.Errorf("%w: nothing to compact in %s: its %d turns since the last compaction fit in keepRecentTokens (%d)", ErrBadInput, session, len(work), h.cfg.Memory.Compaction.KeepRecentTokens)
	}
	resp := SessionCompactResponse{Session: session, FirstTurn: removed[0].ID, LastTurn: removed[len(removed)-1].ID, RemovedCount: len(removed), KeptTokens: kept}
	meta, _ := json.Marshal(map[string]any{"removedCount": len(removed), "firstTurn": resp.FirstTurn, "lastTurn": resp.LastTurn})
	app, err := h.appendTurn(ctx, session, Turn{Type: "compaction", Content: text, Metadata: meta})
	resp.Turn = app
	return resp, err
}
