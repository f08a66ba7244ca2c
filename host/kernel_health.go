package host

import (
	"context"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/health"
)

// RecoverIndex moves a corrupt index aside and rebuilds it (recover.go).
func (k kernel) RecoverIndex(ctx context.Context, cause error, gen int64) (string, error) {
	return k.h.recoverIndex(ctx, cause, gen)
}

// MovedAside is where Open moved a corrupt index, if it did.
func (k kernel) MovedAside() string { return k.h.movedAside.Load().(string) }

// ClearMovedAside forgets it: the index was rebuilt since.
func (k kernel) ClearMovedAside() { k.h.movedAside.Store("") }

// WatcherFacts is what the file watcher did (watch.go).
func (k kernel) WatcherFacts() health.Watcher { return k.h.watch.facts() }

// MoreChecks are the checks other features judge: the vault's links and,
// in a memhost git repository, federation's.
func (k kernel) MoreChecks(ctx context.Context) []memhost.HealthCheck {
	checks := []memhost.HealthCheck{k.h.LinksCheck(ctx)}
	if c, ok := k.h.FederationCheck(ctx); ok {
		checks = append(checks, c)
	}
	return checks
}
