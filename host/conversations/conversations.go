package conversations

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/knowledge"
)

// SessionAppend appends a turn to sessions/ID.jsonl, flushed to disk, and
// indexes the transcript before returning. Transcripts are only ever
// appended to. A turn that ends the session (End) writes its episode logs.
func (cs *SessionService) SessionAppend(ctx context.Context, req memhost.SessionAppendRequest) (out memhost.SessionAppendResponse, err error) {
	if !sessions.ValidID(req.Session) {
		return memhost.SessionAppendResponse{}, fault.BadInputf("session", "session id %q: use letters, digits, '.', '_' and '-' (at most 128)", req.Session)
	}
	if !slices.Contains(sessions.Roles, req.Role) {
		return memhost.SessionAppendResponse{}, fault.BadInputf("role", "role %q: choose user, assistant, system or tool", req.Role)
	}
	text, err := notebook.CleanText(req.Text)
	if err != nil {
		return memhost.SessionAppendResponse{}, err
	}
	if err := req.Check(); err != nil {
		return memhost.SessionAppendResponse{}, err
	}
	if req.ID != "" && !sessions.ValidID(req.ID) {
		return memhost.SessionAppendResponse{}, fault.BadInputf("id", "turn id %q: use letters, digits, '.', '_' and '-' (at most 128)", req.ID)
	}
	if req.Private {
		if err := cs.k.Sessions().MarkPrivate(req.Session); err != nil {
			return memhost.SessionAppendResponse{}, err
		}
	}
	a, err := cs.k.Sessions().Append(ctx, req.Session, memhost.Turn{ID: req.ID, Type: "message", Role: req.Role, Content: text, Metadata: req.Meta, Channel: strings.ToLower(req.Channel), SourceID: req.SourceID})
	if err != nil {
		return memhost.SessionAppendResponse{}, err
	}
	rel := sessions.Path(req.Session)
	resp := memhost.SessionAppendResponse{Session: req.Session, Path: rel, Turn: a.Turn, Redacted: a.Redacted}
	if a.Repaired != "" {
		resp.Warnings = append(resp.Warnings, a.Repaired)
	}
	resp.Warnings = append(resp.Warnings, cs.k.IndexWritten(ctx, rel)...)
	if req.End {
		cs.k.SessionEnded(ctx, req.Session)
	}
	return resp, nil
}

// Sessions lists the transcripts in the sessions folder with their turn
// counts and first and last times.
func (cs *SessionService) Sessions(ctx context.Context, _ memhost.SessionsRequest) (memhost.SessionsResponse, error) {
	list, err := cs.k.Sessions().List(ctx)
	return memhost.SessionsResponse{Sessions: list}, err
}

// Ingest imports transcripts into sessions/ (see sessions.Store.Import)
// and indexes each one that grew.
func (cs *SessionService) Ingest(ctx context.Context, req memhost.IngestRequest) (out memhost.IngestResponse, err error) {
	if err := sessions.CheckFormat(req.Format); err != nil {
		return memhost.IngestResponse{}, err
	}
	if len(req.Paths) == 0 {
		return memhost.IngestResponse{}, fault.BadInputf("paths", "no transcript files given")
	}
	var resp memhost.IngestResponse
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

// SessionTokens estimates a session's working context.
func (cs *SessionService) SessionTokens(ctx context.Context, req memhost.SessionTokensRequest) (memhost.SessionTokens, error) {
	return cs.k.Sessions().Tokens(req.Session)
}

// SessionCheck says whether a flush or compaction is due (see
// sessions.Store.Check); a due flush is recorded.
func (cs *SessionService) SessionCheck(ctx context.Context, req memhost.SessionCheckRequest) (memhost.SessionCheck, error) {
	return cs.k.Sessions().Check(req.Session, req.Incoming, cs.k.Config().Memory.Compaction)
}

// SessionCompact appends a compaction entry (see sessions.Store.Compact)
// and indexes it: the summary is searchable, the turns stay.
func (cs *SessionService) SessionCompact(ctx context.Context, req memhost.SessionCompactRequest) (out memhost.SessionCompactResponse, err error) {
	var model, through string
	if req.Summarize {
		if strings.TrimSpace(req.Summary) != "" {
			return memhost.SessionCompactResponse{}, fault.BadInputf("summary", "give a summary or ask for one to be written, not both")
		}
		if !sessions.ValidID(req.Session) {
			return memhost.SessionCompactResponse{}, fault.BadInputf("session", "invalid session id %q", req.Session)
		}
		if req.Summary, model, through, err = cs.summarize(ctx, req.Session); err != nil {
			return memhost.SessionCompactResponse{}, err
		}
	}
	text, err := notebook.CleanText(req.Summary)
	if err != nil {
		return memhost.SessionCompactResponse{}, err
	}
	if err := (once.Request{ID: req.RequestID}).Check(); err != nil {
		return memhost.SessionCompactResponse{}, err
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
	if req.Facts {
		// The entry is written: a failure here is a warning, never the
		// compaction's (a retry would find the entry and answer as it did).
		c, err := cs.k.Consolidate(ctx, knowledge.ConsolidateRequest{})
		if err != nil {
			resp.Warnings = append(resp.Warnings, "facts were not extracted: "+err.Error())
		} else {
			resp.Consolidated = &c
		}
	}
	return resp, nil
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
	Prompt         string `json:"prompt"`  // UserPromptSubmit
}

// Hook answers an agent runtime's hook. session-start gives memhost's
// context as additional context, prompt the memory context for the user's
// prompt (nothing when no memory matches it); pre-compact stores the transcript so far,
// records a flush and reminds the agent to write durable memories;
// session-end and stop store the transcript they name and write the
// episode logs of its days.
func (cs *SessionService) Hook(ctx context.Context, req memhost.HookRequest) (memhost.HookResponse, error) {
	if err := req.Check(); err != nil {
		return memhost.HookResponse{}, err
	}
	var in hookInput
	if err := json.Unmarshal(req.Payload, &in); err != nil {
		return memhost.HookResponse{}, fault.BadInputf("payload", "hook input is not JSON: %v", err)
	}
	need := func(field, value string) error {
		if strings.TrimSpace(value) == "" {
			return fault.BadInputf("payload", "%s hook input has no %s", req.Event, field)
		}
		return nil
	}
	var out any
	switch req.Event {
	case memhost.HookSessionStart:
		c, err := cs.k.Context(ctx, memhost.ContextRequest{})
		if err != nil {
			return memhost.HookResponse{}, err
		}
		out = map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "SessionStart", "additionalContext": c.Text,
		}}
	case memhost.HookPrompt:
		out = map[string]any{"suppressOutput": true}
		if strings.TrimSpace(in.Prompt) == "" {
			break // no prompt, no memory (not the whole notebook block)
		}
		c, err := cs.k.Context(ctx, memhost.ContextRequest{Query: in.Prompt})
		if err != nil && fault.KindOf(err) != fault.BadInput { // a prompt with no searchable word
			return memhost.HookResponse{}, err
		}
		if c.Text != "" {
			out = map[string]any{"hookSpecificOutput": map[string]any{
				"hookEventName": "UserPromptSubmit", "additionalContext": c.Text,
			}}
		}
	case memhost.HookPreCompact:
		if err := need("transcript_path", in.TranscriptPath); err != nil {
			return memhost.HookResponse{}, err
		}
		session, err := cs.ingestHook(ctx, in.TranscriptPath)
		if err != nil {
			return memhost.HookResponse{}, err
		}
		tok, err := cs.k.Sessions().Tokens(session)
		if err != nil {
			return memhost.HookResponse{}, err
		}
		if err := cs.k.Sessions().AddReceipt(session, tok.Tokens); err != nil {
			return memhost.HookResponse{}, err
		}
		out = map[string]any{"systemMessage": cs.k.Config().Memory.Compaction.FlushPrompt}
	case memhost.HookSessionEnd, memhost.HookStop:
		if err := need("transcript_path", in.TranscriptPath); err != nil {
			return memhost.HookResponse{}, err
		}
		session, err := cs.ingestHook(ctx, in.TranscriptPath)
		if err != nil {
			return memhost.HookResponse{}, err
		}
		cs.k.SessionEnded(ctx, session)
		out = map[string]any{"suppressOutput": true}
	default: // Check refuses events not in memhost.HookEvents: one listed there lacks its case
		return memhost.HookResponse{}, fmt.Errorf("hook %q is listed but not answered", req.Event)
	}
	b, err := json.Marshal(out)
	return memhost.HookResponse{Output: b}, err
}

// ingestHook imports a Claude Code transcript and names its session.
func (cs *SessionService) ingestHook(ctx context.Context, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fault.BadInputf("payload", "transcript_path %q is not absolute", path)
	}
	req := memhost.IngestRequest{Paths: []string{path}, Format: sessions.FormatClaudeCode}
	r, err := cs.Ingest(ctx, req)
	cs.k.Publish(api.OpIngest, req, r, err)
	if err != nil {
		return "", err
	}
	return r.Files[0].Session, nil
}
