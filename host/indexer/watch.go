package indexer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/memhost/memhost"
)

// Watch keeps the index in step with the notebook until ctx ends. It syncs
// once at start (memory.sync.syncOnStart), then after every burst of file
// changes, memory.sync.watchDebounceMs after the last event. fsnotify is not
// recursive, so every folder is watched and new folders are added as they
// appear.
//
// While Watch runs, each event marks the page it names as dirty at once
// (before the debounce), and Fresh syncs only the dirty pages: a recall
// then sees an edit made in an editor without stating every page.
//
// onSync, when not nil, is called after each sync that changed something
// (and after the first one); afterSync after every sync, changed or not.
// Both run on Watch's goroutine.
func (x *Indexer) Watch(ctx context.Context, onSync func(memhost.SyncResult), afterSync func()) error {
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
	cookies := x.opts.CookieDir
	if cookies != "" {
		if err := os.MkdirAll(cookies, 0o700); err != nil {
			return err
		}
		removeStaleCookies(cookies)
		if err := w.Add(cookies); err != nil {
			return err
		}
	}
	// Until the first sync, nothing is known to be clean.
	x.markRescan()
	x.watching.Add(1)
	defer x.watching.Add(-1)
	drain := make(chan chan struct{})
	x.dirtyMu.Lock()
	x.drainReq = drain
	x.dirtyMu.Unlock()
	defer func() {
		x.dirtyMu.Lock()
		if x.drainReq == drain {
			x.drainReq = nil
		}
		x.dirtyMu.Unlock()
	}()
	onEvent := func(ev fsnotify.Event) {
		if cookies != "" && filepath.Dir(ev.Name) == cookies {
			x.cookieArrived(filepath.Base(ev.Name))
			return
		}
		if cookies != "" && ev.Name == cookies && ev.Has(fsnotify.Remove) {
			// Someone removed brain/watch: make it again and watch it,
			// or every Fresh would wait out cookieWait.
			if os.MkdirAll(cookies, 0o700) == nil {
				w.Add(cookies) // if this fails, cookies time out: full scans
			}
			// Cookies made meanwhile went into an unwatched folder: their
			// Fresh calls go on with a full scan instead of waiting.
			x.abandonCookies()
			return
		}
		if ev.Has(fsnotify.Create) {
			if fi, err := statDir(ev.Name); err == nil && fi {
				if err := watchTree(w, ev.Name); err != nil {
					x.opts.Log.Warn("cannot watch new folder; syncing everything from now on", "path", ev.Name, "err", err)
					x.markRescan()
				}
			}
		}
		x.markEvent(ev.Name)
	}

	cfg := x.opts.Config()
	sync := func(first bool) error {
		res, err := x.fresh(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return errStopped
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
			return nil // errStopped: the context ended, which ends Watch
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
			onEvent(ev)
			if !isCookie(cookies, ev.Name) {
				timer.Reset(debounce)
			}
		case done := <-drain:
			for pending := true; pending; {
				select {
				case ev, ok := <-w.Events:
					if !ok {
						pending = false
						break
					}
					onEvent(ev)
					if !isCookie(cookies, ev.Name) {
						timer.Reset(debounce)
					}
				default:
					pending = false
				}
			}
			close(done)
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("watcher closed")
			}
			// An overflow loses events: a full sync catches up.
			x.opts.Log.Warn("watcher error; syncing everything", "err", err)
			x.markRescan()
			timer.Reset(debounce)
		case <-timer.C:
			if err := sync(false); err != nil {
				return nil // errStopped
			}
		}
	}
}

// Fresh brings the index in step with what changed on disk. Without a
// running Watch that is a full Sync (one stat per page); with one, only
// the pages its events named since the last sync are looked at, so a
// search in a long-lived process costs nothing when nothing changed.
// Events the watcher has received but not yet looked at are taken in
// first, so an edit saved before the call is seen.
func (x *Indexer) Fresh(ctx context.Context) (memhost.SyncResult, error) {
	x.drainEvents(ctx)
	return x.fresh(ctx)
}

// fresh is Fresh without draining (Watch's own goroutine drains itself).
func (x *Indexer) fresh(ctx context.Context) (memhost.SyncResult, error) {
	if x.watching.Load() == 0 {
		return x.Sync(ctx)
	}
	// The dirty set is taken under the sync lock, so that a second caller
	// waits for this sync instead of finding the set empty and searching
	// before it is written.
	x.mu.Lock()
	defer x.mu.Unlock()
	x.dirtyMu.Lock()
	dirty, rescan := x.dirty, x.rescan
	x.dirty, x.rescan = nil, false
	x.dirtyMu.Unlock()
	// A replaced index file (deleted by a person, or moved aside as
	// corrupt) holds none of what the dirty set is relative to.
	if gen := x.opts.Index.Generation(); gen != x.indexGen {
		rescan, x.indexGen = true, gen
	}
	var (
		res memhost.SyncResult
		err error
	)
	switch {
	case rescan:
		res, err = x.syncInto(ctx, x.opts.Index, nil)
	case len(dirty) == 0:
		return res, nil
	default:
		res, err = x.syncInto(ctx, x.opts.Index, keys(dirty))
	}
	if err != nil { // look again next time
		x.dirtyMu.Lock()
		x.rescan = x.rescan || rescan
		for p := range dirty {
			x.markLocked(p)
		}
		x.dirtyMu.Unlock()
	}
	return res, err
}

// drainEvents asks the running watcher to mark the events it has received
// and not yet looked at, and waits until it has (at most a second: it may
// be in the middle of a sync, which takes the dirty set anyway).
func (x *Indexer) drainEvents(ctx context.Context) {
	x.dirtyMu.Lock()
	req := x.drainReq
	x.dirtyMu.Unlock()
	if req == nil {
		return
	}
	if x.opts.CookieDir != "" {
		x.waitCookie(ctx)
		return
	}
	done := make(chan struct{})
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case req <- done:
	case <-ctx.Done():
		return
	case <-t.C:
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	case <-t.C:
	}
}

func (x *Indexer) markRescan() {
	x.dirtyMu.Lock()
	x.rescan = true
	x.dirtyMu.Unlock()
}

func (x *Indexer) markLocked(rel string) {
	if x.dirty == nil {
		x.dirty = map[string]bool{}
	}
	x.dirty[rel] = true
}

// markEvent records the index path an event's file has. Events that cannot
// be pinned to one page (a folder created, moved or removed; a symlink,
// whose target scan checks) ask for a full scan; other files (editor
// swap files, hidden files) are not pages and are ignored.
func (x *Indexer) markEvent(abs string) {
	rel, ok := x.eventPath(abs)
	x.dirtyMu.Lock()
	defer x.dirtyMu.Unlock()
	switch {
	case !ok:
		x.rescan = true
	case rel != "":
		x.markLocked(rel)
	}
}

// eventPath maps a changed file to its index path: ("", true) when it is
// not a page, ("", false) when a full scan is needed.
func (x *Indexer) eventPath(abs string) (string, bool) {
	fi, err := os.Lstat(abs)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return "", false
	case err == nil && fi.IsDir():
		return "", false
	}
	gone := err != nil
	if filepath.Dir(abs) == x.opts.SessionsDir {
		name := filepath.Base(abs)
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".jsonl") {
			return "", true
		}
		return "sessions/" + name, true
	}
	root := x.opts.Notebook.Root()
	r, err := filepath.Rel(root, abs)
	if err != nil || r == "." || strings.HasPrefix(r, "..") {
		return "", true
	}
	r = filepath.ToSlash(r)
	for _, part := range strings.Split(r, "/") {
		if strings.HasPrefix(part, ".") {
			return "", true // hidden: never indexed
		}
	}
	if strings.EqualFold(filepath.Ext(r), ".md") {
		return r, true
	}
	if gone {
		return "", false // a folder that was moved or removed, maybe
	}
	return "", true
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

// errStopped ends a sync of Watch's whose context ended: Watch then
// returns nil, since the end of its context is how it is stopped.
var errStopped = errors.New("watch stopped")

// cookieWait bounds Fresh's wait for its cookie: past it, the next sync
// stats every page instead of trusting the events.
const cookieWait = 5 * time.Second

// waitCookie returns once Watch has taken in every event of a change made
// before the call. Events that the kernel has queued but the watcher has
// not read yet are not in the events channel, so draining the channel is
// not enough: Fresh creates a file (a cookie, as watchman calls it) in
// CookieDir, which Watch also watches, and waits for its event. One
// inotify queue delivers events in order (Linux; other fsnotify back ends
// give at least the events read before the cookie's), so every earlier
// change has been marked dirty when the cookie's event arrives.
func (x *Indexer) waitCookie(ctx context.Context) {
	name := fmt.Sprintf("cookie-%d-%s-%d", os.Getpid(), x.cookieID, x.cookieSeq.Add(1))
	arrived := make(chan struct{})
	x.dirtyMu.Lock()
	if x.cookies == nil {
		x.cookies = map[string]chan struct{}{}
	}
	x.cookies[name] = arrived
	x.dirtyMu.Unlock()
	p := filepath.Join(x.opts.CookieDir, name)
	defer func() {
		x.dirtyMu.Lock()
		delete(x.cookies, name)
		x.dirtyMu.Unlock()
		os.Remove(p)
	}()
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		if !x.cookieFailed.Swap(true) { // once: it would repeat at every recall
			x.opts.Log.Warn("cannot write the watcher's cookie; every search stats every page", "path", p, "err", err)
		}
		x.markRescan()
		return
	}
	t := time.NewTimer(cookieWait)
	defer t.Stop()
	select {
	case <-arrived:
	case <-ctx.Done():
	case <-t.C:
		x.opts.Log.Warn("the watcher is behind; syncing everything", "waited", cookieWait)
		x.markRescan()
	}
}

// cookieArrived wakes the Fresh waiting for the cookie name, if any (the
// cookie's removal, and other processes' cookies, wake no one).
func (x *Indexer) cookieArrived(name string) {
	x.dirtyMu.Lock()
	defer x.dirtyMu.Unlock()
	if ch, ok := x.cookies[name]; ok {
		close(ch)
		delete(x.cookies, name)
	}
}

// abandonCookies wakes every waiting Fresh with a full scan to do.
func (x *Indexer) abandonCookies() {
	x.dirtyMu.Lock()
	defer x.dirtyMu.Unlock()
	if len(x.cookies) > 0 {
		x.rescan = true
	}
	for name, ch := range x.cookies {
		close(ch)
		delete(x.cookies, name)
	}
}

func isCookie(dir, p string) bool { return dir != "" && filepath.Dir(p) == dir }

// removeStaleCookies removes cookies a killed process left (a live one's
// is removed within cookieWait of being made).
func removeStaleCookies(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), "cookie-") && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
