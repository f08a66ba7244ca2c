package health

import (
	"context"
	"log/slog"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/embedq"
	"github.com/memhost/memhost/host/indexer"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/index"
)

// Kernel is what the HealthService uses of the Host: the home's parts
// it gathers facts from and repairs, and the checks of other features.
type Kernel interface {
	Home() string
	Index() *index.DB
	Indexer() *indexer.Indexer
	Notebook() *notebook.Notebook
	Sessions() *sessions.Store
	Queue() *embedq.Queue
	Config() *config.Config
	Location() *time.Location
	Now() time.Time
	Log() *slog.Logger
	Rel(path string) string
	// RecoverIndex moves a corrupt index aside and rebuilds it.
	RecoverIndex(ctx context.Context, cause error, gen int64) (string, error)
	// MovedAside is where Open moved a corrupt index ("" if it did not,
	// or a repair has rebuilt it since); ClearMovedAside forgets it.
	MovedAside() string
	ClearMovedAside()
	// EpisodeFacts is today's episode log beside today's conversations.
	EpisodeFacts(ctx context.Context) Episodes
	// WatcherFacts is what the file watcher did.
	WatcherFacts() Watcher
	// MoreChecks are the checks of other features (the vault's links,
	// federation's remote), judged by them.
	MoreChecks(ctx context.Context) []memhost.HealthCheck
}

// HealthService runs the Health operation: it gathers Facts from the
// home, repairs what it can when asked, Evaluates and writes the report;
// while the home is watched it runs on a schedule (RunSchedule).
// The Host embeds it.
type HealthService struct {
	k     Kernel
	after func(time.Duration) <-chan time.Time // the schedule's timer; nil is time.After
}

// New returns the service over k. after is the schedule's timer (tests
// fire it themselves); nil is time.After.
func New(k Kernel, after func(time.Duration) <-chan time.Time) *HealthService {
	return &HealthService{k: k, after: after}
}
