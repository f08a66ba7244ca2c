// Package federated makes a home a memhost git repository and keeps it
// one: every write's change is committed (it subscribes to the change
// bus), the watcher's edits too, the remote is synced on a schedule and on
// request, conflicts are reported in status and health; and a home is
// exported to an archive or merged from one. The git work itself is
// host/federation's. It imports memhost, the lower host packages and
// host/federation; the Host embeds its FederationService.
package federated

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/indexer"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/sessions"
)

// Kernel is what the FederationService uses of the Host.
type Kernel interface {
	Home() string
	// FindSecret finds a secret in a file about to leave the machine
	// (nil when the secrets policy is allow).
	FindSecret(data []byte) (memhost.HeldBack, bool)
	// Redact applies the home's secrets policy to text given in field.
	Redact(field, text string) (string, []memhost.Redaction, error)
	Notebook() *notebook.Notebook
	Sessions() *sessions.Store
	Indexer() *indexer.Indexer
	Config() *config.Config
	EditConfig(edit func(*config.Config))
	// RecheckConfig reads config.yaml again (an import may bring one).
	RecheckConfig()
	Log() *slog.Logger
	Now() time.Time
	// Publish publishes what op, run with req outside the operation
	// chain (by a schedule, a hook or another operation), changed.
	Publish(op api.Operation, req, resp any, err error)
}

// FederationService runs git federation and archives for a home.
type FederationService struct {
	k   Kernel
	fed atomic.Pointer[fedState] // nil unless the home is a memhost git repository
}

// New returns the service over k.
func New(k Kernel) *FederationService { return &FederationService{k: k} }

// FlushCommits commits the pending changes now (tests, and a caller that
// must see them in git at once); nothing when the home is not federated.
func (fd *FederationService) FlushCommits(ctx context.Context) error {
	if f := fd.fed.Load(); f != nil {
		return f.committer.Flush(ctx)
	}
	return nil
}
