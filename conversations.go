package memhost

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/internal/jsoncheck"
	"github.com/memhost/memhost/internal/origin"
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
	// Channel and SourceID say where the turn came from (Turn.Channel):
	// a channel is a word of letters, digits, '.', '_' and '-'; a source
	// id is any text without spaces or control characters, and needs a
	// channel.
	Channel  string `json:"channel,omitempty"`
	SourceID string `json:"sourceId,omitempty"`
	End      bool   `json:"end,omitempty"` // the turn ends the session: its episode logs are written
	// Private marks the session private: searchable here, never
	// committed, pushed or exported (sessions/.private.jsonl).
	Private bool `json:"private,omitempty"`
}

// SessionAppendResponse is the turn written.
type SessionAppendResponse struct {
	Session string `json:"session"`
	Path    string `json:"path"`
	Turn    Turn   `json:"turn"`
	// Warnings are troubles after the turn was written (a repaired torn
	// line, an index that could not be updated): the turn is stored.
	Warnings []string `json:"warnings,omitempty"`
	// Redacted are the secrets replaced before the text was stored.
	Redacted []Redaction `json:"redacted,omitempty"`
}

// Check reports a Meta that is not a JSON object; a client checks it
// before sending the request, since invalid JSON cannot be sent as JSON.
func (r SessionAppendRequest) Check() error {
	if err := origin.Check(r.Channel, r.SourceID); err != nil {
		return err
	}
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
	Sessions []SessionSummary `json:"sessions"`
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
	Files []IngestFile `json:"files"`
}

// SessionTokensRequest names a session.
type SessionTokensRequest struct {
	Session string `json:"session"`
}

// SessionCheckRequest asks whether a flush or compaction is due before a
// message of Incoming tokens is added.
type SessionCheckRequest struct {
	Session  string `json:"session"`
	Incoming int    `json:"incoming"`
}

// SessionCompactRequest compacts a session with a summary.
type SessionCompactRequest struct {
	Session string `json:"session"`
	Summary string `json:"summary"`
	// Summarize has the generator write the summary (summarize.go);
	// Summary must then be empty.
	Summarize bool `json:"summarize,omitempty"`
	// Facts also extracts the facts of the conversations not yet
	// consolidated (Consolidate) once the entry is written: the whole
	// compaction in one call (summarise, keep the turns indexed, extract
	// facts, write the checkpoint).
	Facts bool `json:"facts,omitempty"`
	// RequestID, when set, is the compaction entry's id: a run with the
	// id of one in the transcript writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
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

// Agent runtime hook events (Claude Code's hooks).
const (
	HookSessionStart = "session-start"
	HookPrompt       = "prompt" // UserPromptSubmit: the memory context for the prompt
	HookPreCompact   = "pre-compact"
	HookSessionEnd   = "session-end"
	HookStop         = "stop"
)

// HookEvents are the hook events Hook answers, in the order of a session.
var HookEvents = []string{HookSessionStart, HookPrompt, HookPreCompact, HookSessionEnd, HookStop}

// CheckHookEvent reports an event Hook does not answer, naming the known
// ones.
func CheckHookEvent(event string) error {
	if !slices.Contains(HookEvents, event) {
		return fault.BadInputf("event", "unknown hook %q (known: %s)", event, strings.Join(HookEvents, ", "))
	}
	return nil
}
