// Package conversations holds the conversation operations over the
// transcript store (host/sessions): append a turn, list sessions, ingest
// transcripts (Claude Code's among them), token counts, the compaction
// check and the compaction entry with its summary by the generator, and
// the Claude Code hooks. It imports memhost and the lower host packages;
// the Host embeds its SessionService.
package conversations

import (
	"context"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/knowledge"
	"github.com/memhost/memhost/sdk"
)

// Kernel is what the SessionService uses of the Host.
type Kernel interface {
	Sessions() *sessions.Store
	Config() *config.Config
	Location() *time.Location
	IndexWritten(ctx context.Context, rels ...string) []string
	// Publish publishes what op, run with req outside the operation
	// chain (by a schedule, a hook or another operation), changed.
	Publish(op api.Operation, req, resp any, err error)
	// Generator is the configured generator plugin, held until release.
	Generator(ctx context.Context) (sdk.Generator, func(), error)
	// Context is the Context operation: the block an agent puts in its
	// system prompt (the session-start hook answers with it), or the
	// memory context for a query.
	Context(ctx context.Context, req memhost.ContextRequest) (memhost.ContextResponse, error)
	// SessionEnded writes the episode logs of the session's days; it
	// reports its own trouble (the transcript is stored by then).
	SessionEnded(ctx context.Context, session string)
	// Consolidate extracts facts from the episodes not yet consolidated.
	Consolidate(ctx context.Context, req knowledge.ConsolidateRequest) (knowledge.ConsolidateResponse, error)
	// CheckContext checks a context request's memory settings.
	CheckContext(req memhost.ContextRequest) error
}

// SessionService runs the conversation operations.
type SessionService struct{ k Kernel }

// New returns the service over k.
func New(k Kernel) *SessionService { return &SessionService{k: k} }
