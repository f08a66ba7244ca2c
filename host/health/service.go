package health

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/chunk"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/indexer"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/host/sessions/turnchunk"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/index/integrity"
	"github.com/memhost/memhost/internal/fsx"
	"github.com/memhost/memhost/internal/sockpath"
)

// HealthReportPath is where Health writes its report, relative to the
// home (outside the notebook).
const HealthReportPath = "health/latest-report.md"

// HeartbeatPage is the notebook page Health writes with IntoNotebook.
const HeartbeatPage = "HEARTBEAT.md"

// probes is how many query embeds measure the provider's latency.
const probes = 5

// Health checks the home (see package health for the checks and
// config.Health for their thresholds) and writes the report as markdown.
// A check that cannot run fails; Health itself fails only when the report
// cannot be written or ctx ends.
func (hs *HealthService) Health(ctx context.Context, req memhost.HealthRequest) (memhost.HealthResponse, error) {
	cfg := hs.k.Config()
	f := hs.healthFacts(ctx, cfg)
	var resp memhost.HealthResponse
	if req.Repair {
		resp.Repairs = hs.repair(ctx, f)
		f = hs.healthFacts(ctx, cfg)
	}
	if err := ctx.Err(); err != nil {
		return resp, err
	}
	resp.HealthReport = Evaluate(f, cfg.Health)
	resp.HealthReport.Checks = append(resp.HealthReport.Checks, hs.k.MoreChecks(ctx)...)
	resp.HealthReport.Overall = OverallOf(resp.HealthReport.Checks)
	if !req.NoHistory {
		hs.saveHistory(resp.HealthReport)
	}
	if req.NoReport {
		return resp, nil
	}
	md := Markdown(resp.HealthReport, resp.Repairs)
	if req.IntoNotebook {
		err := hs.k.Notebook().Update(ctx, HeartbeatPage, func([]byte, bool) ([]byte, error) { return []byte(md), nil })
		if err != nil {
			return resp, err
		}
		resp.ReportPath = hs.k.Notebook().Abs(HeartbeatPage)
		return resp, hs.k.Indexer().SyncPaths(ctx, HeartbeatPage)
	}
	resp.ReportPath = filepath.Join(hs.k.Home(), filepath.FromSlash(HealthReportPath))
	return resp, writeReport(resp.ReportPath, []byte(md))
}

// healthFacts gathers what the checks judge. Each part's failure is kept
// in the part (its Err) rather than ending the check.
func (hs *HealthService) healthFacts(ctx context.Context, cfg *config.Config) Facts {
	f := Facts{Now: hs.k.Now()}
	f.Database = hs.databaseFacts(ctx)
	if d, err := integrity.DriftOf(ctx, hs.k.Index()); err == nil {
		f.Drift = &d
	}
	f.Pages = hs.pageFacts(ctx, time.Duration(cfg.Health.StaleGraceMinutes)*time.Minute)
	f.Transcripts = hs.transcriptFacts(ctx, cfg)

	timeout := time.Duration(max(cfg.Health.LatencyFailMs, cfg.Memory.Embedding.QueryTimeoutMs)) * time.Millisecond
	p := hs.k.Queue().ProbeProvider(ctx, probes, timeout)
	f.Provider = Provider{Name: p.Provider, NoProvider: p.NoProvider, Preparing: p.Preparing, Err: p.Err, LatenciesMs: p.LatenciesMs}
	q, err := hs.k.Queue().Health(ctx)
	f.Queue = Queue{NoProvider: p.NoProvider, Pending: q.Pending, Dead: q.Dead, DeadChunks: q.Oldest,
		CacheHits: q.CacheHits, CacheMisses: q.CacheMisses}
	if err != nil {
		f.Queue.Err = err.Error()
	}
	w := hs.k.Queue().WorkerState()
	f.Queue.Worker = Worker{Running: w.Running, Progress: w.Progress, FailingSince: w.FailingSince, Err: w.Err}

	day := "daily/" + hs.k.Now().In(hs.k.Location()).Format(time.DateOnly) + ".md"
	_, err = os.Stat(hs.k.Notebook().Abs(day))
	f.Daily = Daily{Path: day, Exists: err == nil}
	f.Episodes = hs.k.EpisodeFacts(ctx)

	f.Sizes.DatabaseBytes = fileSizes(hs.k.Index().Path(), hs.k.Index().Path()+"-wal")
	f.Sizes.VaultBytes = treeSize(hs.k.Notebook().Root()) + treeSize(hs.k.Sessions().Dir)
	f.Leaks = hs.leaks()
	f.Watcher = hs.k.WatcherFacts()
	return f
}

func (hs *HealthService) databaseFacts(ctx context.Context) Database {
	d := Database{Path: hs.k.Index().Path()}
	if aside := hs.k.MovedAside(); aside != "" {
		d.MovedAside = hs.k.Rel(aside)
	}
	st, err := hs.k.Index().Stats(ctx)
	if err != nil {
		if index.IsCorrupt(err) {
			d.Problems = []string{err.Error()}
		} else {
			d.Err = err.Error()
		}
		return d
	}
	d.Files, d.Chunks = st.Files, st.Chunks
	d.LastSync, _ = hs.k.Index().Meta(ctx, "last_sync")
	problems, err := integrity.Quick(ctx, hs.k.Index(), 20)
	if err != nil {
		d.Err = err.Error()
	}
	d.Problems = problems
	return d
}

// pageFacts compares the files with the index. A file changed within
// grace is Recent (the next sync indexes it), older ones Stale; a deleted
// file's time is its folder's.
func (hs *HealthService) pageFacts(ctx context.Context, grace time.Duration) Pages {
	var p Pages
	files, err := hs.k.Indexer().Files(ctx)
	if err != nil {
		p.Err = err.Error()
		return p
	}
	for _, fi := range files.Files {
		abs := hs.absPath(fi.Path)
		switch fi.State {
		case "indexed":
		case "unindexable":
			st, err := os.Stat(abs)
			limit := int64(indexer.MaxPageBytes)
			if sessions.IsPath(fi.Path) {
				limit = indexer.MaxTranscriptBytes
			}
			if err == nil && st.Size() > limit {
				p.TooLarge = append(p.TooLarge, fi.Path)
			} else {
				p.Unreadable = append(p.Unreadable, fi.Path)
			}
		default: // new, edited, deleted
			st, err := os.Stat(abs)
			if err != nil {
				st, err = os.Stat(filepath.Dir(abs))
			}
			// The file system's clock, not the calendar's (which tests
			// move): mtimes are the wall clock's.
			if err == nil && time.Since(st.ModTime()) < grace {
				p.Recent = append(p.Recent, fi.Path)
			} else {
				p.Stale = append(p.Stale, fi.Path)
			}
		}
	}
	return p
}

// absPath is where an index path lives: transcripts in the sessions
// folder, pages in the notebook.
func (hs *HealthService) absPath(rel string) string {
	if sessions.IsPath(rel) {
		return filepath.Join(hs.k.Sessions().Dir, filepath.FromSlash(strings.TrimPrefix(rel, "sessions/")))
	}
	return hs.k.Notebook().Abs(rel)
}

// transcriptFacts checks each transcript's turns against the index: every
// turn of the part of the file that was indexed (its recorded size and
// hash) must be there, once. A file changed otherwise than by appending
// since it was indexed is left to the pages check.
func (hs *HealthService) transcriptFacts(ctx context.Context, cfg *config.Config) Transcripts {
	var t Transcripts
	fail := func(err error) Transcripts { return Transcripts{Err: err.Error()} }
	stamps, err := hs.k.Index().Stamps(ctx)
	if err != nil {
		return fail(err)
	}
	groups, err := integrity.TurnChunks(ctx, hs.k.Index())
	if err != nil {
		return fail(err)
	}
	byPath := map[string][]integrity.TurnCopies{}
	for _, g := range groups {
		byPath[g.Path] = append(byPath[g.Path], g)
	}
	entries, err := os.ReadDir(hs.k.Sessions().Dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	opt := chunk.Options{MaxTokens: cfg.Memory.Chunking.MaxTokens, OverlapTokens: cfg.Memory.Chunking.OverlapTokens}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		rel := "sessions/" + name
		data, err := fsx.ReadFile(filepath.Join(hs.k.Sessions().Dir, name)) // a FIFO would block
		if err != nil {
			continue // the pages check reports unreadable files
		}
		torn := len(data) > 0 && data[len(data)-1] != '\n'
		if torn {
			t.Torn = append(t.Torn, rel)
		}
		st, ok := stamps[rel]
		if !ok || int64(len(data)) < st.Size {
			continue
		}
		sum := sha256.Sum256(data[:st.Size])
		if hex.EncodeToString(sum[:]) != st.Hash {
			continue
		}
		indexed := data[:st.Size]
		t.Files++
		chunks, problems := turnchunk.Chunks(rel, indexed, 0, opt)
		t.Malformed += len(problems)
		if torn && int64(len(data)) == st.Size && !json.Valid(lastLine(indexed)) {
			t.Malformed-- // counted as torn
		}
		session := sessions.IDOf(rel)
		var order []string
		expected := map[string]bool{}
		for _, c := range chunks {
			for _, id := range sessions.ParseMeta(c.Meta).Turns {
				if !expected[id] {
					expected[id] = true
					order = append(order, id)
				}
			}
		}
		t.Turns += len(order)
		present := map[string]bool{}
		copies := map[string]int{}
		var dupOrder []string
		for _, g := range byPath[rel] {
			for _, id := range sessions.ParseMeta(g.Meta).Turns {
				present[id] = true
				if g.Copies > 1 {
					if copies[id] == 0 {
						dupOrder = append(dupOrder, id)
					}
					copies[id] = max(copies[id], g.Copies)
					t.Extra += g.Copies - 1
				}
			}
		}
		for _, id := range dupOrder {
			t.Duplicated = append(t.Duplicated, TurnIssue{Session: session, Turn: id, Copies: copies[id]})
		}
		for _, id := range order {
			if !present[id] {
				t.Missing = append(t.Missing, TurnIssue{Session: session, Turn: id})
			}
		}
	}
	return t
}

// lastLine is the last line of data, without its line break.
func lastLine(data []byte) []byte {
	s := strings.TrimRight(string(data), "\n")
	return []byte(s[strings.LastIndexByte(s, '\n')+1:])
}

// leaks lists files in brain/ and cache/ left by processes that are gone.
func (hs *HealthService) leaks() Leaks {
	var l Leaks
	db := hs.k.Index().Path()
	var err error
	if l.Rebuild, err = indexer.RebuildLeftovers(db); err != nil {
		l.Err = err.Error()
	}
	dir := filepath.Dir(db)
	l.Corrupt, _ = filepath.Glob(filepath.Join(dir, "*.corrupt-*"))
	for _, d := range []string{dir, filepath.Join(hs.k.Home(), "cache")} {
		l.StrayWAL = append(l.StrayWAL, strayWAL(d)...)
	}
	// Listed without the lock: one may belong to a write under way, which
	// --repair, taking the lock, never removes.
	l.PageTemp, _ = hs.k.Notebook().Leftovers(context.Background(), false)
	l.Serve = hs.rel(hs.serveLeftovers(false))
	l.Rebuild, l.Corrupt, l.StrayWAL, l.PageTemp = hs.rel(l.Rebuild), hs.rel(l.Corrupt), hs.rel(l.StrayWAL), hs.rel(l.PageTemp)
	return l
}

// strayWAL lists the -wal and -shm files of dir whose database is gone
// (a rebuild's, of a process that may still run, are left to
// indexer.RebuildLeftovers).
func strayWAL(dir string) []string {
	var out []string
	for _, suffix := range []string{"-wal", "-shm"} {
		matches, _ := filepath.Glob(filepath.Join(dir, "*"+suffix))
		for _, m := range matches {
			if strings.Contains(filepath.Base(m), ".rebuild-") || strings.Contains(filepath.Base(m), ".corrupt-") {
				continue
			}
			if _, err := os.Stat(strings.TrimSuffix(m, suffix)); errors.Is(err, fs.ErrNotExist) {
				out = append(out, m)
			}
		}
	}
	sort.Strings(out)
	return out
}

func fileSizes(paths ...string) int64 {
	var n int64
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// treeSize is the bytes of the regular files under dir.
func treeSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// repair fixes what f shows can be fixed and says what it did.
func (hs *HealthService) repair(ctx context.Context, f Facts) []string {
	var done []string
	say := func(format string, args ...any) { done = append(done, fmt.Sprintf(format, args...)) }

	removed, err := indexer.RemoveRebuildLeftovers(hs.k.Index().Path())
	removed = append(removed, hs.serveLeftovers(true)...)
	if temp, terr := hs.k.Notebook().Leftovers(ctx, true); terr == nil {
		removed = append(removed, temp...)
	} else {
		err = errors.Join(err, terr)
	}
	// Under the index's open lock, listed again: a process opening the
	// index meanwhile may have made the database these files now belong to.
	if unlock, lerr := index.Lock(hs.k.Index().Path()); lerr == nil {
		for _, p := range strayWAL(filepath.Dir(hs.k.Index().Path())) {
			if err := os.Remove(p); err == nil {
				removed = append(removed, p)
			}
		}
		unlock()
	}
	for _, p := range strayWAL(filepath.Join(hs.k.Home(), "cache")) {
		if err := os.Remove(p); err == nil {
			removed = append(removed, p)
		}
	}
	if len(removed) > 0 {
		say("removed %d leaked files: %s", len(removed), strings.Join(hs.rel(removed), ", "))
	}
	if err != nil {
		say("could not remove every leaked file: %v", err)
	}

	for _, rel := range f.Transcripts.Torn {
		msg, err := hs.k.Sessions().RepairTail(sessions.IDOf(rel))
		switch {
		case err != nil:
			say("could not repair %s: %v", rel, err)
		case msg != "":
			say("%s", msg)
		}
	}

	damaged := f.Database.Err != "" || len(f.Database.Problems) > 0
	drifted := f.Drift == nil || f.Drift.Total() > 0 || f.Transcripts.Extra+len(f.Transcripts.Missing) > 0
	switch {
	case damaged || drifted:
		why := "it drifted"
		if damaged {
			why = "it is damaged"
		}
		var res memhost.SyncResult
		var err error
		if damaged {
			// A damaged file is not copied into: it is moved aside (kept
			// for inspection) and a new one is built in its place; other
			// processes follow the path to the new file.
			var msg string
			cause := strings.Join(slices.DeleteFunc(append([]string{f.Database.Err}, f.Database.Problems...), func(s string) bool { return s == "" }), "; ")
			if msg, err = hs.k.RecoverIndex(ctx, errors.New(cause), hs.k.Index().Generation()); err == nil {
				say("%s", msg)
			}
		} else {
			res, err = hs.k.Indexer().Rebuild(ctx)
			if err == nil {
				say("rebuilt the index because %s: %d files, %d chunks", why, res.Scanned, res.Chunks)
			}
		}
		if err != nil {
			say("could not rebuild the index: %v", err)
			break
		}
		if f.Provider.Err == "" && !f.Provider.NoProvider {
			// Vectors come back from the embedding cache.
			er, err := hs.k.Queue().Run(ctx, time.Minute)
			if err != nil {
				say("could not embed the rebuilt index yet: %v", err)
			} else {
				say("embedded %d chunks (%d from the cache), %d left for the background", er.Embedded, er.FromCache, er.Pending)
				if er.Pending > 0 {
					hs.k.Queue().Wake()
				}
			}
		} else {
			hs.k.Queue().Wake()
		}
	case len(f.Pages.Stale)+len(f.Pages.Recent) > 0:
		res, err := hs.k.Indexer().Sync(ctx)
		if err != nil {
			say("could not sync: %v", err)
		} else if res.Indexed+res.Removed > 0 {
			say("synced %d changed files (%d indexed, %d removed)", res.Indexed+res.Removed, res.Indexed, res.Removed)
		}
	}
	if f.Database.MovedAside != "" && !damaged {
		hs.k.ClearMovedAside() // the index built afresh at open is in step now
	}

	if f.Queue.Dead > 0 {
		n, err := hs.k.Queue().RetryDead(ctx)
		if err != nil {
			say("could not queue the dead chunks again: %v", err)
		} else {
			say("queued %d dead chunks for embedding again", n)
		}
	}
	if len(done) == 0 {
		say("nothing to repair")
	}
	return done
}

// serveLeftovers lists brain/serve.json and the socket of a server that is
// gone: a server removes them when it stops, so they are a killed one's
// when nothing holds brain/serve.lock. With remove, they are removed while
// this process holds the lock, so that no server starts meanwhile.
func (hs *HealthService) serveLeftovers(remove bool) []string {
	f, err := os.OpenFile(filepath.Join(hs.k.Home(), "brain", "serve.lock"), os.O_RDWR, 0)
	if err != nil {
		return nil // no server ever ran here
	}
	defer f.Close()
	if fsx.TryLockFile(f) != nil {
		return nil // a server runs
	}
	defer fsx.UnlockFile(f)
	var out []string
	for _, p := range []string{filepath.Join(hs.k.Home(), "brain", "serve.json"), sockpath.Of(hs.k.Home())} {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if remove && os.Remove(p) != nil {
			continue
		}
		out = append(out, p)
	}
	return out
}

// writeReport writes the report through a flushed temporary file and a
// rename, making its folder.
func writeReport(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return fsx.WriteFileAtomic(path, data, 0o600)
}

// rel names files of the home relative to it.
func (hs *HealthService) rel(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = hs.k.Rel(p)
	}
	return out
}
