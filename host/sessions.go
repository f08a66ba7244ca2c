package host

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/memhost/memhost/host/chunk"
	"github.com/memhost/memhost/index"
)

// SourceSessions is the result group of conversation transcripts.
const SourceSessions = "sessions"

// Turn is one line of a transcript, sessions/ID.jsonl, in seed 002's
// format. Speaker is kept when a transcript names who spoke.
type Turn struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"` // message | tool_call | tool_result | compaction
	Role       string          `json:"role,omitempty"`
	Speaker    string          `json:"speaker,omitempty"`
	Content    string          `json:"content"`
	Timestamp  string          `json:"timestamp,omitempty"`
	TokenCount int             `json:"tokenCount,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
}

// turnMeta is what a transcript chunk carries in the index.
type turnMeta struct {
	Session   string   `json:"session"`
	Turns     []string `json:"turns"`
	Role      string   `json:"role,omitempty"`
	Speaker   string   `json:"speaker,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
}

var sessionID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// isSessionPath reports whether an index path names a transcript.
func isSessionPath(rel string) bool {
	return strings.HasPrefix(rel, "sessions/") && strings.HasSuffix(rel, ".jsonl")
}

// SessionAppendRequest adds one turn to a transcript.
type SessionAppendRequest struct {
	Session string          `json:"session"`
	Role    string          `json:"role"` // user | assistant | system | tool
	Text    string          `json:"text"`
	Meta    json.RawMessage `json:"meta,omitempty"` // a JSON object kept as the turn's metadata
}

// SessionAppendResponse is the turn written.
type SessionAppendResponse struct {
	Session string `json:"session"`
	Path    string `json:"path"`
	Turn    Turn   `json:"turn"`
}

// SessionAppend appends a turn to sessions/ID.jsonl, flushed to disk, and
// indexes the transcript before returning. Transcripts are only ever
// appended to.
func (h *Host) SessionAppend(ctx context.Context, req SessionAppendRequest) (SessionAppendResponse, error) {
	if !sessionID.MatchString(req.Session) {
		return SessionAppendResponse{}, fmt.Errorf("%w: session id %q: use letters, digits, '.', '_' and '-' (at most 128)", ErrBadInput, req.Session)
	}
	switch req.Role {
	case "user", "assistant", "system", "tool":
	default:
		return SessionAppendResponse{}, fmt.Errorf("%w: role %q: choose user, assistant, system or tool", ErrBadInput, req.Role)
	}
	text, err := cleanText(req.Text)
	if err != nil {
		return SessionAppendResponse{}, err
	}
	if len(req.Meta) > 0 {
		var obj map[string]any
		if err := json.Unmarshal(req.Meta, &obj); err != nil {
			return SessionAppendResponse{}, fmt.Errorf("%w: --meta must be a JSON object: %v", ErrBadInput, err)
		}
	}
	turn, err := h.appendTurn(ctx, req.Session, Turn{Type: "message", Role: req.Role, Content: text, Metadata: req.Meta})
	if err != nil {
		return SessionAppendResponse{}, err
	}
	return SessionAppendResponse{Session: req.Session, Path: "sessions/" + req.Session + ".jsonl", Turn: turn}, nil
}

// appendTurn gives t an id, a time and a token count, appends it to the
// session's transcript under a lock, flushes it to disk, and indexes the
// transcript.
func (h *Host) appendTurn(ctx context.Context, session string, t Turn) (Turn, error) {
	var id [6]byte
	rand.Read(id[:])
	t.ID = hex.EncodeToString(id[:])
	t.Timestamp = h.now().UTC().Format(time.RFC3339Nano)
	t.TokenCount = chunk.EstimateTokens(t.Content)
	line, err := json.Marshal(t)
	if err != nil {
		return t, err
	}
	rel := "sessions/" + session + ".jsonl"
	f, err := os.OpenFile(filepath.Join(h.home, rel), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return t, err
	}
	// One writer at a time per transcript, so lines never interleave.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return t, err
	}
	_, werr := f.Write(append(line, '\n'))
	serr := f.Sync()
	f.Close()
	if err := errors.Join(werr, serr); err != nil {
		return t, fmt.Errorf("append to %s: %w", rel, err)
	}
	return t, h.syncPaths(ctx, rel)
}

// contextWords bounds the context of a transcript chunk: the last words
// of the chunk before it, embedded before the chunk's text and searched by
// keyword at a lower weight. A reply ("yes, last Tuesday") means little
// without the question it answers; on the LoCoMo dev split this context
// lifts R@5 by about 6 points (docs/benchmarks.md).
const contextWords = 60

// sessionChunks turns the lines of a transcript from byte offset from on
// into chunks, one per turn (long turns split by the markdown chunker),
// each carrying its turn's metadata and, as its context, the end of the
// chunk before it in the transcript (for the first new turn the lines
// before from are read back, so a grown transcript's new turns get the
// context a whole indexing gives them). Malformed lines are reported with
// their line number and skipped.
func sessionChunks(rel string, data []byte, from int, opt chunk.Options) ([]index.Chunk, []string) {
	session := strings.TrimSuffix(strings.TrimPrefix(rel, "sessions/"), ".jsonl")
	prev := lastTurnText(data[:from], opt)
	maxWords := opt.MaxTokens * 3 / 4 // a token is about 3/4 of a word
	var out []index.Chunk
	var problems []string
	sc := bufio.NewScanner(bytes.NewReader(data[from:]))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := bytes.Count(data[:from], []byte("\n")) + 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var t Turn
		if err := json.Unmarshal(line, &t); err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: not a JSON turn (%v); skipped", rel, n, err))
			continue
		}
		texts := turnTexts(t, opt)
		if len(texts) == 0 {
			continue
		}
		id := t.ID
		if id == "" {
			id = fmt.Sprint(n)
		}
		meta, _ := json.Marshal(turnMeta{Session: session, Turns: []string{id}, Role: t.Role, Speaker: t.Speaker, Timestamp: t.Timestamp})
		for _, text := range texts {
			c := index.Chunk{Heading: turnSpeaker(t), StartLine: n, EndLine: n, Text: text, Meta: string(meta)}
			if maxWords > 0 {
				c.Context = lastWords(prev, min(contextWords, maxWords-len(strings.Fields(text))))
			}
			s := sha256.Sum256([]byte(c.EmbedText()))
			c.Hash = hex.EncodeToString(s[:])
			out = append(out, c)
			prev = text
		}
	}
	if err := sc.Err(); err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", rel, err))
	}
	return out, problems
}

// lastTurnText is the last chunk text of the last turn in data that has
// one (malformed and empty lines are skipped, as indexing skips them).
func lastTurnText(data []byte, opt chunk.Options) string {
	for len(data) > 0 {
		data = bytes.TrimRight(data, " \t\r\n")
		i := bytes.LastIndexByte(data, '\n')
		var t Turn
		if json.Unmarshal(data[i+1:], &t) == nil {
			if texts := turnTexts(t, opt); len(texts) > 0 {
				return texts[len(texts)-1]
			}
		}
		data = data[:max(i, 0)]
	}
	return ""
}

// turnSpeaker names who wrote a turn: the speaker, else the role;
// "summary" for a compaction entry.
func turnSpeaker(t Turn) string {
	if t.Type == "compaction" {
		return "summary"
	}
	if t.Speaker != "" {
		return t.Speaker
	}
	return t.Role
}

// turnTexts is a turn's content split into chunk texts, each starting with
// who wrote it; none for an empty turn.
func turnTexts(t Turn, opt chunk.Options) []string {
	content := strings.TrimSpace(strings.ToValidUTF8(t.Content, "\uFFFD"))
	if content == "" {
		return nil
	}
	who := turnSpeaker(t)
	var out []string
	for _, p := range chunk.Split(content, opt) {
		text := p.Text
		if who != "" {
			text = who + ": " + text
		}
		out = append(out, text)
	}
	return out
}

// lastWords is the last n words of s, joined by spaces; "" when n < 1.
func lastWords(s string, n int) string {
	if n < 1 {
		return ""
	}
	w := strings.Fields(s)
	return strings.Join(w[max(0, len(w)-n):], " ")
}

// ConversationSearchRequest searches transcripts.
type ConversationSearchRequest struct {
	Query      string `json:"query"`
	Session    string `json:"session,omitempty"`    // only this session
	Since      string `json:"since,omitempty"`      // YYYY-MM-DD or RFC 3339: turns at or after
	Until      string `json:"until,omitempty"`      // YYYY-MM-DD (whole day) or RFC 3339: turns at or before
	MaxResults int    `json:"maxResults,omitempty"` // default 10
}

// TurnResult is a transcript chunk found: its session, turn ids, who spoke
// and when.
type TurnResult struct {
	Session   string   `json:"session"`
	Turns     []string `json:"turns"`
	Role      string   `json:"role,omitempty"`
	Speaker   string   `json:"speaker,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
	Snippet   string   `json:"snippet"`
	// Context is the end of the turn before (what this turn answers, when
	// it is a reply), around the query's words; "" for a first turn.
	Context string  `json:"context,omitempty"`
	Score   float64 `json:"score"`
	Lines   Lines   `json:"lines"` // lines of the transcript file
}

// ConversationSearchResponse holds results best first.
type ConversationSearchResponse struct {
	Query   string       `json:"query"`
	Mode    string       `json:"mode"`
	Reason  string       `json:"reason"`
	Results []TurnResult `json:"results"`
	Timing  Timing       `json:"timing"`
}

// ConversationSearch searches the transcripts, hybrid when a provider is
// ready and keyword-only otherwise, like Recall.
func (h *Host) ConversationSearch(ctx context.Context, req ConversationSearchRequest) (ConversationSearchResponse, error) {
	start := time.Now()
	resp := ConversationSearchResponse{Query: req.Query, Mode: ModeKeyword, Results: []TurnResult{}}
	if strings.TrimSpace(req.Query) == "" {
		return resp, fmt.Errorf("%w: the query is empty", ErrBadInput)
	}
	limit := req.MaxResults
	if limit == 0 {
		limit = 10
	}
	if limit < 1 {
		return resp, fmt.Errorf("%w: max results must be at least 1, got %d", ErrBadInput, limit)
	}
	path := ""
	if req.Session != "" {
		path = "sessions/" + req.Session + ".jsonl"
		if !sessionID.MatchString(req.Session) {
			return resp, fmt.Errorf("%w: unknown session %q", ErrBadInput, req.Session)
		}
		if _, err := os.Stat(filepath.Join(h.home, path)); err != nil {
			return resp, fmt.Errorf("%w: unknown session %q (no %s)", ErrBadInput, req.Session, path)
		}
	}
	since, err := h.parseWhen(req.Since, false)
	if err != nil {
		return resp, fmt.Errorf("%w: --since %q: %v", ErrBadInput, req.Since, err)
	}
	until, err := h.parseWhen(req.Until, true)
	if err != nil {
		return resp, fmt.Errorf("%w: --until %q: %v", ErrBadInput, req.Until, err)
	}
	if h.cfg.Memory.Sync.SyncOnSearch {
		if _, err := h.Sync(ctx); err != nil {
			return resp, fmt.Errorf("sync before search: %w", err)
		}
	}
	resp.Timing.SyncMs = ms(time.Since(start))
	n := max(50, 4*limit)
	if !since.IsZero() || !until.IsZero() {
		n = max(200, 20*limit) // dates filter after ranking
	}
	ranked, err := h.rank(ctx, searchQuery{text: req.Query, sources: []string{SourceSessions}, path: path, n: n}, &resp.Mode, &resp.Reason, &resp.Timing)
	if err != nil {
		return resp, err
	}
	terms := index.Terms(req.Query)
	for _, r := range ranked {
		if r.score < h.cfg.Memory.Search.MinScore || len(resp.Results) == limit {
			break
		}
		var m turnMeta
		json.Unmarshal([]byte(r.hit.Meta), &m)
		if !since.IsZero() || !until.IsZero() {
			t, ok := h.turnTime(m.Timestamp)
			if !ok || (!since.IsZero() && t.Before(since)) || (!until.IsZero() && t.After(until)) {
				continue
			}
		}
		resp.Results = append(resp.Results, TurnResult{Session: m.Session, Turns: m.Turns, Role: m.Role, Speaker: m.Speaker,
			Timestamp: m.Timestamp, Snippet: Snippet(r.hit.Text, terms, 200), Context: Snippet(r.hit.Context, terms, 160),
			Score: r.score, Lines: Lines{r.hit.StartLine, r.hit.EndLine}})
	}
	resp.Timing.TotalMs = ms(time.Since(start))
	return resp, nil
}

// parseWhen reads a --since/--until value: a date (the start, or with
// endOfDay the end, of that day in the configured zone) or RFC 3339.
func (h *Host) parseWhen(s string, endOfDay bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, h.loc); err == nil {
		if endOfDay {
			t = t.Add(24*time.Hour - time.Nanosecond)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return t, errors.New("want YYYY-MM-DD or an RFC 3339 time")
	}
	return t, nil
}

// turnTime reads a turn's timestamp: RFC 3339, or a zone-less
// "2006-01-02T15:04:05" taken in the configured zone.
func (h *Host) turnTime(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04:05", s, h.loc); err == nil {
		return t, true
	}
	return time.Time{}, false
}
