package memhost

import (
	"encoding/json"

	"github.com/memhost/memhost/knowledge"
)

// Tokens is an estimate of a session's working context.
type SessionTokens struct {
	Session       string `json:"session"`
	Tokens        int    `json:"tokens"` // since the last compaction, its summary included
	Turns         int    `json:"turns"`  // turns since the last compaction
	Compactions   int    `json:"compactions"`
	LastCompacted string `json:"lastCompacted,omitempty"`
}

// Check says whether a flush or a compaction is due.
type SessionCheck struct {
	Session   string `json:"session"`
	Tokens    int    `json:"tokens"`   // working context now
	Incoming  int    `json:"incoming"` // the message about to be added
	Total     int    `json:"total"`
	FlushAt   int    `json:"flushAt"`   // contextWindow - reserveTokens - softThresholdTokens
	CompactAt int    `json:"compactAt"` // contextWindow - reserveTokens
	// Messages counts the messages since the last flush (or compaction),
	// the incoming one included; FlushEvery is
	// memory.compaction.flushEveryMessages (0: off).
	Messages       int    `json:"messages"`
	FlushEvery     int    `json:"flushEvery"`
	FlushDue       bool   `json:"flushDue"`
	CompactionDue  bool   `json:"compactionDue"`
	AlreadyFlushed bool   `json:"alreadyFlushed"` // a flush was asked in this compaction cycle
	Prompt         string `json:"prompt,omitempty"`
}

// Compacted describes the compaction entry written.
type SessionCompactResponse struct {
	Session      string `json:"session"`
	FirstTurn    string `json:"firstTurn"`
	LastTurn     string `json:"lastTurn"`
	RemovedCount int    `json:"removedCount"` // turns the summary replaces in the working context
	KeptTokens   int    `json:"keptTokens"`   // recent turns left as they are
	Turn         Turn   `json:"turn"`
	Model        string `json:"model,omitempty"` // the generator's model, when it wrote the summary
	// Consolidated is what Facts extracted (nil without Facts, or when
	// it failed: see Warnings).
	Consolidated *knowledge.ConsolidateResponse `json:"consolidated,omitempty"`
	// Warnings are troubles after the entry was written (a repaired torn
	// line, an index that could not be updated): the entry is stored.
	Warnings []string `json:"warnings,omitempty"`
}

// Imported reports one imported file.
type IngestFile struct {
	Path     string   `json:"path"`
	Session  string   `json:"session"`
	Format   string   `json:"format"`
	Added    int      `json:"added"`    // turns appended
	Known    int      `json:"known"`    // turns already in the session (skipped)
	Skipped  int      `json:"skipped"`  // lines left out: not turns (metadata, empty) or malformed
	Problems []string `json:"problems"` // malformed lines, file:line
	// Repaired says what was repaired in the session's transcript before
	// the import (an incomplete last line left by an interrupted write).
	Repaired []string `json:"repaired,omitempty"`
	// Warnings are troubles after the turns were written (the index could
	// not be updated, or was rebuilt): the turns are stored.
	Warnings []string `json:"warnings,omitempty"`
	// Redacted are the secrets replaced before the text was stored.
	Redacted []Redaction `json:"redacted,omitempty"`
}

// FlushReceipt says a pre-compaction flush was asked of the agent.
type FlushReceipt struct {
	Session string `json:"session"`
	Time    string `json:"time"`
	Tokens  int    `json:"tokens"` // working context at the time, with the incoming message
}

// Summary describes one transcript.
type SessionSummary struct {
	Session     string `json:"session"`
	Path        string `json:"path"`            // index path, sessions/ID.jsonl
	Turns       int    `json:"turns"`           // entries but compactions
	Compactions int    `json:"compactions"`     // compaction entries
	First       string `json:"first,omitempty"` // the first entry's time
	Last        string `json:"last,omitempty"`  // the last entry's time
	SizeBytes   int64  `json:"sizeBytes"`
}

// Turn is one line of a transcript, in memhost's JSONL format. Speaker is
// kept when a transcript names who spoke.
type Turn struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"` // message | tool_call | tool_result | compaction
	Role       string          `json:"role,omitempty"`
	Speaker    string          `json:"speaker,omitempty"`
	Content    string          `json:"content"`
	Timestamp  string          `json:"timestamp,omitempty"`
	TokenCount int             `json:"tokenCount,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	// Channel and SourceID say where the turn came from: the channel
	// ("whatsapp", "telegram", "cli") and the chat, contact or jid in it
	// ("919876543210"); "" when the caller did not say.
	Channel  string `json:"channel,omitempty"`
	SourceID string `json:"sourceId,omitempty"`
}

// SessionPath is the index path of a session's transcript:
// "sessions/ID.jsonl".
func SessionPath(id string) string { return "sessions/" + id + ".jsonl" }
