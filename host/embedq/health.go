package embedq

import (
	"context"
	"errors"
	"time"

	"github.com/memhost/memhost/index/vectors"
	"github.com/memhost/memhost/sdk"
)

// QueueHealth is the embedding queue as `memhost health` reports it.
type QueueHealth struct {
	Model   string              // the model of the index's vectors; "" before the first
	Pending int                 // chunks waiting for a vector, dead ones left out
	Dead    int                 // chunks whose embedding failed Health.DeadAfterFailures times
	Oldest  []vectors.DeadChunk // the first dead chunks, up to 10
	// CacheHits and CacheMisses count the embedding cache's look-ups
	// since the cache file was made.
	CacheHits, CacheMisses int64
}

// Health counts the queue's pending and dead chunks (for the model of the
// index's vectors) and the cache's look-ups. It embeds nothing.
func (q *Queue) Health(ctx context.Context) (QueueHealth, error) {
	var h QueueHealth
	m, err := q.opts.Vectors.Model(ctx)
	if err != nil {
		return h, err
	}
	h.Model = m.Model
	maxFailures := q.cfg().Health.DeadAfterFailures
	if h.Pending, h.Dead, err = q.opts.Vectors.QueueCounts(ctx, m.Model, maxFailures); err != nil {
		return h, err
	}
	if h.Dead > 0 {
		if h.Oldest, err = q.opts.Vectors.DeadChunks(ctx, m.Model, maxFailures, 10); err != nil {
			return h, err
		}
	}
	cache, err := q.openCache(ctx)
	if err != nil {
		return h, err
	}
	h.CacheHits, h.CacheMisses, err = cache.Lookups(ctx)
	return h, err
}

// RetryDead forgets every embedding failure, so that dead chunks are
// queued again, and wakes the worker (or the background run). It returns
// how many dead chunks were revived.
func (q *Queue) RetryDead(ctx context.Context) (int, error) {
	m, err := q.opts.Vectors.Model(ctx)
	if err != nil {
		return 0, err
	}
	n, err := q.opts.Vectors.ClearFailures(ctx, m.Model, q.cfg().Health.DeadAfterFailures)
	if err == nil && n > 0 {
		q.Wake()
	}
	return n, err
}

// Probe is the result of ProbeProvider.
type Probe struct {
	Provider string
	// NoProvider: none is configured or installed (keyword-only search
	// by choice); Preparing: its model is downloading or loading.
	NoProvider, Preparing bool
	// Err says why the provider cannot embed ("" when it could).
	Err string
	// LatenciesMs are the times of the embeds made, in order.
	LatenciesMs []float64
}

// probeText is what ProbeProvider embeds: a short query.
const probeText = "memhost health check: is the embeddings provider responsive?"

// ProbeProvider embeds a short query n times with the active provider,
// each within timeout, and times each call. It stops at the first error.
func (q *Queue) ProbeProvider(ctx context.Context, n int, timeout time.Duration) Probe {
	var p Probe
	p.Provider, _ = q.ProviderName()
	sem, err := q.Ready(ctx)
	if err != nil {
		var nr *NotReadyError
		if errors.As(err, &nr) {
			p.NoProvider, p.Preparing = nr.NoProvider, nr.Preparing
		}
		p.Err = Reason(err)
		return p
	}
	defer sem.Release()
	for range n {
		start := time.Now()
		_, err := sem.Provider.EmbedWithin(ctx, []string{probeText}, sdk.KindQuery, timeout)
		if err != nil {
			p.Err = err.Error()
			return p
		}
		p.LatenciesMs = append(p.LatenciesMs, float64(time.Since(start).Microseconds())/1000)
	}
	return p
}
