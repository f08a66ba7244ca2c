package host

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Agent runtime hook events (Claude Code's hooks).
const (
	HookSessionStart = "session-start"
	HookPreCompact   = "pre-compact"
	HookSessionEnd   = "session-end"
	HookStop         = "stop"
)

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

// Hook answers an agent runtime's hook: the payload is the hook's JSON
// input, the answer the JSON to print. session-start gives memhost context
// as additional context; pre-compact stores the transcript so far, records
// a flush and reminds the agent to write durable memories; session-end and
// stop store the transcript they name.
func (h *Host) Hook(ctx context.Context, event string, payload []byte) ([]byte, error) {
	var in hookInput
	if err := json.Unmarshal(payload, &in); err != nil {
		return nil, fmt.Errorf("%w: hook input is not JSON: %v", ErrBadInput, err)
	}
	need := func(field, value string) error {
		if strings.TrimSpace(value) == "" {
			return fmt.Errorf("%w: %s hook input has no %s", ErrBadInput, event, field)
		}
		return nil
	}
	switch event {
	case HookSessionStart:
		c, err := h.Context(ctx)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "SessionStart", "additionalContext": c.Text,
		}})
	case HookPreCompact:
		if err := need("transcript_path", in.TranscriptPath); err != nil {
			return nil, err
		}
		session, err := h.ingestHook(ctx, in.TranscriptPath)
		if err != nil {
			return nil, err
		}
		tok, err := h.SessionTokens(ctx, session)
		if err != nil {
			return nil, err
		}
		if err := h.appendReceipt(FlushReceipt{Session: session, Time: h.now().UTC().Format(time.RFC3339Nano), Tokens: tok.Tokens}); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"systemMessage": h.cfg.Memory.Compaction.FlushPrompt})
	case HookSessionEnd, HookStop:
		if err := need("transcript_path", in.TranscriptPath); err != nil {
			return nil, err
		}
		if _, err := h.ingestHook(ctx, in.TranscriptPath); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"suppressOutput": true})
	}
	return nil, fmt.Errorf("%w: unknown hook %q (session-start, pre-compact, session-end, stop)", ErrBadInput, event)
}

// ingestHook imports a Claude Code transcript and names its session.
func (h *Host) ingestHook(ctx context.Context, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%w: transcript_path %q is not absolute", ErrBadInput, path)
	}
	r, err := h.Ingest(ctx, IngestRequest{Paths: []string{path}, Format: FormatClaudeCode})
	if err != nil {
		return "", err
	}
	return r.Files[0].Session, nil
}
