package host

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/embedq"
	"github.com/memhost/memhost/host/indexer"
)

// Index types, from package indexer and embedq.
type ()

// MaxPageBytes is the largest page that is indexed; larger pages are
// reported and left out of the index (the page itself is untouched).
const MaxPageBytes = indexer.MaxPageBytes

// Init writes config.yaml with every default, commented, when the home has
// none (a file that exists is kept as it is; the Host was opened with
// it), and indexes the notebook. It is safe to run again.
func (o hostOps) Init(ctx context.Context, _ memhost.InitRequest) (out memhost.InitResponse, err error) {
	h := o.h
	path := filepath.Join(h.home, config.FileName)
	resp := memhost.InitResponse{Home: h.home, Notebook: h.notebook.Root(), Config: path}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		_, werr := f.WriteString(config.Template)
		if err := errors.Join(werr, f.Close()); err != nil {
			os.Remove(path)
			return resp, err
		}
		resp.ConfigCreated = true
	case !errors.Is(err, fs.ErrExist):
		return resp, err
	}
	res, err := h.indexer.Sync(ctx)
	resp.Pages = res.Scanned
	return resp, err
}

// Sync brings the index in step with the notebook and the sessions folder:
// new and edited files are indexed, deleted ones removed. Unchanged files
// cost one stat each.
func (o hostOps) Sync(ctx context.Context, _ memhost.SyncRequest) (res memhost.SyncResult, err error) {
	h := o.h
	err = h.withIndex(ctx, func() (err error) {
		res, err = h.indexer.Sync(ctx)
		return err
	})
	return res, err
}

// Rebuild builds a new index beside the old one and swaps it in; if
// anything fails the old index stays as it was.
func (o hostOps) Rebuild(ctx context.Context, _ memhost.RebuildRequest) (memhost.SyncResult, error) {
	h := o.h
	res, err := h.indexer.Rebuild(ctx)
	if err == nil {
		h.queue.Kick() // a running worker embeds the new index's chunks (from the cache) now, not at the next sync
	}
	return res, err
}

// Files compares the index with the files on disk, hashing only those
// whose size or time changed.
func (o hostOps) Files(ctx context.Context, _ memhost.FilesRequest) (memhost.FilesResponse, error) {
	h := o.h
	return h.indexer.Files(ctx)
}

// WatchRequest holds Watch's callbacks.
type WatchRequest struct {
	// OnSync, when not nil, is called after each sync that changed
	// something (and after the first one), on Watch's goroutine.
	OnSync func(memhost.SyncResult) `json:"-"`
	// OnGitSync, when not nil, is called after each sync with the git
	// remote (federation) that re-indexed something or failed, with what
	// its merge re-indexed; OnSync does not hear of those.
	OnGitSync func(memhost.SyncResult) `json:"-"`
	// OnEmbed, when not nil, is called after each embedding run that
	// embedded something, on the worker's goroutine.
	OnEmbed func(memhost.EmbedResult) `json:"-"`
}

// Watch keeps the index in step with the notebook and sessions until ctx
// ends (see indexer.Indexer.Watch), and runs the embedding worker
// meanwhile: after each sync it embeds the queued chunks, retrying with
// backoff while the provider is not ready. Recalls made meanwhile never
// embed in their caller's time; they kick the worker.
func (h *Host) Watch(ctx context.Context, req WatchRequest) error {
	if h.queue.StartWorker(ctx, req.OnEmbed) {
		defer h.queue.StopWorker()
	}
	h.watch.start()
	defer h.watch.stop()
	// The services' loops (git sync, the consolidation schedule), stopped
	// with the watcher.
	defer h.loops.start(ctx, req)()
	onSync := func(r memhost.SyncResult) {
		h.impl.FederationService.Edited(r)
		h.watch.synced(h.now())
		if req.OnSync != nil {
			req.OnSync(r)
		}
	}
	return h.indexer.Watch(ctx, onSync, h.queue.Kick)
}

// Embed works through the embedding queue (see embedq.Queue.Run).
func (o hostOps) Embed(ctx context.Context, req memhost.EmbedRequest) (memhost.EmbedResult, error) {
	h := o.h
	if req.Sync {
		if _, err := h.indexer.Sync(ctx); err != nil {
			return memhost.EmbedResult{}, err
		}
	}
	res, err := h.queue.Run(ctx, req.Budget)
	for err == nil && res.Busy && req.Wait {
		// Another process (the background embedder) holds the queue: wait
		// for it, then finish whatever it left.
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		res, err = h.queue.Run(ctx, req.Budget)
	}
	return res, err
}

// Status reports the index without changing it: stale pages are counted,
// not indexed.
func (o hostOps) Status(ctx context.Context, req memhost.StatusRequest) (memhost.StatusResponse, error) {
	h := o.h
	resp, installed, err := h.summary(ctx)
	if err != nil || req.Quick {
		return resp, err
	}
	files, err := h.indexer.Files(ctx)
	if err != nil {
		return resp, err
	}
	for _, f := range files.Files {
		switch {
		case !indexer.Indexable(f.State):
			resp.Unindexable++
		case f.Stale:
			resp.Stale++
		}
	}
	if installed && resp.Provider == "" {
		// Only an installed provider that is not ready may be waiting for
		// a model: a missing one (or a ready one) has nothing to do with
		// downloads that failed before, for another plugin perhaps.
		resp.FailedDownloads = h.providers.FailedDownloads()
	}
	rs, err := h.sessions.Receipts()
	if err != nil {
		return resp, err
	}
	if resp.Flushes = len(rs); len(rs) > 0 {
		resp.LastFlush = &rs[len(rs)-1]
	}
	unresolved, err := h.impl.UnresolvedLinks(ctx)
	if err != nil {
		return resp, err
	}
	resp.UnresolvedLinks = len(unresolved)
	resp.Federation = h.impl.FederationSummary(ctx)
	resp.Generator = h.impl.ConsolidationState()
	return resp, nil
}

// searchMode says what a recall would do now, without embedding anything
// or changing the index's model, and whether the active provider is
// installed.
func (h *Host) searchMode(ctx context.Context, resp *memhost.StatusResponse) (mode, why string, installed bool) {
	sem, err := h.queue.Ready(ctx)
	if err != nil {
		return memhost.ModeKeyword, embedq.Reason(err), embedq.Installed(err)
	}
	sem.Release()
	resp.Provider, resp.Model, resp.Dimensions = sem.Name, sem.Info.ModelID, sem.Info.Dimensions
	current, err := h.vecs.Model(ctx)
	if err != nil {
		return memhost.ModeKeyword, err.Error(), true
	}
	if current.Model != sem.Model.Model || current.Dimensions != sem.Model.Dimensions {
		resp.Pending, resp.Embedded = resp.Pending+resp.Embedded, 0 // all of them, for the new model
	} else if pending, dead, err := h.vecs.QueueCounts(ctx, sem.Info.ModelID, h.config().Health.DeadAfterFailures); err == nil {
		// Dead chunks (failed too often, see memhost health) are not
		// waited for: recall answers hybrid without them.
		resp.Pending, resp.Dead = pending, dead
	}
	if resp.Pending > 0 {
		return memhost.ModeKeyword, embedq.Reason(embedq.Progress(sem.Name, resp.Embedded, resp.Pending)), true
	}
	return memhost.ModeHybrid, "", true
}

// FederationSummary is the federation part of Status on its own (nil when
// the home is not a repository): the dashboard's sync card, read beside
// a quick Status (it runs a git process).
func (h *Host) FederationSummary(ctx context.Context) *memhost.FederationStatus {
	return h.impl.FederationSummary(ctx)
}

// summary is the index's counts and the search mode, and whether the
// active provider is installed.
func (h *Host) summary(ctx context.Context) (memhost.StatusResponse, bool, error) {
	resp := memhost.StatusResponse{Home: h.home, Notebook: h.notebook.Root(), Mode: memhost.ModeKeyword}
	st, err := h.idx.Stats(ctx)
	if err != nil {
		return resp, false, err
	}
	resp.Files, resp.Chunks, resp.DBSizeBytes = st.Files, st.Chunks, st.SizeBytes
	if resp.LastSync, err = h.idx.Meta(ctx, "last_sync"); err != nil {
		return resp, false, err
	}
	if resp.Embedded, resp.Pending, err = h.vecs.Counts(ctx); err != nil {
		return resp, false, err
	}
	var installed bool
	resp.Mode, resp.Reason, installed = h.searchMode(ctx, &resp)
	return resp, installed, nil
}

// syncBeforeSearch indexes what changed on disk since the last sync,
// unless memory.sync.syncOnSearch is off. While Watch runs (memhost
// serve), that is only the pages its events named; else one stat per page.
func (h *Host) syncBeforeSearch(ctx context.Context) error {
	if !h.config().Memory.Sync.SyncOnSearch {
		return nil
	}
	res, err := h.indexer.Fresh(ctx)
	if err != nil {
		return fault.Errorf(fault.KindOf(err), "", "sync before search: %w", err)
	}
	if res.Indexed > 0 {
		h.queue.Kick() // the worker, when one runs, embeds the new chunks
	}
	return nil
}
