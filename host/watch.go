package host

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch keeps the index in step with the notebook until ctx ends. It syncs
// once at start (memory.sync.syncOnStart), then after every burst of file
// changes, memory.sync.watchDebounceMs after the last event. fsnotify is not
// recursive, so every folder is watched and new folders are added as they
// appear. After each sync a worker embeds the queued chunks, retrying with
// backoff while the provider is not ready.
//
// onSync, when not nil, is called after each sync that changed something
// (and after the first one), on Watch's goroutine; onEmbed after each
// embedding run that embedded something, on the worker's goroutine.
func (h *Host) Watch(ctx context.Context, onSync func(SyncResult), onEmbed func(EmbedResult)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(ctx)
	kick := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.embedWorker(ctx, kick, onEmbed)
	}()
	defer func() { cancel(); <-done }()
	if err := h.watchTree(w, h.notebook.Root()); err != nil {
		return err
	}
	if err := w.Add(filepath.Join(h.home, "sessions")); err != nil { // transcripts too
		return err
	}
	sync := func(first bool) error {
		res, err := h.Sync(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			h.log.Warn("sync failed", "err", err)
			return nil // keep watching; the next change retries
		}
		if onSync != nil && (first || res.Indexed+res.Removed > 0 || len(res.Problems) > 0) {
			onSync(res)
		}
		select {
		case kick <- struct{}{}:
		default: // a run is already due
		}
		return nil
	}
	if h.cfg.Memory.Sync.SyncOnStart {
		if err := sync(true); err != nil {
			return err
		}
	}
	debounce := time.Duration(h.cfg.Memory.Sync.WatchDebounceMs) * time.Millisecond
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("watcher closed")
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := statDir(ev.Name); err == nil && fi {
					if err := h.watchTree(w, ev.Name); err != nil {
						h.log.Warn("cannot watch new folder", "path", ev.Name, "err", err)
					}
				}
			}
			timer.Reset(debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("watcher closed")
			}
			// An overflow loses events: a full sync catches up.
			h.log.Warn("watcher error; syncing everything", "err", err)
			timer.Reset(debounce)
		case <-timer.C:
			if err := sync(false); err != nil {
				return err
			}
		}
	}
}

// watchTree adds dir and every folder under it, skipping hidden ones.
func (h *Host) watchTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		return w.Add(p)
	})
}

func statDir(p string) (bool, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

// embedWorker embeds the queue each time it is kicked, until ctx ends. A
// provider that is not ready (crashed, downloading) is retried with backoff
// from 1 s to 30 s; with no provider configured it waits for the next kick.
func (h *Host) embedWorker(ctx context.Context, kick <-chan struct{}, onEmbed func(EmbedResult)) {
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	backoff := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		case <-retry.C:
		}
		res, err := h.Embed(ctx, 0)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			backoff = time.Second
			if onEmbed != nil && res.Embedded > 0 {
				onEmbed(res)
			}
		case errors.Is(err, ErrProviderNotReady) && strings.Contains(err.Error(), "no embeddings provider configured"):
			// keyword-only by choice: nothing to retry
		default:
			h.log.Warn("embedding failed; retrying", "err", err, "in", backoff)
			retry.Reset(backoff)
			backoff = min(2*backoff, 30*time.Second)
		}
	}
}
