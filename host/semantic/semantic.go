// Package semantic is the semantic tier of memory: the fact operations
// (fact add and forget, facts, entities, relations, and the current facts
// that reach the context block) over the entity pages of the notebook and
// the index's fact tables, and the consolidation that fills them from the
// episodes (transcript turns and daily-log entries) through the generator,
// with its schedule. The files are the truth: facts live as lines on
// entity pages (host/facts parses them), the index's tables are derived.
// It imports memhost, the lower host packages, index, registry and sdk;
// the Host embeds its FactService and hands it a Kernel.
package semantic

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/embedq"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/sdk"
)

// Kernel is what the service uses of the Host.
type Kernel interface {
	Home() string
	// Redact applies the home's secrets policy to text given in field.
	Redact(field, text string) (string, []memhost.Redaction, error)
	Index() *index.DB
	Notebook() *notebook.Notebook
	Sessions() *sessions.Store
	Queue() *embedq.Queue
	Once() *once.Writes
	Config() *config.Config
	Location() *time.Location
	Now() time.Time
	Log() *slog.Logger
	WithIndex(ctx context.Context, fn func() error) error
	SyncBeforeSearch(ctx context.Context) error
	IndexWritten(ctx context.Context, rels ...string) []string
	PageExists(rel string) bool
	// Publish publishes what op, run with req outside the operation
	// chain (by a schedule, a hook or another operation), changed.
	Publish(op api.Operation, req, resp any, err error)
	// Generator is the configured generator plugin, held until release.
	Generator(ctx context.Context) (sdk.Generator, func(), error)
}

// FactService runs the fact operations and consolidation.
type FactService struct {
	k   Kernel
	gen atomic.Pointer[generatorBox] // consolidation's text model (SetGenerator)
	// consolidateUnit is the consolidation schedule's minute; 0 is a
	// minute (tests shorten it).
	consolidateUnit time.Duration
}

// New returns the service over k; minute is the length of the
// consolidation schedule's minute (tests shorten it; 0 is a minute).
func New(k Kernel, minute time.Duration) *FactService {
	return &FactService{k: k, consolidateUnit: minute}
}
