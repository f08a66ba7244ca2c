// Package indexer keeps the index in step with the notebook and the
// sessions folder: it scans for pages and transcripts, hashes and chunks
// what changed on several goroutines, and applies the changes to the index
// in batches; it rebuilds the index beside the old one; it compares the
// index with the disk (Files); and it watches both folders (Watch).
//
// Syncs of one Indexer run one at a time (a mutex); other processes may
// sync the same index at once (SQLite's locks and WAL).
package indexer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/chunk"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/facts"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/host/sessions/turnchunk"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/internal/fsx"
)

// Options configure an Indexer; every field but CookieDir is required.
type Options struct {
	Notebook    *notebook.Notebook
	SessionsDir string // absolute
	Index       *index.DB
	Config      func() *config.Config // read at every sync
	// Now is the calendar clock of the last sync's time. A page's
	// indexing time is the wall clock's (time.Now), whatever Now says:
	// the racy-edit rule compares it with the file system's mtimes.
	Now func() time.Time
	// CookieDir is a folder of the home's own (brain/watch) that Watch
	// watches beside the notebook for Fresh's cookies (watch.go); "" has
	// Fresh take only the events already read.
	CookieDir string
	Log       *slog.Logger
}

// Indexer syncs one index. It is safe for concurrent use: syncs queue on
// its mutex.
type Indexer struct {
	opts Options
	mu   sync.Mutex // one sync at a time in this process

	// While Watch runs, the paths its events named since the last sync
	// (see Fresh). dirtyMu guards both; rescan means an event could not be
	// pinned to pages (a folder, a symlink, a lost event): scan everything.
	watching atomic.Int32
	dirtyMu  sync.Mutex
	dirty    map[string]bool
	rescan   bool
	drainReq chan chan struct{}       // the running Watch's: mark pending events now
	cookies  map[string]chan struct{} // Fresh's cookies, by file name (waitCookie)
	// cookieID (random, per Indexer) and cookieSeq name this Indexer's
	// cookies apart from those of any other watching the same home.
	cookieID     string
	cookieSeq    atomic.Uint64
	cookieFailed atomic.Bool // a cookie could not be written (warned once)
	indexGen     int64       // the index's Generation at the last fresh (x.mu)
}

// New returns the Indexer of opts.
func New(opts Options) *Indexer {
	return &Indexer{opts: opts, cookieID: strconv.FormatUint(rand.Uint64(), 36)}
}

// Result groups of the index.
const (
	SourceNotebook = "notebook"
	SourceDaily    = "daily"
)

// SourceOf names the result group an index path belongs to.
func SourceOf(rel string) string {
	switch {
	case sessions.IsPath(rel):
		return sessions.Source
	case strings.HasPrefix(rel, "daily/"):
		return SourceDaily
	}
	return SourceNotebook
}

// absPath is where an index path lives on disk: transcripts in the
// sessions folder, pages in the notebook.
func (x *Indexer) absPath(rel string) string {
	if sessions.IsPath(rel) {
		return filepath.Join(x.opts.SessionsDir, filepath.FromSlash(strings.TrimPrefix(rel, "sessions/")))
	}
	return x.opts.Notebook.Abs(rel)
}

// checkIndexPath checks an index path's names as the scan does.
func checkIndexPath(rel string) error {
	if name, ok := strings.CutPrefix(rel, "sessions/"); ok && sessions.IsPath(rel) {
		return notebook.CheckName(name)
	}
	return notebook.CheckPath(rel)
}

// read reads a page or transcript found on disk, resolved beneath its
// folder without following a symlink out of it, and only when it is a
// regular file: a FIFO swapped in after the scan must not block the sync.
func (x *Indexer) read(f diskFile) ([]byte, error) {
	if !sessions.IsPath(f.rel) {
		return x.opts.Notebook.Read(f.rel)
	}
	dir, err := fsx.OpenDir(x.opts.SessionsDir)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return dir.ReadFile(strings.TrimPrefix(f.rel, "sessions/"), fsx.LinksInside)
}

// MaxPageBytes is the largest page that is indexed; larger pages are
// reported and left out of the index (the page itself is untouched).
const MaxPageBytes = 16 << 20

// MaxTranscriptBytes is the same for transcripts, which are chunked a line
// at a time and, once indexed, only read past what was indexed before.
const MaxTranscriptBytes = 256 << 20

// racyWindow: a page modified this close to (or after) the moment it was
// indexed may have changed again within the file system's timestamp
// granularity without changing size or mtime, so its content is hashed
// again instead of trusting the stat (git's "racy clean" problem).
const racyWindow = 2 * time.Second

// batchFiles bounds the files written in one index transaction, so that a
// long sync never holds the write lock for long.
const batchFiles = 200

// diskFile is a page found on disk.
type diskFile struct {
	rel   string
	abs   string
	size  int64
	mtime time.Time
}

// Sync brings the index in step with the notebook: new and edited pages are
// indexed, deleted ones removed. Unchanged pages cost one stat each.
func (x *Indexer) Sync(ctx context.Context) (memhost.SyncResult, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.syncInto(ctx, x.opts.Index, nil)
}

// SyncPaths syncs only the given index paths; used after memhost's own
// writes. A page written but left out of the index (too large) is logged:
// the write itself succeeded.
func (x *Indexer) SyncPaths(ctx context.Context, rels ...string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	res, err := x.syncInto(ctx, x.opts.Index, rels)
	for _, p := range res.Problems {
		x.opts.Log.Warn("indexing after a write", "path", p.Path, "problem", p.Problem)
	}
	return err
}

// syncInto syncs db with the whole notebook (only == nil) or with the pages
// in only.
//
// Another process may index the same transcripts meanwhile; an append
// computed from what it changed is stale (index.ErrStale) and the sync is
// done again from the index as it is now.
func (x *Indexer) syncInto(ctx context.Context, db *index.DB, only []string) (memhost.SyncResult, error) {
	for attempt := 1; ; attempt++ {
		res, err := x.syncOnce(ctx, db, only)
		if !errors.Is(err, index.ErrStale) || attempt == staleRetries {
			return res, err
		}
	}
}

// staleRetries bounds the syncs tried in a row when each finds the index
// changed under it by another process.
const staleRetries = 10

func (x *Indexer) syncOnce(ctx context.Context, db *index.DB, only []string) (memhost.SyncResult, error) {
	start := time.Now()
	var res memhost.SyncResult
	stamps, err := db.Stamps(ctx)
	if err != nil {
		return res, err
	}
	var disk []diskFile
	if only == nil {
		disk, res.Problems, err = x.scan()
		if err != nil {
			return res, err
		}
	} else {
		for _, rel := range only {
			if err := checkIndexPath(rel); err != nil {
				res.Problems = append(res.Problems, memhost.Problem{Path: rel, Problem: badName(err)})
				continue // and dropped from the index if it was there
			}
			abs := x.absPath(rel)
			fi, err := os.Stat(abs)
			if err == nil && fi.Mode().IsRegular() {
				disk = append(disk, diskFile{rel: rel, abs: abs, size: fi.Size(), mtime: fi.ModTime()})
			}
		}
	}
	res.Scanned = len(disk)

	var batch index.Batch
	onDisk := make(map[string]bool, len(disk))
	var todo []diskFile
	for _, f := range disk {
		onDisk[f.rel] = true
		if st, ok := stamps[f.rel]; ok && !mayHaveChanged(f, st) {
			res.Unchanged++
			continue
		}
		todo = append(todo, f)
	}
	scope := only
	if only == nil {
		scope = keys(stamps)
	}
	for _, rel := range scope {
		if _, indexed := stamps[rel]; indexed && !onDisk[rel] {
			batch.Removes = append(batch.Removes, rel)
			res.RemovedPaths = append(res.RemovedPaths, rel)
			res.Removed++
		}
	}

	flush := func() error {
		err := db.Apply(ctx, batch)
		batch = index.Batch{}
		return err
	}
	// Leaving early (a failed write) must not strand examine's goroutines.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for r := range x.examine(ctx, todo, stamps) {
		if r.err != nil {
			return res, r.err
		}
		if r.problem != "" {
			res.Problems = append(res.Problems, memhost.Problem{Path: r.file.rel, Problem: r.problem})
		}
		switch {
		case r.skip:
			if _, indexed := stamps[r.file.rel]; indexed {
				batch.Removes = append(batch.Removes, r.file.rel)
				res.RemovedPaths = append(res.RemovedPaths, r.file.rel)
				res.Removed++
			}
		case r.update == nil:
			batch.Touches = append(batch.Touches, r.touch)
			res.Unchanged++
		case r.appendOnly:
			batch.Appends = append(batch.Appends, *r.update)
			res.Indexed++
			res.Chunks += len(r.update.Chunks)
			res.Paths = append(res.Paths, r.file.rel)
		default:
			batch.Upserts = append(batch.Upserts, *r.update)
			res.Indexed++
			res.Chunks += len(r.update.Chunks)
			res.Paths = append(res.Paths, r.file.rel)
		}
		if len(batch.Upserts)+len(batch.Appends)+len(batch.Touches)+len(batch.Removes) >= batchFiles {
			if err := flush(); err != nil {
				return res, err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if !batch.Empty() || (only == nil && x.lastSyncIsOld(ctx, db)) {
		batch.Meta = map[string]string{"last_sync": x.opts.Now().UTC().Format(time.RFC3339)}
	}
	if err := flush(); err != nil {
		return res, err
	}
	res.DurationMs = ms(time.Since(start))
	return res, nil
}

// lastSyncIsOld reports whether the recorded last sync is over a minute
// old: a no-change sync records itself only then, so that a recall does not
// take the index's write lock just to say it looked.
func (x *Indexer) lastSyncIsOld(ctx context.Context, db *index.DB) bool {
	v, err := db.Meta(ctx, "last_sync")
	if err != nil {
		return true
	}
	t, err := time.Parse(time.RFC3339, v)
	return err != nil || x.opts.Now().Sub(t) > time.Minute
}

func mayHaveChanged(f diskFile, st index.File) bool {
	return st.Size != f.size || !st.Mtime.Equal(f.mtime) || !f.mtime.Before(st.IndexedAt.Add(-racyWindow))
}

type examined struct {
	file       diskFile
	update     *index.Update // nil: content unchanged
	appendOnly bool          // update holds only chunks to add (a grown transcript)
	touch      index.File
	skip       bool // not indexable (too large, unreadable)
	problem    string
	err        error
}

// examine reads, hashes and chunks pages on all cores; results come out in
// no particular order. The channel is closed when all are done or ctx ends.
func (x *Indexer) examine(ctx context.Context, files []diskFile, stamps map[string]index.File) <-chan examined {
	out := make(chan examined)
	in := make(chan diskFile)
	workers := min(runtime.GOMAXPROCS(0), 4, max(1, len(files)))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range in {
				select {
				case out <- x.examineOne(f, stamps[f.rel]):
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(in)
		for _, f := range files {
			select {
			case in <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(out)
	}()
	return out
}

func (x *Indexer) examineOne(f diskFile, st index.File) examined {
	r := examined{file: f}
	limit := int64(MaxPageBytes)
	if sessions.IsPath(f.rel) {
		limit = MaxTranscriptBytes
	}
	if f.size > limit {
		r.skip = true
		r.problem = fmt.Sprintf("file is %d MB, larger than the %d MB that are indexed; not indexed", f.size>>20, limit>>20)
		return r
	}
	data, err := x.read(f)
	if err != nil {
		r.skip = true
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, notebook.ErrNotFound) {
			return r // deleted since the scan
		}
		var nr *fsx.NotRegularError
		if errors.As(err, &nr) {
			r.problem = nr.Error() + "; not indexed"
			return r
		}
		r.problem = "cannot read: " + err.Error()
		return r
	}
	if int64(len(data)) > limit {
		r.skip = true
		r.problem = fmt.Sprintf("file is larger than the %d MB that are indexed; not indexed", limit>>20)
		return r
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	file := index.File{Path: f.rel, Source: SourceOf(f.rel), Hash: hash, Mtime: f.mtime, Size: int64(len(data)), IndexedAt: time.Now()}
	if hash == st.Hash {
		r.touch = file
		return r
	}
	cfg := x.opts.Config()
	opt := chunk.Options{MaxTokens: cfg.Memory.Chunking.MaxTokens, OverlapTokens: cfg.Memory.Chunking.OverlapTokens}
	if sessions.IsPath(f.rel) {
		// Transcripts only grow: when the part indexed before is unchanged,
		// only the new lines are chunked and added.
		from := 0
		if st.Hash != "" && st.Size > 0 && int64(len(data)) > st.Size && data[st.Size-1] == '\n' {
			if sum := sha256.Sum256(data[:st.Size]); hex.EncodeToString(sum[:]) == st.Hash {
				from = int(st.Size)
				r.appendOnly = true
			}
		}
		chunks, problems := turnchunk.Chunks(f.rel, data, from, opt)
		if len(problems) > 0 {
			r.problem = strings.Join(problems, "; ")
		}
		r.update = &index.Update{File: file, Chunks: chunks}
		if r.appendOnly {
			r.update.Base = st.Hash
		}
		return r
	}
	text := string(data)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		r.problem = "invalid UTF-8: indexed with the bad bytes replaced by U+FFFD (the page is unchanged)"
	}
	pieces := chunk.Split(text, opt)
	u := &index.Update{File: file, Chunks: make([]index.Chunk, len(pieces))}
	var fmErr error
	u.Vault, fmErr = PageVault(text)
	if fmErr != nil {
		r.problem = strings.TrimPrefix(r.problem+"; ", "; ") + fmErr.Error() + " (indexed without its keys)"
	}
	for i, p := range pieces {
		s := sha256.Sum256([]byte(p.Text))
		u.Chunks[i] = index.Chunk{Heading: p.Heading, StartLine: p.StartLine, EndLine: p.EndLine, Text: p.Text, Hash: hex.EncodeToString(s[:])}
	}
	if slug, ok := facts.SlugOf(f.rel); ok {
		page := facts.Parse(slug, []byte(text))
		u.Entity = facts.Rows(page.Entity)
		if len(page.Problems) > 0 {
			r.problem = strings.Join(append(nonEmpty(r.problem), page.Problems...), "; ")
		}
	}
	r.update = u
	return r
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// scan lists the notebook's pages: *.md files, skipping hidden files and
// folders (.git, .obsidian, memhost's temporary files). A symlink is
// followed only when it leads to a file inside the notebook. Pages whose
// names the notebook refuses (notebook.CheckPath), and FIFOs, sockets and
// devices, are left out and reported: recall must never name a page that
// get refuses, and reading a FIFO would block the sync.
//
// Listing folders is cheap; the cost is one lstat per page, so the folders
// are read first and the pages are then stat'ed on several goroutines.
func (x *Indexer) scan() ([]diskFile, []memhost.Problem, error) {
	root := x.opts.Notebook.Root()
	var (
		cands    []fs.DirEntry
		paths    []string
		problems []memhost.Problem
	)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			problems = append(problems, memhost.Problem{Path: rel(root, p), Problem: "cannot read: " + err.Error()})
			return nil
		}
		name := d.Name()
		if p != root && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && strings.EqualFold(filepath.Ext(name), ".md") {
			if err := notebook.CheckPath(rel(root, p)); err != nil {
				problems = append(problems, memhost.Problem{Path: rel(root, p), Problem: badName(err)})
				return nil
			}
			cands = append(cands, d)
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	// Transcripts: sessions/*.jsonl in the home.
	sessDir := x.opts.SessionsDir
	if entries, err := os.ReadDir(sessDir); err == nil {
		for _, e := range entries {
			if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), ".jsonl") {
				if err := notebook.CheckName(e.Name()); err != nil {
					problems = append(problems, memhost.Problem{Path: "sessions/" + e.Name(), Problem: badName(err)})
					continue
				}
				cands = append(cands, e)
				paths = append(paths, filepath.Join(sessDir, e.Name()))
			}
		}
	}
	files := make([]diskFile, len(cands))
	found := make([]bool, len(cands))
	outside := make([]bool, len(cands))
	special := make([]fs.FileMode, len(cands)) // the type of a FIFO, socket or device
	workers := min(8, max(1, len(cands)/256))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(cands); i += workers {
				d, p := cands[i], paths[i]
				var fi fs.FileInfo
				var err error
				switch {
				case d.Type()&fs.ModeSymlink != 0:
					target, terr := filepath.EvalSymlinks(p)
					base := root
					if filepath.Dir(p) == sessDir {
						base, _ = filepath.EvalSymlinks(sessDir)
					}
					if terr != nil || !strings.HasPrefix(target, base+string(filepath.Separator)) {
						outside[i] = true
						continue
					}
					fi, err = os.Stat(target)
				case d.Type().IsRegular():
					fi, err = d.Info()
				case d.Type().IsDir():
					continue
				default:
					special[i] = d.Type()
					continue
				}
				if err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
					special[i] = fi.Mode().Type()
				}
				if err != nil || !fi.Mode().IsRegular() {
					continue // removed while we looked, or not a file
				}
				r := rel(root, p)
				if filepath.Dir(p) == sessDir {
					r = "sessions/" + filepath.Base(p)
				}
				files[i] = diskFile{rel: r, abs: p, size: fi.Size(), mtime: fi.ModTime()}
				found[i] = true
			}
		}()
	}
	wg.Wait()
	out := files[:0]
	for i := range files {
		if found[i] {
			out = append(out, files[i])
		}
		r := rel(root, paths[i])
		if filepath.Dir(paths[i]) == sessDir {
			r = "sessions/" + filepath.Base(paths[i])
		}
		if outside[i] {
			problems = append(problems, memhost.Problem{Path: r, Problem: "symlink leads outside its folder; not indexed"})
		}
		if special[i] != 0 {
			problems = append(problems, memhost.Problem{Path: r, Problem: (&fsx.NotRegularError{Mode: special[i]}).Error() + "; not indexed"})
		}
	}
	return out, problems, nil
}

// badName is the problem of a page or transcript whose name CheckPath or
// CheckName refuses.
func badName(err error) string {
	return "its name is refused by memhost (" + err.Error() + "); not indexed: rename it"
}

func rel(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Rebuild builds a new index from the notebook beside the old one and swaps
// it in; if anything fails the old index stays as it was.
func (x *Indexer) Rebuild(ctx context.Context) (memhost.SyncResult, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	// Rebuilds killed midway leave their files: remove those of processes
	// that are gone.
	if _, err := RemoveRebuildLeftovers(x.opts.Index.Path()); err != nil {
		x.opts.Log.Warn("cannot remove the files of an interrupted rebuild", "err", err)
	}
	tmp := fmt.Sprintf("%s.rebuild-%d", x.opts.Index.Path(), os.Getpid())
	cleanup := func() {
		for _, s := range []string{"", "-wal", "-shm", "-journal", ".lock"} {
			os.Remove(tmp + s)
		}
	}
	cleanup()
	defer cleanup()
	fresh, err := index.Open(ctx, tmp)
	if err != nil {
		return memhost.SyncResult{}, fmt.Errorf("rebuild: %w", err)
	}
	res, err := x.syncInto(ctx, fresh, nil)
	if cerr := fresh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("rebuild (the old index is untouched): %w", err)
	}
	if err := x.opts.Index.CopyFrom(ctx, tmp); err != nil {
		return res, fmt.Errorf("rebuild: swapping in the new index (the old one is untouched): %w", err)
	}
	return res, nil
}

// RebuildLeftovers lists the files a rebuild of the index at dbPath left
// behind when its process died: dbPath.rebuild-PID and its -wal, -shm and
// -journal, for PIDs no process has. A live process's files (a rebuild
// under way) are not listed.
func RebuildLeftovers(dbPath string) ([]string, error) {
	matches, err := filepath.Glob(globEscape(dbPath) + ".rebuild-*")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		rest := strings.TrimPrefix(m, dbPath+".rebuild-")
		for _, s := range []string{"-wal", "-shm", "-journal", ".lock"} {
			rest = strings.TrimSuffix(rest, s)
		}
		pid, err := strconv.Atoi(rest)
		if err != nil || pid <= 0 || !ProcessGone(pid) {
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

// RemoveRebuildLeftovers removes what RebuildLeftovers lists and returns
// the files removed.
func RemoveRebuildLeftovers(dbPath string) ([]string, error) {
	files, err := RebuildLeftovers(dbPath)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, f)
	}
	return removed, errors.Join(errs...)
}

// ProcessGone reports whether no process has the id pid: kill(pid, 0)
// fails with ESRCH. (EPERM means one runs, of another user.)
func ProcessGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// globEscape escapes the pattern characters of a literal path.
func globEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
