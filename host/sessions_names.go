package host

import "github.com/memhost/memhost/host/sessions"

// Transcript types, from package sessions.

// Transcript formats Ingest reads.
const (
	FormatAuto       = sessions.FormatAuto
	FormatMemhost    = sessions.FormatMemhost
	FormatClaudeCode = sessions.FormatClaudeCode
)
