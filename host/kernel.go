package host

import (
	"context"
	"log/slog"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/embedq"
	"github.com/memhost/memhost/host/indexer"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/index/vectors"
	"github.com/memhost/memhost/knowledge"
	"github.com/memhost/memhost/sdk"
)

// kernel is what the feature services (host/<feature>) see of the Host:
// each declares the narrow interface of what it uses, and Open hands them
// a kernel. The type is unexported so that only this package makes one;
// its methods are the Host's internals, not part of the Host's API.
type kernel struct{ h *Host }

// Home is the home folder.
func (k kernel) Home() string { return k.h.home }

// Index is the home's index.
func (k kernel) Index() *index.DB { return k.h.idx }

func (k kernel) Vectors() *vectors.DB { return k.h.vecs }

// Notebook is the home's notebook.
func (k kernel) Notebook() *notebook.Notebook { return k.h.notebook }

// FindSecret finds a secret in a file about to leave (redact.go).
func (k kernel) FindSecret(data []byte) (memhost.HeldBack, bool) { return k.h.findSecret(data) }

// Redact applies memory.privacy.secrets (redact.go).
func (k kernel) Redact(field, text string) (string, []memhost.Redaction, error) {
	return k.h.redact(field, text)
}

// Sessions is the home's transcript store.
func (k kernel) Sessions() *sessions.Store { return k.h.sessions }

// Indexer syncs files into the index.
func (k kernel) Indexer() *indexer.Indexer { return k.h.indexer }

// Queue is the embedding queue and its provider.
func (k kernel) Queue() *embedq.Queue { return k.h.queue }

// Once runs the page writes a client may retry.
func (k kernel) Once() *once.Writes { return k.h.once }

// Config is the configuration in force (one snapshot: do not change it).
func (k kernel) Config() *config.Config { return k.h.config() }

// EditConfig changes config.yaml and the configuration in force.
func (k kernel) EditConfig(edit func(*config.Config)) { k.h.editConfig(edit) }

// Location is the configured time zone.
func (k kernel) Location() *time.Location { return k.h.loc() }

// Now is the current time (a clock tests set).
func (k kernel) Now() time.Time { return k.h.now() }

// Log receives progress and warnings.
func (k kernel) Log() *slog.Logger { return k.h.log }

// Rel names a file of the home relative to it.
func (k kernel) Rel(path string) string { return k.h.rel(path) }

// WithIndex runs fn, rebuilding a corrupt index and running fn once more.
func (k kernel) WithIndex(ctx context.Context, fn func() error) error { return k.h.withIndex(ctx, fn) }

// SyncBeforeSearch brings the index up to date before a search, unless
// a watcher keeps it so.
func (k kernel) SyncBeforeSearch(ctx context.Context) error { return k.h.syncBeforeSearch(ctx) }

// IndexWritten indexes files just written; trouble comes back as warnings.
func (k kernel) IndexWritten(ctx context.Context, rels ...string) []string {
	return k.h.indexWritten(ctx, rels...)
}

// PageExists reports whether the notebook holds the page.
func (k kernel) PageExists(rel string) bool { return k.h.pageExists(rel) }

// Publish publishes what op, run outside the chain, changed.
func (k kernel) Publish(op api.Operation, req, resp any, err error) { k.h.publish(op, req, resp, err) }

// ModelsDir is the folder of downloaded models.
func (k kernel) ModelsDir() string { return k.h.providers.ModelStore().Dir }

// Generator is the configured generator plugin, held until release.
func (k kernel) Generator(ctx context.Context) (sdk.Generator, func(), error) {
	return k.h.providers.Generator(ctx)
}

// Consolidate extracts facts from the episodes not yet consolidated.
func (k kernel) Consolidate(ctx context.Context, req knowledge.ConsolidateRequest) (knowledge.ConsolidateResponse, error) {
	return k.h.Consolidate(ctx, req) // through the chain: it publishes
}

// CheckContext checks a context request's memory settings.
func (k kernel) CheckContext(req memhost.ContextRequest) error {
	return k.h.impl.RecallService.CheckContext(req)
}

// Context is the Context operation.
func (k kernel) Context(ctx context.Context, req memhost.ContextRequest) (memhost.ContextResponse, error) {
	return k.h.Context(ctx, req)
}

// RecheckConfig reads config.yaml again.
func (k kernel) RecheckConfig() { k.h.RecheckConfig() }

// Path resolves a configured path against the home.
func (k kernel) Path(p string) string { return k.h.path(p) }

// SearchFacts is recall's FACTS group (the facts service).
func (k kernel) SearchFacts(ctx context.Context, query string, limit int, minScore float64) ([]knowledge.FactRow, error) {
	return k.h.impl.FactService.SearchFacts(ctx, query, limit, minScore)
}
