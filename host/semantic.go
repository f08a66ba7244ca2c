package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/registry"
	"github.com/memhost/memhost/sdk"
)

// ErrProviderNotReady means semantic search cannot run now; the error says
// why, in words fit for a "reason".
var ErrProviderNotReady = errors.New("embeddings provider not ready")

// loadWait bounds how long a call waits for a provider whose model is
// loading (not downloading) before answering keyword-only.
const loadWait = 10 * time.Second

// defaultPlugin is used when memory.embedding.plugin is empty and it is
// installed.
const defaultPlugin = "local"

// registry returns the plugin registry, discovering plugins on first use.
func (h *Host) registry() *registry.Registry {
	h.regOnce.Do(func() {
		dirs := append(append([]string(nil), h.pluginDirs...), filepath.Join(h.home, "plugins"))
		h.reg = registry.New(registry.Options{Dirs: dirs, Logger: h.hlog, Env: []string{
			"MEMHOST_HOME=" + h.home,
			"MEMHOST_MODELS_DIR=" + h.path(h.cfg.Memory.Embedding.ModelsDir),
		}})
	})
	return h.reg
}

// cache returns the embedding cache, opening it on first use.
func (h *Host) cache(ctx context.Context) (*index.Cache, error) {
	h.cacheMu.Lock()
	defer h.cacheMu.Unlock()
	if h.embCache != nil {
		return h.embCache, nil
	}
	c, err := index.OpenCache(ctx, filepath.Join(h.home, "cache", "embeddings.db"))
	if err != nil {
		return nil, err
	}
	h.embCache = c
	return c, nil
}

// providerName is the configured plugin, or the default when installed.
func (h *Host) providerName() (string, error) {
	name := h.cfg.Memory.Embedding.Plugin
	if name != "" {
		return name, nil
	}
	names := h.registry().Names()
	for _, n := range names {
		if n == defaultPlugin {
			return n, nil
		}
	}
	hint := "install memhost-embeddings-local, or run `memhost plugins use NAME`"
	if len(names) > 0 {
		hint = fmt.Sprintf("run `memhost plugins use NAME` (installed: %s)", strings.Join(names, ", "))
	}
	return "", fmt.Errorf("%w: no embeddings provider configured: %s", ErrProviderNotReady, hint)
}

// semantic is the state of semantic search for one call.
type semantic struct {
	provider *registry.Provider
	name     string
	info     sdk.Info
	model    index.VectorModel
}

// ready returns the active provider when it can embed now, or an
// ErrProviderNotReady error whose text is the reason.
func (h *Host) ready(ctx context.Context) (*semantic, error) {
	name, err := h.providerName()
	if err != nil {
		return nil, err
	}
	p, err := h.registry().Provider(ctx, name, h.cfg.Memory.Embedding.Options[name])
	if errors.Is(err, registry.ErrUnknownPlugin) {
		return nil, fmt.Errorf("%w: %v (memory.embedding.plugin in config.yaml)", ErrProviderNotReady, err)
	}
	if err != nil && p == nil {
		return nil, fmt.Errorf("%w: %v", ErrProviderNotReady, err)
	}
	st, err := statusAfterLoading(ctx, p)
	if err != nil {
		return nil, err
	}
	switch st.State {
	case sdk.StateReady:
	case sdk.StateDownloading:
		return nil, &notReadyError{msg: fmt.Sprintf("model downloading %.0f%%", st.Progress*100), preparing: true}
	case sdk.StateLoading:
		return nil, &notReadyError{msg: "model loading", preparing: true}
	default:
		msg := st.Message
		if msg == "" {
			msg = "plugin " + name + " is in error"
		}
		return nil, fmt.Errorf("%w: %s", ErrProviderNotReady, msg)
	}
	info, err := p.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProviderNotReady, err)
	}
	if info.Dimensions <= 0 || info.ModelID == "" {
		return nil, fmt.Errorf("%w: plugin %s reports no model or dimensions", ErrProviderNotReady, name)
	}
	return &semantic{provider: p, name: name, info: info,
		model: index.VectorModel{Provider: name, Model: info.ModelID, Dimensions: info.Dimensions}}, nil
}

// statusAfterLoading returns the provider's status, waiting up to loadWait
// while its model is loading: each CLI process starts its own plugin, and
// a model loads in moments. A dead plugin reports StateError with why.
func statusAfterLoading(ctx context.Context, p *registry.Provider) (sdk.Status, error) {
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

// notReadyError is an ErrProviderNotReady; preparing means the provider
// is downloading or loading its model and will be ready by itself.
type notReadyError struct {
	msg       string
	preparing bool
}

func (e *notReadyError) Error() string        { return ErrProviderNotReady.Error() + ": " + e.msg }
func (e *notReadyError) Is(target error) bool { return target == ErrProviderNotReady }

func isNotReady(err error) bool { return errors.Is(err, ErrProviderNotReady) }

func preparing(err error) bool {
	var nr *notReadyError
	return errors.As(err, &nr) && nr.preparing
}

// reason turns an ErrProviderNotReady error into the reason users see.
func reason(err error) string {
	return strings.TrimPrefix(err.Error(), ErrProviderNotReady.Error()+": ")
}

// EmbedResult reports a run of the embedding queue.
type EmbedResult struct {
	Provider   string  `json:"provider"`
	Model      string  `json:"model"`
	Embedded   int     `json:"embedded"`  // chunks given vectors in this run
	FromCache  int     `json:"fromCache"` // of those, vectors taken from the cache
	Pending    int     `json:"pending"`   // chunks still without a vector
	Busy       bool    `json:"busy"`      // another process is embedding; this run did nothing
	DurationMs float64 `json:"durationMs"`
}

// Embed works through the embedding queue: chunks without a vector for the
// active provider's model get one, from the cache when it has it, else from
// the provider, in batches. It stops when the queue is empty, ctx ends, or
// budget (when > 0) is spent. A plugin failure stops the run with nothing
// lost: the queue lives in the index and the next run resumes it. One
// process embeds at a time; others return at once with Busy set.
func (h *Host) Embed(ctx context.Context, budget time.Duration) (EmbedResult, error) {
	start := time.Now()
	var res EmbedResult
	sem, err := h.ready(ctx)
	// An unbounded run (memhost embed, watch) waits for a model that is
	// downloading or loading: that is what the background run is for.
	for budget <= 0 && preparing(err) {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		sem, err = h.ready(ctx)
	}
	if err != nil {
		return res, err
	}
	res.Provider, res.Model = sem.name, sem.info.ModelID
	lock := filepath.Join(h.home, "brain", "embed.lock")
	unlock, ok, err := tryLock(lock)
	// With a budget (a recall), wait within it for the process that holds
	// the queue: it may finish what this call would have done.
	for err == nil && !ok && budget > 0 && time.Since(start) < budget {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		unlock, ok, err = tryLock(lock)
	}
	if err != nil {
		return res, err
	}
	if !ok {
		_, res.Pending, err = h.idx.VectorCounts(ctx)
		res.Busy = true
		return res, err
	}
	defer unlock()
	if _, err := h.idx.SetVectorModel(ctx, sem.model); err != nil {
		return res, err
	}
	cache, err := h.cache(ctx)
	if err != nil {
		return res, err
	}
	batch := h.cfg.Memory.Embedding.BatchSize
	for budget <= 0 || time.Since(start) < budget {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		pending, err := h.idx.Pending(ctx, batch)
		if err != nil {
			return res, err
		}
		if len(pending) == 0 {
			break
		}
		n, cached, err := h.embedBatch(ctx, sem, cache, pending)
		res.Embedded += n
		res.FromCache += cached
		if err != nil {
			return res, err
		}
	}
	_, res.Pending, err = h.idx.VectorCounts(ctx)
	res.DurationMs = ms(time.Since(start))
	return res, err
}

func (h *Host) embedBatch(ctx context.Context, sem *semantic, cache *index.Cache, chunks []index.PendingChunk) (stored, cached int, err error) {
	hashes := make([]string, len(chunks))
	for i, c := range chunks {
		hashes[i] = c.Hash
	}
	vecs, err := cache.Get(ctx, sem.info.ModelID, hashes)
	if err != nil {
		return 0, 0, err
	}
	cached = len(vecs)
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
		got, err := sem.provider.Embed(ctx, texts, sdk.KindDocument)
		if err != nil {
			return 0, 0, err
		}
		fresh := make(map[string][]float32, len(got))
		for i, v := range got {
			fresh[missing[i]] = v
			vecs[missing[i]] = v
		}
		if err := cache.Put(ctx, sem.info.ModelID, fresh); err != nil {
			return 0, 0, err
		}
	}
	out := make([]index.ChunkVector, 0, len(chunks))
	for _, c := range chunks {
		out = append(out, index.ChunkVector{ID: c.ID, Vector: vecs[c.Hash]})
	}
	stored, err = h.idx.PutVectors(ctx, sem.info.ModelID, out)
	return stored, min(cached, stored), err
}

// tryLock takes an exclusive flock on path without waiting.
func tryLock(path string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, true, nil
}

// hybrid prepares semantic search for a recall: the provider must be ready
// and every chunk embedded for its model. Queued chunks are embedded first,
// within memory.embedding.recallBudgetMs; if some remain, the rest is left
// to the background (Options.Background) and the recall stays keyword-only.
func (h *Host) hybrid(ctx context.Context) (*semantic, error) {
	sem, err := h.ready(ctx)
	if preparing(err) {
		// The model download must outlive this process: the detached
		// embedder waits for it, then embeds the queue.
		h.startBackground()
	}
	if err != nil {
		return nil, err
	}
	if cur, err := h.idx.VectorModel(ctx); err != nil || cur != sem.model {
		if _, err := h.idx.SetVectorModel(ctx, sem.model); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrProviderNotReady, err)
		}
	}
	pending, err := h.idx.HasPending(ctx)
	if err != nil {
		return nil, err
	}
	if budget := h.cfg.Memory.Embedding.RecallBudgetMs; pending && budget > 0 {
		_, err := h.Embed(ctx, time.Duration(budget)*time.Millisecond)
		if err != nil && !errors.Is(err, ErrProviderNotReady) {
			h.log.Warn("embedding before search failed", "err", err)
		}
		if pending, err = h.idx.HasPending(ctx); err != nil {
			return nil, err
		}
	}
	if pending {
		emb, pending, err := h.idx.VectorCounts(ctx)
		if err != nil {
			return nil, err
		}
		h.startBackground()
		total := emb + pending
		return nil, fmt.Errorf("%w: embedding with %s: %d of %d chunks done (%.0f%%); hybrid when complete",
			ErrProviderNotReady, sem.name, emb, total, 100*float64(emb)/float64(max(total, 1)))
	}
	return sem, nil
}

// startBackground asks for the queue to be worked through in the
// background, once per Host.
func (h *Host) startBackground() {
	if h.background == nil {
		return
	}
	h.bgOnce.Do(func() {
		if err := h.background(); err != nil {
			h.log.Warn("cannot start background embedding", "err", err)
		}
	})
}
