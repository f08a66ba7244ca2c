// Package embedq gives the index's chunks their vectors. It resolves the
// active embeddings provider (memory.embedding.plugin, else the local one
// when installed), says whether semantic search can run now and why not,
// works through the embedding queue (chunks without a vector for the
// active model, kept in the index, so nothing is lost when a plugin dies)
// with the embedding cache in front of the provider, and owns the one
// background worker that drains the queue in a long-lived process.
package embedq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/index/vectors"
	"github.com/memhost/memhost/registry"
	"github.com/memhost/memhost/sdk"
)

// ErrNotReady is matched (errors.Is) by every *NotReadyError.
var ErrNotReady = errors.New("embeddings provider not ready")

// NotReadyError says why semantic search cannot run now. Its kind is
// fault.Unavailable.
type NotReadyError struct {
	Reason string // for people: "model downloading 40%"
	// Preparing means the provider is downloading or loading its model
	// and will be ready by itself.
	Preparing bool
	// NoProvider means no provider is configured or installed: search is
	// keyword-only by choice, and there is nothing to retry.
	NoProvider bool
	// Missing means the configured provider is not installed.
	Missing bool
}

func (e *NotReadyError) Error() string         { return ErrNotReady.Error() + ": " + e.Reason }
func (e *NotReadyError) Is(target error) bool  { return target == ErrNotReady }
func (e *NotReadyError) FaultKind() fault.Kind { return fault.Unavailable }
func notReady(format string, args ...any) error {
	return &NotReadyError{Reason: fmt.Sprintf(format, args...)}
}

// Reason is the words a keyword-only answer gives for err.
func Reason(err error) string {
	var nr *NotReadyError
	if errors.As(err, &nr) {
		return nr.Reason
	}
	return err.Error()
}

func preparing(err error) bool {
	var nr *NotReadyError
	return errors.As(err, &nr) && nr.Preparing
}

// Installed reports whether err leaves the active provider installed:
// not a provider missing from the plugin folders, nor none at all.
func Installed(err error) bool {
	var nr *NotReadyError
	return !errors.As(err, &nr) || !nr.Missing && !nr.NoProvider
}

// NoProvider reports whether err says no provider is configured.
func NoProvider(err error) bool {
	var nr *NotReadyError
	return errors.As(err, &nr) && nr.NoProvider
}

// loadWait bounds how long a call waits for a provider whose model is
// loading (not downloading) before answering keyword-only.
const loadWait = 10 * time.Second

// DefaultPlugin is used when memory.embedding.plugin is empty and it is
// installed.
const DefaultPlugin = "local"

// ProviderName is the configured plugin, or the default when installed.
func (q *Queue) ProviderName() (string, error) { return q.providerName(q.cfg()) }

func (q *Queue) providerName(cfg *config.Config) (string, error) {
	name := cfg.Memory.Embedding.Plugin
	if name != "" {
		return name, nil
	}
	names := q.opts.Registry.Names()
	for _, n := range names {
		if n == DefaultPlugin {
			return n, nil
		}
	}
	reason := "no embeddings provider: memhost-embeddings-local is not installed beside memhost (make build builds it)"
	if len(names) > 0 {
		reason += "; or memhost plugins use " + strings.Join(names, "|")
	}
	return "", &NotReadyError{Reason: reason, NoProvider: true}
}

// Semantic is the state of semantic search for one call: the active
// provider, ready, and the model its vectors are of.
type Semantic struct {
	Provider *registry.Provider
	Name     string
	Info     sdk.Info
	Model    vectors.Model
	release  func()
}

// Release lets the registry stop the provider again (see
// registry.Registry.Acquire); call it when the call is done with it.
func (s *Semantic) Release() { s.release() }

// Ready returns the active provider, held, when it can embed now (the
// caller must Release it), or a *NotReadyError saying why.
func (q *Queue) Ready(ctx context.Context) (*Semantic, error) {
	cfg := q.cfg() // one snapshot: the name and its options agree
	name, err := q.providerName(cfg)
	if err != nil {
		return nil, err
	}
	p, release, err := q.opts.Registry.Acquire(ctx, name, cfg.Memory.Embedding.Options[name])
	sem, err := q.ready(ctx, name, p, err)
	if err != nil {
		release()
		return nil, err
	}
	sem.release = release
	return sem, nil
}

func (q *Queue) ready(ctx context.Context, name string, p *registry.Provider, err error) (*Semantic, error) {
	if errors.Is(err, registry.ErrUnknownPlugin) {
		installed := strings.Join(q.opts.Registry.Names(), ", ")
		if installed == "" {
			installed = "none"
		}
		return nil, &NotReadyError{Missing: true, Reason: fmt.Sprintf(
			"embeddings plugin %q is not in the plugin folders (installed: %s); memory.embedding.plugin in config.yaml names it", name, installed)}
	}
	if err != nil && p == nil {
		return nil, notReady("%v", err)
	}
	if info, ok := p.RecentlyReady(readyFresh); ok {
		return semantic(name, p, info), nil
	}
	st, err := StatusAfterLoading(ctx, p)
	if err != nil {
		return nil, err
	}
	switch st.State {
	case sdk.StateReady:
	case sdk.StateDownloading:
		reason := fmt.Sprintf("model downloading %.0f%%", st.Progress*100)
		if st.Progress == 0 {
			reason = downloadStarting // nothing has arrived yet, maybe nothing will
		}
		return nil, &NotReadyError{Reason: reason, Preparing: true}
	case sdk.StateLoading:
		return nil, &NotReadyError{Reason: "model loading", Preparing: true}
	default:
		msg := st.Message
		if msg == "" {
			msg = "plugin " + name + " is in error"
		}
		return nil, notReady("%s", msg)
	}
	info, err := p.Info(ctx)
	if err != nil {
		return nil, notReady("%v", err)
	}
	if info.Dimensions <= 0 || info.ModelID == "" {
		return nil, notReady("plugin %s reports no model or dimensions", name)
	}
	p.MarkReady(info)
	return semantic(name, p, info), nil
}

// readyFresh is how long a passed readiness check (a Status and an Info
// call to the plugin, ~1 ms together in the server at 110k chunks) stands
// for the calls that follow, such as an agent's burst of recalls: the
// embedding each makes is the check that counts, and a failed call, a
// Configure or a restart forgets it (registry.Provider.RecentlyReady).
const readyFresh = 2 * time.Second

func semantic(name string, p *registry.Provider, info sdk.Info) *Semantic {
	return &Semantic{Provider: p, Name: name, Info: info,
		Model: vectors.Model{Provider: name, Model: info.ModelID, Dimensions: info.Dimensions}}
}

// StatusAfterLoading returns the provider's status, waiting up to loadWait
// while its model is loading: a model loads in moments. A dead plugin
// reports StateError with why.
func StatusAfterLoading(ctx context.Context, p *registry.Provider) (sdk.Status, error) {
	st, _ := p.Status(ctx)
	for deadline := time.Now().Add(loadWait); st.State == sdk.StateLoading && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		st, _ = p.Status(ctx)
	}
	return st, nil
}

// ForSearch prepares semantic search for a recall: the provider must be
// ready and every chunk embedded for its model. With a worker running
// (a long-lived process) the recall never embeds or changes the index: it
// kicks the worker, waits within memory.embedding.recallBudgetMs for a
// backlog the worker clears in that time (waitWorker), and answers
// keyword-only while a larger one is worked through.
// Without one (a one-shot CLI call), queued chunks are embedded first,
// within memory.embedding.recallBudgetMs, and the rest is left to the
// background (Options.Background). The provider returned is held: the
// caller must Release it.
func (q *Queue) ForSearch(ctx context.Context) (*Semantic, error) {
	var sem *Semantic
	err := q.missingModel()
	if err == nil {
		sem, err = q.Ready(ctx)
	}
	if err != nil {
		if preparing(err) {
			q.Wake() // the download must outlive a one-shot process
		}
		return nil, err
	}
	if err := q.searchable(ctx, sem); err != nil {
		sem.Release()
		return nil, err
	}
	return sem, nil
}

// missingModel is the not-ready error of a provider whose model the host
// knows is missing (Options.ModelMissing), with the words the provider
// would give, or nil to ask the provider. A download that failed lately
// waits for its retry; one that is due is the background's to start (the
// Background hook, via Wake), unless a worker runs: its provider, already
// started, reports the download's progress.
func (q *Queue) missingModel() error {
	if q.opts.ModelMissing == nil {
		return nil
	}
	cfg := q.cfg()
	name, err := q.providerName(cfg)
	if err != nil {
		return nil // Ready says why
	}
	reason, missing := q.opts.ModelMissing(name, cfg.Memory.Embedding.Options[name])
	switch {
	case !missing:
		return nil
	case reason != "":
		return notReady("%s", reason)
	case q.HasWorker():
		return nil
	}
	return &NotReadyError{Reason: downloadStarting, Preparing: true}
}

// downloadStarting is the reason of a model whose download has not
// brought anything yet.
const downloadStarting = "model download starting"

// searchable checks that every chunk has a vector of sem's model,
// embedding within the recall budget when no worker runs.
func (q *Queue) searchable(ctx context.Context, sem *Semantic) error {
	vec := q.opts.Vectors
	cur, err := vec.Model(ctx)
	if err != nil {
		return notReady("%v", err)
	}
	worker := q.HasWorker()
	maxFailures := q.cfg().Health.DeadAfterFailures
	if cur != sem.Model {
		if worker {
			q.Kick()
			if q.waitWorker(ctx, sem, true, maxFailures) {
				return nil
			}
			return q.progress(ctx, sem, true)
		}
		if _, err := vec.SetModel(ctx, sem.Model); err != nil {
			return notReady("%v", err)
		}
	}
	// Dead chunks (failed too often) are not waited for.
	pending, err := vec.HasLivePending(ctx, sem.Info.ModelID, maxFailures)
	if err != nil {
		return err
	}
	if budget := q.cfg().Memory.Embedding.RecallBudgetMs; pending && budget > 0 && !worker {
		_, err := q.Run(ctx, time.Duration(budget)*time.Millisecond)
		if err != nil && !errors.Is(err, ErrNotReady) {
			q.opts.Log.Warn("embedding before search failed", "err", err)
		}
		if pending, err = vec.HasLivePending(ctx, sem.Info.ModelID, maxFailures); err != nil {
			return err
		}
	}
	if pending {
		q.Wake()
		if worker && q.waitWorker(ctx, sem, false, maxFailures) {
			return nil
		}
		return q.progress(ctx, sem, false)
	}
	return nil
}

// waitWorker waits, within the recall budget, for the worker to embed a
// backlog of at most one batch (Memory.Embedding.BatchSize live chunks;
// all: every chunk, the model having changed), and reports whether it did: a
// search then answers hybrid as one run in its own process would (which
// embeds that much itself first) rather than keyword-only with a
// progress note a second before the vectors are there. A larger backlog
// is waited for too when at most one batch of it is new to the embedding
// cache (pages moved: prune's daily/ to daily/archive/, a rename, a
// restore): the rest is the cache's to give, not the provider's to
// embed. Any other is not waited for: the server answers at once.
func (q *Queue) waitWorker(ctx context.Context, sem *Semantic, all bool, maxFailures int) bool {
	cfg := q.cfg()
	budget := time.Duration(cfg.Memory.Embedding.RecallBudgetMs) * time.Millisecond
	vec := q.opts.Vectors
	var backlog int
	if all {
		emb, pending, err := vec.Counts(ctx)
		if err != nil {
			return false
		}
		backlog = emb + pending
	} else {
		pending, _, err := vec.QueueCounts(ctx, sem.Info.ModelID, maxFailures) // the dead are not waited for
		if err != nil {
			return false
		}
		backlog = pending
	}
	if budget <= 0 {
		return false
	}
	deadline := time.Now().Add(budget)
	if backlog > cfg.Memory.Embedding.BatchSize {
		if all || backlog > maxCachedBacklog {
			return false
		}
		bctx, cancel := context.WithDeadline(ctx, deadline)
		fresh, ok, err := q.freshBacklog(bctx, sem.Info.ModelID, maxFailures, maxCachedBacklog)
		cancel()
		if err != nil {
			q.opts.Log.Debug("what the embedding cache holds of the backlog is unknown", "err", err)
		}
		if err != nil || !ok || fresh > cfg.Memory.Embedding.BatchSize {
			return false
		}
	}
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
		if cur, err := vec.Model(ctx); err != nil || cur != sem.Model {
			continue
		}
		if left, err := vec.HasLivePending(ctx, sem.Info.ModelID, maxFailures); err == nil && !left {
			return true
		}
	}
	return false
}

// maxCachedBacklog is the largest backlog (chunks) waitWorker looks into
// for what the cache holds: it bounds the check (the hashes read from the
// index and looked up in the cache) and the worker's batches waited for;
// not tuned on a measure: a month of daily logs moved into the archive is
// a few hundred chunks.
const maxCachedBacklog = 2000

// freshBacklog counts the distinct texts of live chunks (see
// vectors.DB.PendingHashes) waiting for a vector of model that the
// embedding cache does not hold; ok is false when more than limit texts
// wait (they are not looked at).
func (q *Queue) freshBacklog(ctx context.Context, model string, maxFailures, limit int) (n int, ok bool, err error) {
	hashes, err := q.opts.Vectors.PendingHashes(ctx, limit+1, model, maxFailures)
	if err != nil || len(hashes) > limit {
		return 0, false, err
	}
	cache, err := q.openCache(ctx)
	if err != nil {
		return 0, false, err
	}
	have, err := cache.Count(ctx, model, hashes)
	if err != nil {
		return 0, false, err
	}
	return len(hashes) - have, true, nil
}

// progress is the not-ready error of a queue being worked through; all
// means every chunk waits (the model changed and the worker has not
// started on it yet).
func (q *Queue) progress(ctx context.Context, sem *Semantic, all bool) error {
	emb, pending, err := q.opts.Vectors.Counts(ctx)
	if err != nil {
		return err
	}
	if all {
		emb, pending = 0, emb+pending
	}
	return Progress(sem.Name, emb, pending)
}

// Progress is the not-ready error of a provider with pending of
// embedded+pending chunks still to embed.
func Progress(name string, embedded, pending int) error {
	total := embedded + pending
	return notReady("embedding with %s: %d of %d chunks done (%.0f%%); hybrid when complete",
		name, embedded, total, 100*float64(embedded)/float64(max(total, 1)))
}
