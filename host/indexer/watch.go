package indexer

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
// appear.
//
// onSync, when not nil, is called after each sync that changed something
// (and after the first one); afterSync after every sync, changed or not.
// Both run on Watch's goroutine.
func (x *Indexer) Watch(ctx context.Context, onSync func(SyncResult), afterSync func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	if err := watchTree(w, x.opts.Notebook.Root()); err != nil {
		return err
	}
	if err := w.Add(x.opts.SessionsDir); err != nil { // transcripts too
		return err
	}
	cfg := x.opts.Config()
	sync := func(first bool) error {
		res, err := x.Sync(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			x.opts.Log.Warn("sync failed", "err", err)
			return nil // keep watching; the next change retries
		}
		if onSync != nil && (first || res.Indexed+res.Removed > 0 || len(res.Problems) > 0) {
			onSync(res)
		}
		if afterSync != nil {
			afterSync()
		}
		return nil
	}
	if cfg.Memory.Sync.SyncOnStart {
		if err := sync(true); err != nil {
			return err
		}
	}
	debounce := time.Duration(cfg.Memory.Sync.WatchDebounceMs) * time.Millisecond
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
					if err := watchTree(w, ev.Name); err != nil {
						x.opts.Log.Warn("cannot watch new folder", "path", ev.Name, "err", err)
					}
				}
			}
			timer.Reset(debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("watcher closed")
			}
			// An overflow loses events: a full sync catches up.
			x.opts.Log.Warn("watcher error; syncing everything", "err", err)
			timer.Reset(debounce)
		case <-timer.C:
			if err := sync(false); err != nil {
				return err
			}
		}
	}
}

// watchTree adds dir and every folder under it, skipping hidden ones.
func watchTree(w *fsnotify.Watcher, dir string) error {
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
