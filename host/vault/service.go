package vault

import (
	"context"
	"time"

	"github.com/memhost/memhost/host/indexer"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/sdk"
)

// Kernel is what the VaultService uses of the Host.
type Kernel interface {
	Index() *index.DB
	Indexer() *indexer.Indexer
	Notebook() *notebook.Notebook
	Once() *once.Writes
	Now() time.Time
	Location() *time.Location
	WithIndex(ctx context.Context, fn func() error) error
	IndexWritten(ctx context.Context, rels ...string) []string
	PageExists(rel string) bool
	// Generator is the configured generator plugin, held until release
	// (a rollup's summary).
	Generator(ctx context.Context) (sdk.Generator, func(), error)
}

// VaultService runs the operations on the notebook as a vault of linked
// pages: links, mv (rewriting the links to a moved page), rollup and
// prune of the daily logs. The Host embeds it.
type VaultService struct {
	k Kernel
	// The unresolved links of one vault generation, and the notebook's
	// attachments (ops_unresolved.go).
	unresolved      unresolvedCache
	attachmentsKept attachmentCache
}

// New returns the service over k.
func New(k Kernel) *VaultService { return &VaultService{k: k} }
