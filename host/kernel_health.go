package host

import (
	"context"
	"time"

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
	checks := []memhost.HealthCheck{k.h.impl.LinksCheck(ctx), k.h.privacyCheck(), k.h.secretsCheck(ctx)}
	if c, ok := k.h.impl.FederationCheck(ctx); ok {
		checks = append(checks, c)
	}
	return checks
}

// SessionEnded writes the episode logs of a session that ended (the
// session-end and stop hooks): the transcript is stored by then, so
// trouble with a page is logged, not the hook's failure.
func (k kernel) SessionEnded(ctx context.Context, session string) {
	r, err := k.h.impl.EpisodeService.SessionEnded(ctx, session)
	if err != nil {
		k.h.log.Warn("episode log not written", "session", session, "err", err)
	}
	for _, w := range r.Warnings {
		k.h.log.Warn(w)
	}
}

// EpisodeFacts is today's episode log beside today's conversations.
func (k kernel) EpisodeFacts(ctx context.Context) health.Episodes {
	day := k.h.Now().Format(time.DateOnly)
	st, err := k.h.impl.EpisodeService.DayStatus(ctx, day)
	e := health.Episodes{Path: st.Path, Messages: st.Messages, Newest: st.Newest, Exists: st.Exists, State: st.State}
	if err != nil {
		e.Err = err.Error()
	}
	return e
}
