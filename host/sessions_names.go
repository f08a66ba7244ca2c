package host

import "github.com/memhost/memhost/host/sessions"

// Transcript types, from package sessions.
type (
	Turn          = sessions.Turn
	FlushReceipt  = sessions.FlushReceipt
	IngestFile    = sessions.Imported
	SessionTokens = sessions.Tokens
	SessionCheck  = sessions.Check
	// SessionCompactResponse describes the compaction entry written.
	SessionCompactResponse = sessions.Compacted
)

// Transcript formats Ingest reads.
const (
	FormatAuto       = sessions.FormatAuto
	FormatMemhost    = sessions.FormatMemhost
	FormatClaudeCode = sessions.FormatClaudeCode
)
