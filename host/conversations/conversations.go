package conversations

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/internal/jsoncheck"
)

// SessionAppendRequest adds one turn to a transcript.
type SessionAppendRequest struct {
	// ID is the turn's id, chosen by the caller so that an append sent
	// again (the server died before answering) is stored once: a turn of
	// that id among the transcript's last ones is returned instead. ""
	// gives a new random id.
	ID      string          `json:"id,omitempty"`
	Session string          `json:"session"`
	Role    string          `json:"role"` // user | assistant | system | tool
	Text    string          `json:"text"`
	Meta    json.RawMessage `json:"meta,omitempty"` // a JSON object kept as the turn's metadata
}

// SessionAppendResponse is the turn written.
type SessionAppendResponse struct {
	Session string        `json:"session"`
	Path    string        `json:"path"`
	Turn    sessions.Turn `json:"turn"`
	// Warnings are troubles after the turn was written (a repaired torn
	// line, an index that could not be updated): the turn is stored.
	Warnings []string `json:"warnings,omitempty"`
}

// SessionAppend appends a turn to sessions/ID.jsonl, flushed to disk, and
// indexes the transcript before returning. Transcripts are only ever
// appended to.
func (cs *SessionService) SessionAppend(ctx context.Context, req SessionAppendRequest) (out SessionAppendResponse, err error) {
	defer cs.k.Wrote(&err, func() memhost.Change {
		return memhost.Change{Op: "session-append", Paths: memhost.Paths(out.Path), Note: fmt.Sprintf("session-append: %s turn %s", out.Path, out.Turn.ID), Result: &out}
	})
	if !sessions.ValidID(req.Session) {
		return SessionAppendResponse{}, fault.BadInputf("session", "session id %q: use letters, digits, '.', '_' and '-' (at most 128)", req.Session)
	}
	if !slices.Contains(sessions.Roles, req.Role) {
		return SessionAppendResponse{}, fault.BadInputf("role", "role %q: choose user, assistant, system or tool", req.Role)
	}
	text, err := notebook.CleanText(req.Text)
	if err != nil {
		return SessionAppendResponse{}, err
	}
	if err := req.Check(); err != nil {
		return SessionAppendResponse{}, err
	}
	if req.ID != "" && !sessions.ValidID(req.ID) {
		return SessionAppendResponse{}, fault.BadInputf("id", "turn id %q: use letters, digits, '.', '_' and '-' (at most 128)", req.ID)
	}
	a, err := cs.k.Sessions().Append(ctx, req.Session, sessions.Turn{ID: req.ID, Type: "message", Role: req.Role, Content: text, Metadata: req.Meta})
	if err != nil {
		return SessionAppendResponse{}, err
	}
	rel := sessions.Path(req.Session)
	resp := SessionAppendResponse{Session: req.Session, Path: rel, Turn: a.Turn}
	if a.Repaired != "" {
		resp.Warnings = append(resp.Warnings, a.Repaired)
	}
	resp.Warnings = append(resp.Warnings, cs.k.IndexWritten(ctx, rel)...)
	return resp, nil
}

// Check reports a Meta that is not a JSON object; a client checks it
// before sending the request, since invalid JSON cannot be sent as JSON.
func (r SessionAppendRequest) Check() error {
	if len(r.Meta) > 0 {
		var obj map[string]any
		if err := json.Unmarshal(r.Meta, &obj); err != nil {
			return fault.BadInputf("meta", "meta must be a JSON object: %v", err)
		}
		// encoding/json would keep "\ud800" as U+FFFD: not what was sent.
		if s := jsoncheck.Find(r.Meta); s != nil {
			return fault.BadInputf("meta", "meta: %v", s)
		}
	}
	return nil
}

// SessionsRequest lists the transcripts; it has no parameters.
type SessionsRequest struct{}

// SessionsResponse lists the transcripts, the most recently active first.
type SessionsResponse struct {
	Sessions []sessions.Summary `json:"sessions"`
}

// Sessions lists the transcripts in the sessions folder with their turn
// counts and first and last times.
func (cs *SessionService) Sessions(ctx context.Context, _ SessionsRequest) (SessionsResponse, error) {
	list, err := cs.k.Sessions().List(ctx)
	return SessionsResponse{Sessions: list}, err
}

// IngestRequest imports transcript files.
type IngestRequest struct {
	Paths []string `json:"paths"`
	// Dir is the folder relative Paths are in: the caller's working folder
	// when the caller is another process (a server resolves them otherwise
	// against its own). "" is this process's working folder.
	Dir    string `json:"dir,omitempty"`
	Format string `json:"format"` // auto (default), memhost, claude-code
}

// IngestResponse reports every file.
type IngestResponse struct {
	Files []sessions.Imported `json:"files"`
}

// Ingest imports transcripts into sessions/ (see sessions.Store.Import)
// and indexes each one that grew.
func (cs *SessionService) Ingest(ctx context.Context, req IngestRequest) (out IngestResponse, err error) {
	defer cs.k.Wrote(&err, func() memhost.Change {
		c := memhost.Change{Op: "session-ingest", Result: &out}
		var names []string
		for _, f := range out.Files {
			if f.Added > 0 {
				names = append(names, fmt.Sprintf("%s (+%d turns)", f.Session, f.Added))
				c.Paths = append(c.Paths, sessions.Path(f.Session))
			}
		}
		c.Note = "session-ingest: " + strings.Join(names, ", ")
		return c
	})
	if err := sessions.CheckFormat(req.Format); err != nil {
		return IngestResponse{}, err
	}
	if len(req.Paths) == 0 {
		return IngestResponse{}, fault.BadInputf("paths", "no transcript files given")
	}
	var resp IngestResponse
	for _, p := range req.Paths {
		f, err := cs.k.Sessions().Import(ctx, req.Dir, p, req.Format)
		if err == nil && f.Added+f.Known > 0 {
			// Known turns too: an ingest killed after writing but before
			// indexing left them unindexed (a stat when they are indexed).
			f.Warnings = cs.k.IndexWritten(ctx, sessions.Path(f.Session))
		}
		if err != nil {
			return resp, err
		}
		resp.Files = append(resp.Files, f)
	}
	return resp, nil
}

// SessionTokensRequest names a session.
type SessionTokensRequest struct {
	Session string `json:"session"`
}

// SessionTokens estimates a session's working context.
func (cs *SessionService) SessionTokens(ctx context.Context, req SessionTokensRequest) (sessions.Tokens, error) {
	return cs.k.Sessions().Tokens(req.Session)
}

// SessionCheckRequest asks whether a flush or compaction is due before a
// message of Incoming tokens is added.
type SessionCheckRequest struct {
	Session  string `json:"session"`
	Incoming int    `json:"incoming"`
}

// SessionCheck says whether a flush or compaction is due (see
// sessions.Store.Check); a due flush is recorded.
func (cs *SessionService) SessionCheck(ctx context.Context, req SessionCheckRequest) (sessions.Check, error) {
	return cs.k.Sessions().Check(req.Session, req.Incoming, cs.k.Config().Memory.Compaction)
}

// SessionCompactRequest compacts a session with a summary.
type SessionCompactRequest struct {
	Session string `json:"session"`
	Summary string `json:"summary"`
	// Summarize has the generator write the summary (summarize.go);
	// Summary must then be empty.
	Summarize bool `json:"summarize,omitempty"`
	// RequestID, when set, is the compaction entry's id: a run with the
	// id of one in the transcript writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
}

// SessionCompact appends a compaction entry (see sessions.Store.Compact)
// and indexes it: the summary is searchable, the turns stay.
func (cs *SessionService) SessionCompact(ctx context.Context, req SessionCompactRequest) (out sessions.Compacted, err error) {
	defer cs.k.Wrote(&err, func() memhost.Change {
		return memhost.Change{Op: "session-compact", Paths: memhost.Paths(sessions.Path(out.Session)), Note: "session-compact: " + out.Session, Result: &out}
	})
	var model, through string
	if req.Summarize {
		if strings.TrimSpace(req.Summary) != "" {
			return sessions.Compacted{}, fault.BadInputf("summary", "give a summary or ask for one to be written, not both")
		}
		if !sessions.ValidID(req.Session) {
			return sessions.Compacted{}, fault.BadInputf("session", "invalid session id %q", req.Session)
		}
		if req.Summary, model, through, err = cs.summarize(ctx, req.Session); err != nil {
			return sessions.Compacted{}, err
		}
	}
	text, err := notebook.CleanText(req.Summary)
	if err != nil {
		return sessions.Compacted{}, err
	}
	if err := (once.Request{ID: req.RequestID}).Check(); err != nil {
		return sessions.Compacted{}, err
	}
	resp, err := cs.k.Sessions().Compact(ctx, req.Session, text, cs.k.Config().Memory.Compaction.KeepRecentTokens, req.RequestID)
	if err != nil {
		return resp, err
	}
	resp.Model = model
	if through != "" && resp.LastTurn != through {
		resp.Warnings = append(resp.Warnings, fmt.Sprintf("turns arrived while the summary was written: it covers the turns up to %s, the compaction up to %s", through, resp.LastTurn))
	}
	resp.Warnings = append(resp.Warnings, cs.k.IndexWritten(ctx, sessions.Path(req.Session))...)
	return resp, nil
}

// Agent runtime hook events (Claude Code's hooks).
const (
	HookSessionStart = "session-start"
	HookPreCompact   = "pre-compact"
	HookSessionEnd   = "session-end"
	HookStop         = "stop"
)

// HookEvents are the hook events Hook answers, in the order of a session.
var HookEvents = []string{HookSessionStart, HookPreCompact, HookSessionEnd, HookStop}

// CheckHookEvent reports an event Hook does not answer, naming the known
// ones.
func CheckHookEvent(event string) error {
	if !slices.Contains(HookEvents, event) {
		return fault.BadInputf("event", "unknown hook %q (known: %s)", event, strings.Join(HookEvents, ", "))
	}
	return nil
}

// HookRequest is an agent runtime's hook: the event and the JSON input the
// runtime gives the hook.
type HookRequest struct {
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload"`
}

// Check reports an unknown Event, then a Payload that is not JSON (see
// SessionAppendRequest.Check): the event is wrong whatever the input.
func (r HookRequest) Check() error {
	if err := CheckHookEvent(r.Event); err != nil {
		return err
	}
	if !json.Valid(r.Payload) {
		var v any
		return fault.BadInputf("payload", "hook input is not JSON: %v", json.Unmarshal(r.Payload, &v))
	}
	if s := jsoncheck.Find(r.Payload); s != nil {
		return fault.BadInputf("payload", "hook input: %v", s)
	}
	return nil
}

// HookResponse is the JSON the hook answers with.
type HookResponse struct {
	Output json.RawMessage `json:"output"`
}

// hookInput is the JSON Claude Code gives every hook on stdin.
type hookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Source         string `json:"source"`  // SessionStart: startup | resume | clear | compact
	Trigger        string `json:"trigger"` // PreCompact: manual | auto
	Reason         string `json:"reason"`  // SessionEnd
}

// Hook answers an agent runtime's hook. session-start gives memhost's
// context as additional context; pre-compact stores the transcript so far,
// records a flush and reminds the agent to write durable memories;
// session-end and stop store the transcript they name.
func (cs *SessionService) Hook(ctx context.Context, req HookRequest) (HookResponse, error) {
	if err := req.Check(); err != nil {
		return HookResponse{}, err
	}
	var in hookInput
	if err := json.Unmarshal(req.Payload, &in); err != nil {
		return HookResponse{}, fault.BadInputf("payload", "hook input is not JSON: %v", err)
	}
	need := func(field, value string) error {
		if strings.TrimSpace(value) == "" {
			return fault.BadInputf("payload", "%s hook input has no %s", req.Event, field)
		}
		return nil
	}
	var out any
	switch req.Event {
	case HookSessionStart:
		c, err := cs.k.Context(ctx)
		if err != nil {
			return HookResponse{}, err
		}
		out = map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "SessionStart", "additionalContext": c.Text,
		}}
	case HookPreCompact:
		if err := need("transcript_path", in.TranscriptPath); err != nil {
			return HookResponse{}, err
		}
		session, err := cs.ingestHook(ctx, in.TranscriptPath)
		if err != nil {
			return HookResponse{}, err
		}
		tok, err := cs.k.Sessions().Tokens(session)
		if err != nil {
			return HookResponse{}, err
		}
		if err := cs.k.Sessions().AddReceipt(session, tok.Tokens); err != nil {
			return HookResponse{}, err
		}
		out = map[string]any{"systemMessage": cs.k.Config().Memory.Compaction.FlushPrompt}
	case HookSessionEnd, HookStop:
		if err := need("transcript_path", in.TranscriptPath); err != nil {
			return HookResponse{}, err
		}
		if _, err := cs.ingestHook(ctx, in.TranscriptPath); err != nil {
			return HookResponse{}, err
		}
		out = map[string]any{"suppressOutput": true}
	default: // Check refuses events not in HookEvents: one listed there lacks its case
		return HookResponse{}, fmt.Errorf("hook %q is listed but not answered", req.Event)
	}
	b, err := json.Marshal(out)
	return HookResponse{Output: b}, err
}

// ingestHook imports a Claude Code transcript and names its session.
func (cs *SessionService) ingestHook(ctx context.Context, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fault.BadInputf("payload", "transcript_path %q is not absolute", path)
	}
	r, err := cs.Ingest(ctx, IngestRequest{Paths: []string{path}, Format: sessions.FormatClaudeCode})
	if err != nil {
		return "", err
	}
	return r.Files[0].Session, nil
}
