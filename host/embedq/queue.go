package embedq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/index/embcache"
	"github.com/memhost/memhost/index/vectors"
	"github.com/memhost/memhost/internal/fsx"
	"github.com/memhost/memhost/registry"
	"github.com/memhost/memhost/sdk"
)

// Options configure a Queue. Every field but Background is required.
type Options struct {
	Vectors   *vectors.DB
	Registry  *registry.Registry
	Config    func() *config.Config // the configuration in force, read at every call
	CachePath string                // the embedding cache (cache/embeddings.db)
	LockPath  string                // brain/embed.lock: one process embeds at a time
	Log       *slog.Logger
	// Background, when set, is called (at most once per Queue) when chunks
	// are left in the queue and no worker runs, to have them embedded
	// without blocking the caller (the CLI starts `memhost embed`
	// detached).
	Background func() error
	// ModelMissing, when set, tells from the models folder alone whether
	// provider name's model is missing, so that a search does not start a
	// plugin only to hear that it cannot embed. missing false: the model
	// is there, or the provider is not one whose models the host knows;
	// ask the provider. reason: the words a search gives while the model
	// stays missing (its last download failed and waits for its retry),
	// or "" when a download is due.
	ModelMissing func(name string, options map[string]string) (reason string, missing bool)
	// Now is the clock of the worker's record (WorkerState); nil means
	// time.Now.
	Now func() time.Time
}

// Queue is the embedding queue of one index. Its methods may be called
// from many goroutines; the embedding itself runs in one process at a time
// (LockPath) and, within a process, one run at a time.
type Queue struct {
	opts   Options
	bgOnce sync.Once
	runMu  sync.Mutex // one run at a time in this process

	cacheMu sync.Mutex
	cache   *embcache.Cache // nil until first use

	workerMu sync.Mutex
	worker   *worker // nil when none runs
}

// New returns the queue of opts.Vectors.
func New(opts Options) *Queue { return &Queue{opts: opts} }

func (q *Queue) cfg() *config.Config { return q.opts.Config() }

func (q *Queue) now() time.Time {
	if q.opts.Now != nil {
		return q.opts.Now()
	}
	return time.Now()
}

// Close stops the worker and closes the cache.
func (q *Queue) Close() error {
	q.StopWorker()
	q.cacheMu.Lock()
	defer q.cacheMu.Unlock()
	if q.cache != nil {
		err := q.cache.Close()
		q.cache = nil
		return err
	}
	return nil
}

// openCache returns the embedding cache, opening it on first use.
func (q *Queue) openCache(ctx context.Context) (*embcache.Cache, error) {
	q.cacheMu.Lock()
	defer q.cacheMu.Unlock()
	if q.cache != nil {
		return q.cache, nil
	}
	c, err := embcache.Open(ctx, q.opts.CachePath)
	if err != nil {
		return nil, err
	}
	q.cache = c
	return c, nil
}

// Run works through the queue: chunks without a vector for the active
// provider's model get one, from the cache when it has it, else from the
// provider, in batches. It stops when the queue is empty, ctx ends, or
// budget (when > 0) is spent. A plugin failure stops the run with nothing
// lost: the queue lives in the index and the next run resumes it. One
// process embeds at a time; others return at once with Busy set (a run
// with a budget waits for the lock within it).
//
// An unbounded run (budget 0) waits for a model that is downloading or
// loading: that is what the background run is for.
func (q *Queue) Run(ctx context.Context, budget time.Duration) (memhost.EmbedResult, error) {
	start := time.Now()
	var res memhost.EmbedResult
	sem, err := q.Ready(ctx)
	for budget <= 0 && preparing(err) {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		sem, err = q.Ready(ctx)
	}
	if err != nil {
		return res, err
	}
	defer sem.Release()
	res.Provider, res.Model = sem.Name, sem.Info.ModelID
	unlock, ok, err := q.tryRun()
	// With a budget (a recall), wait within it for the process that holds
	// the queue: it may finish what this call would have done.
	for err == nil && !ok && budget > 0 && time.Since(start) < budget {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		unlock, ok, err = q.tryRun()
	}
	if err != nil {
		return res, err
	}
	vec := q.opts.Vectors
	if !ok {
		_, res.Pending, err = vec.Counts(ctx)
		res.Busy = true
		return res, err
	}
	defer unlock()
	if _, err := vec.SetModel(ctx, sem.Model); err != nil {
		return res, err
	}
	cache, err := q.openCache(ctx)
	if err != nil {
		return res, err
	}
	batch, maxFailures := q.batchFor(budget), q.cfg().Health.DeadAfterFailures
	crashes, downSince := 0, time.Time{}
	for budget <= 0 || time.Since(start) < budget {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		pending, err := vec.PendingLive(ctx, batch, sem.Info.ModelID, maxFailures)
		if err != nil {
			return res, err
		}
		if len(pending) == 0 {
			break
		}
		n, cached, err := q.embedBatch(ctx, sem, cache, pending)
		res.Embedded += n
		res.FromCache += cached
		if err != nil && budget <= 0 && providerDown(err) {
			// A run without a budget (memhost embed) waits for a crashed
			// plugin's restart and goes on, a few crashes in a row at most:
			// a text that kills the plugin every time is not waited on for
			// ever.
			if downSince.IsZero() {
				downSince = time.Now()
			}
			if !errors.Is(err, registry.ErrRestarting) && !errors.Is(err, registry.ErrStarting) {
				crashes++
			}
			if crashes <= crashRetries && time.Since(downSince) < restartWait {
				q.opts.Log.Warn("embedding: the provider is down; waiting for its restart", "err", err)
				select {
				case <-ctx.Done():
					return res, ctx.Err()
				case <-time.After(250 * time.Millisecond):
				}
				continue
			}
		}
		if err != nil {
			return res, err
		}
		crashes, downSince = 0, time.Time{}
	}
	res.Pending, res.Dead, err = vec.QueueCounts(ctx, sem.Info.ModelID, maxFailures)
	res.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	return res, err
}

// embedBatch embeds chunks, from the cache where it can. When the
// provider fails on the batch for a reason that may lie in the texts (not
// a plugin that is down, restarting or reconfigured), each text is tried
// alone: those that fail again have a failure counted against them (see
// vectors.DB.RecordFailures), the others are stored, and the error is
// returned so that the worker backs off before it retries.
func (q *Queue) embedBatch(ctx context.Context, sem *Semantic, cache *embcache.Cache, queued []vectors.QueuedChunk) (stored, cached int, err error) {
	chunks := make([]vectors.PendingChunk, len(queued))
	var failed []string // hashes that failed before
	for i, c := range queued {
		chunks[i] = c.PendingChunk
		if c.Failures > 0 {
			failed = append(failed, c.Hash)
		}
	}
	stored, cached, err = q.embedChunks(ctx, sem, cache, chunks)
	if err == nil || !(textFault(ctx, err) || crashed(err) && len(chunks) > 1) {
		if err == nil && len(failed) > 0 {
			err = q.opts.Vectors.ForgetFailures(ctx, sem.Info.ModelID, failed)
		}
		return stored, cached, err
	}
	batchErr := err
	stored, cached = 0, 0
	var bad, crashers []string
	worked := false
	for _, c := range chunks {
		n, fromCache, err := q.embedAlone(ctx, sem, cache, c)
		stored += n
		cached += fromCache
		switch {
		case err == nil:
			worked = true
			if slices.Contains(failed, c.Hash) {
				if err := q.opts.Vectors.ForgetFailures(ctx, sem.Info.ModelID, []string{c.Hash}); err != nil {
					return stored, cached, err
				}
			}
		case textFault(ctx, err):
			bad = append(bad, c.Hash)
			batchErr = err
		case crashed(err):
			crashers = append(crashers, c.Hash)
			batchErr = err
		default:
			return stored, cached, err
		}
	}
	// A text the plugin dies on, alone, while others embed: the text's
	// fault (counted, so that it ends dead instead of blocking the queue
	// for ever). Died on every text: the provider's.
	if len(crashers) > 0 && !worked {
		return stored, cached, batchErr
	}
	bad = append(bad, crashers...)
	if len(bad) == 0 {
		return stored, cached, nil
	}
	if err := q.opts.Vectors.RecordFailures(ctx, sem.Info.ModelID, bad, batchErr.Error()); err != nil {
		return stored, cached, err
	}
	return stored, cached, fmt.Errorf("%d of %d chunks failed to embed: %w", len(bad), len(chunks), batchErr)
}

// recallBatch is the most chunks a call of a run with a budget (a recall
// embedding what is queued before it searches) sends: the call that starts
// just before the budget ends is waited for, ~0.4 s at 32 with the local
// provider on 2 cores.
const recallBatch = 32

// batchFor is the chunks a call of a run with that budget sends: the
// configured batch, at most recallBatch within a budget (a call that
// starts just before the budget ends is waited for).
func (q *Queue) batchFor(budget time.Duration) int {
	batch := q.cfg().Memory.Embedding.BatchSize
	if budget > 0 {
		batch = min(batch, recallBatch)
	}
	return batch
}

// crashed reports whether err says the plugin process died during the call.
func crashed(err error) bool {
	var ee embedError
	return errors.As(err, &ee) && errors.Is(err, sdk.ErrUnavailable)
}

// embedAlone embeds one chunk, waiting (up to restartWait) for a plugin
// restarting after a crash of the text before.
func (q *Queue) embedAlone(ctx context.Context, sem *Semantic, cache *embcache.Cache, c vectors.PendingChunk) (int, int, error) {
	start := time.Now()
	for {
		n, fromCache, err := q.embedChunks(ctx, sem, cache, []vectors.PendingChunk{c})
		if !(errors.Is(err, registry.ErrRestarting) || errors.Is(err, registry.ErrStarting)) || time.Since(start) > restartWait {
			return n, fromCache, err
		}
		select {
		case <-ctx.Done():
			return n, fromCache, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// crashRetries and restartWait bound how long a run without a budget
// waits for a crashed provider: crashes in a row, and time since the
// provider went down.
const (
	crashRetries = 3
	restartWait  = time.Minute
)

// providerDown reports whether err says the provider process is gone or
// coming back (crashed, restarting, starting), not that it refused the
// texts.
func providerDown(err error) bool {
	var ee embedError
	return errors.As(err, &ee) && (errors.Is(err, sdk.ErrUnavailable) || errors.Is(err, registry.ErrRestarting) || errors.Is(err, registry.ErrStarting))
}

// textFault reports whether an embedding error may be caused by the texts
// embedded rather than by the provider's state: a plugin down,
// restarting, reconfigured, not ready, or a call cancelled says nothing
// about the texts.
func textFault(ctx context.Context, err error) bool {
	var ee embedError
	switch {
	case !errors.As(err, &ee):
		return false // the cache or the index failed, not the provider
	case ctx.Err() != nil, errors.Is(err, ErrNotReady), errors.Is(err, sdk.ErrUnavailable),
		errors.Is(err, registry.ErrRestarting), errors.Is(err, registry.ErrStarting),
		errors.Is(err, registry.ErrReconfigured), errors.Is(err, registry.ErrClosed),
		errors.Is(err, vectors.ErrModelChanged), errors.Is(err, context.Canceled):
		return false
	}
	return true
}

// embedError is an error of the provider's Embed call.
type embedError struct{ err error }

func (e embedError) Error() string { return e.err.Error() }
func (e embedError) Unwrap() error { return e.err }

func (q *Queue) embedChunks(ctx context.Context, sem *Semantic, cache *embcache.Cache, chunks []vectors.PendingChunk) (stored, cached int, err error) {
	hashes := make([]string, len(chunks))
	for i, c := range chunks {
		hashes[i] = c.Hash
	}
	vecs, err := cache.Get(ctx, sem.Info.ModelID, hashes)
	if err != nil {
		return 0, 0, err
	}
	cached = len(vecs)
	if err := cache.CountLookups(ctx, cached, len(chunks)-cached); err != nil {
		q.opts.Log.Warn("cannot count embedding cache look-ups", "err", err)
	}
	var texts, missing []string
	seen := map[string]bool{}
	for _, c := range chunks {
		if _, ok := vecs[c.Hash]; !ok && !seen[c.Hash] {
			seen[c.Hash] = true
			texts = append(texts, c.Text)
			missing = append(missing, c.Hash)
		}
	}
	if len(texts) > 0 {
		got, err := sem.Provider.Embed(ctx, texts, sdk.KindDocument)
		if errors.Is(err, registry.ErrReconfigured) {
			return 0, 0, notReady("%v; retrying", err) // as sameModel finds after the call
		}
		if err != nil {
			return 0, 0, embedError{err}
		}
		if err := sameModel(ctx, sem, got); err != nil {
			return 0, 0, err
		}
		fresh := make(map[string][]float32, len(got))
		for i, v := range got {
			fresh[missing[i]] = v
			vecs[missing[i]] = v
		}
		if err := cache.Put(ctx, sem.Info.ModelID, fresh); err != nil {
			return 0, 0, err
		}
	}
	out := make([]vectors.ChunkVector, 0, len(chunks))
	for _, c := range chunks {
		out = append(out, vectors.ChunkVector{ID: c.ID, Vector: vecs[c.Hash]})
	}
	stored, err = q.opts.Vectors.Put(ctx, sem.Info.ModelID, out)
	return stored, min(cached, stored), err
}

// sameModel checks that vectors came from the model sem names. A plugin
// process is shared by every caller in this process, and a caller with
// other options (a provider switch, config.yaml edited) reconfigures it:
// vectors made after that are of another model and must not be cached or
// stored under sem's model id. The dimensions are checked, and the model
// id asked again after the call; a change is a not-ready error, and the
// next run starts over with the new model.
func sameModel(ctx context.Context, sem *Semantic, vecs [][]float32) error {
	for _, v := range vecs {
		if len(v) != sem.Info.Dimensions {
			return notReady("provider %s was reconfigured while embedding (%d dimensions, not %d); retrying", sem.Name, len(v), sem.Info.Dimensions)
		}
	}
	info, err := sem.Provider.Info(ctx)
	if err != nil {
		return notReady("%v", err)
	}
	if info.ModelID != sem.Info.ModelID {
		return notReady("provider %s was reconfigured while embedding (model %s, not %s); retrying", sem.Name, info.ModelID, sem.Info.ModelID)
	}
	return nil
}

// tryRun takes the queue for one run without waiting: this process's
// run mutex, then the home's flock.
func (q *Queue) tryRun() (func(), bool, error) {
	if !q.runMu.TryLock() {
		return nil, false, nil
	}
	unflock, ok, err := tryLock(q.opts.LockPath)
	if !ok || err != nil {
		q.runMu.Unlock()
		return nil, ok, err
	}
	return func() { unflock(); q.runMu.Unlock() }, true, nil
}

// tryLock takes an exclusive flock on path without waiting.
func tryLock(path string) (unlock func(), ok bool, err error) {
	unlock, err = fsx.TryLock(path)
	switch {
	case errors.Is(err, fsx.ErrLocked):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return unlock, true, nil
}

// Wake has the queue worked through without blocking the caller: the
// worker when one runs, else the Background hook (once per Queue).
func (q *Queue) Wake() {
	if q.HasWorker() {
		q.Kick()
		return
	}
	if q.opts.Background == nil {
		return
	}
	q.bgOnce.Do(func() {
		if err := q.opts.Background(); err != nil {
			q.opts.Log.Warn("cannot start background embedding", "err", err)
		}
	})
}
