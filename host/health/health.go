// Package health turns facts gathered about a memhost home into a health
// report: checks that pass, warn or fail, each with a message, and an
// overall HEALTHY (every check passes), DEGRADED (one warns) or
// UNHEALTHY (one fails). It does no I/O: package host gathers the Facts,
// Evaluate applies the thresholds of config.Health, Markdown writes the
// report for people (health/latest-report.md, HEARTBEAT.md).
package health

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/episodes"
	"github.com/memhost/memhost/index/integrity"
	"github.com/memhost/memhost/index/vectors"
)

// The outcomes of a check.
const (
	Pass memhost.HealthStatus = "pass"
	Warn memhost.HealthStatus = "warn"
	Fail memhost.HealthStatus = "fail"
)

// The overall states.
const (
	Healthy   memhost.HealthOverall = "HEALTHY"
	Degraded  memhost.HealthOverall = "DEGRADED"
	Unhealthy memhost.HealthOverall = "UNHEALTHY"
)

// Facts is what the checks judge, gathered by package host. A field whose
// gathering failed holds the error's text in its Err.
type Facts struct {
	Now         time.Time
	Database    Database
	Drift       *integrity.Drift // nil when it could not be counted
	Pages       Pages
	Transcripts Transcripts
	Queue       Queue
	Provider    Provider
	Daily       Daily
	Episodes    Episodes
	Sizes       memhost.HealthSizes
	Leaks       Leaks
	Watcher     Watcher
}

// Database is the index file's state.
type Database struct {
	Path string
	Err  string // it cannot be read at all
	// MovedAside is where a corrupt index found when the home was opened
	// was moved ("" if none): the one in use was built afresh.
	MovedAside string
	Problems   []string // PRAGMA quick_check and FTS5 integrity-check
	Files      int
	Chunks     int
	LastSync   string
}

// Pages compares the notebook and the sessions folder with the index.
type Pages struct {
	Err string
	// Stale are files new, edited or deleted since the last sync that
	// changed longer ago than the grace; Recent those changed within it.
	Stale, Recent []string
	TooLarge      []string // larger than what is indexed
	Unreadable    []string // cannot be read, or symlinks leading out
}

// Transcripts compares each transcript's turns with the index.
type Transcripts struct {
	Err        string
	Files      int         // transcripts checked
	Turns      int         // turns in them (as far as indexed)
	Duplicated []TurnIssue // turns whose chunks the index holds more than once
	Missing    []TurnIssue // turns the index does not hold
	Extra      int         // extra chunk copies in all
	Torn       []string    // transcripts whose last line is incomplete
	Malformed  int         // lines that are not JSON turns
}

// TurnIssue names a turn of a session.
type TurnIssue struct {
	Session string `json:"session"`
	Turn    string `json:"turn"`
	Copies  int    `json:"copies,omitempty"`
}

// Queue is the embedding queue.
type Queue struct {
	Err        string
	NoProvider bool // keyword-only by choice: the queue is not worked
	Pending    int
	Dead       int
	DeadChunks []vectors.DeadChunk
	// CacheHits and CacheMisses count the embedding cache's look-ups.
	CacheHits, CacheMisses int64
	// Worker is the background worker of this process (a server's).
	Worker Worker
}

// Worker is what the embedding worker has achieved. Without one (a
// one-shot process) the queue is worked by the next search or by the
// background run a write starts.
type Worker struct {
	Running bool
	// Progress is when it last embedded something or found the queue
	// empty (its start before that).
	Progress time.Time
	// FailingSince is when its runs began to fail in a row, Err the last
	// failure; zero and "" when its last run did not fail.
	FailingSince time.Time
	Err          string
}

// Provider is the active embeddings provider, probed with a short query.
type Provider struct {
	Name        string
	NoProvider  bool
	Preparing   bool
	Err         string
	LatenciesMs []float64
}

// Daily says whether today's daily log exists.
type Daily struct {
	Path   string // notebook path of today's log
	Exists bool
}

// Episodes is today's episode log beside today's conversations.
type Episodes struct {
	Err      string
	Path     string    // notebook path of today's episode log
	Messages int       // messages in today's conversations
	Newest   time.Time // the last of them
	Exists   bool      // the page is there
	// State is episodes.Written when the page is missing or behind the
	// transcripts, episodes.Unchanged when current, episodes.Kept when a
	// person edited it.
	State string
}

// Leaks are files left in brain/ (and cache/) by processes that are gone.
type Leaks struct {
	Err      string
	Rebuild  []string // memory.db.rebuild-PID* of dead PIDs
	Corrupt  []string // *.corrupt-* copies of damaged databases, kept for inspection
	StrayWAL []string // -wal and -shm files whose database is gone
	PageTemp []string // notebook/…/.memhost-tmp-*: page writes killed before their rename
	Serve    []string // brain/serve.json and the socket of a server that was killed
}

// Watcher is the file watcher of a long-lived process (memhost serve).
type Watcher struct {
	Started   bool      // Watch ran in this process
	Running   bool      // it still runs
	LastEvent time.Time // when it last synced changes it saw; zero when none
}

// Evaluate judges facts against th.
func Evaluate(f Facts, th config.Health) memhost.HealthReport {
	r := memhost.HealthReport{Timestamp: f.Now.UTC().Format(time.RFC3339)}
	r.Metrics = memhost.HealthMetrics{Files: f.Database.Files, Chunks: f.Database.Chunks, QueuePending: f.Queue.Pending, QueueDead: f.Queue.Dead,
		DatabaseBytes: f.Sizes.DatabaseBytes, VaultBytes: f.Sizes.VaultBytes, LastSync: f.Database.LastSync}
	if f.Drift != nil {
		r.Metrics.Drift = f.Drift.Total()
	}
	r.Metrics.Drift += f.Transcripts.Extra + len(f.Transcripts.Missing)
	if !f.Watcher.LastEvent.IsZero() {
		r.Metrics.LastWatcherEvent = f.Watcher.LastEvent.UTC().Format(time.RFC3339)
	}
	r.Checks = []memhost.HealthCheck{
		checkDatabase(f.Database),
		checkDrift(f.Drift, th),
		checkPages(f.Pages),
		checkTranscripts(f.Transcripts, th),
		checkQueue(f.Queue, f.Provider, f.Now, th),
		checkProvider(f.Provider, th, &r.Metrics),
		checkDaily(f.Daily, f.Episodes, f.Now, time.Duration(th.StaleGraceMinutes)*time.Minute),
		checkCache(f.Queue, th, &r.Metrics),
		checkSize("database-size", "the index", f.Sizes.DatabaseBytes, th.DatabaseWarnMB, th.DatabaseFailMB),
		checkSize("vault-size", "the notebook and sessions", f.Sizes.VaultBytes, th.VaultWarnMB, th.VaultFailMB),
		checkLeaks(f.Leaks),
		checkWatcher(f.Watcher, f.Now),
	}
	r.Overall = OverallOf(r.Checks)
	return r
}

// OverallOf is UNHEALTHY when a check fails, DEGRADED when one warns,
// HEALTHY otherwise.
func OverallOf(checks []memhost.HealthCheck) memhost.HealthOverall {
	o := Healthy
	for _, c := range checks {
		switch c.Status {
		case Fail:
			return Unhealthy
		case Warn:
			o = Degraded
		}
	}
	return o
}

// grade is Pass up to warn, Warn up to fail, Fail above (never when fail
// is 0 and warn is not).
func grade(v, warn, fail float64) memhost.HealthStatus {
	switch {
	case fail > 0 && v > fail:
		return Fail
	case v > warn:
		return Warn
	}
	return Pass
}

func checkDatabase(d Database) memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "database"}
	switch {
	case d.Err != "":
		c.Status, c.Message = Fail, "cannot read the index: "+d.Err
	case len(d.Problems) > 0:
		c.Status = Fail
		c.Message = fmt.Sprintf("the index is damaged (%d problems; first: %s); a repair rebuilds it", len(d.Problems), d.Problems[0])
		c.Metadata = map[string]any{"problems": d.Problems}
	case d.MovedAside != "":
		c.Status = Warn
		c.Message = fmt.Sprintf("the index was corrupt when opened: moved aside to %s and built afresh (%s, %s now)", d.MovedAside, count(d.Files, "file"), count(d.Chunks, "chunk"))
	default:
		c.Status, c.Message = Pass, fmt.Sprintf("readable, quick_check ok (%s, %s)", count(d.Files, "file"), count(d.Chunks, "chunk"))
	}
	return c
}

func checkDrift(d *integrity.Drift, th config.Health) memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "index-drift"}
	if d == nil {
		return memhost.HealthCheck{Name: c.Name, Status: Fail, Message: "cannot compare the index's tables"}
	}
	n := d.Total()
	c.Status = grade(float64(n), float64(th.DriftWarn), float64(th.DriftFail))
	if n == 0 {
		c.Message = "chunks, full-text rows and vectors agree"
		return c
	}
	var parts []string
	for _, p := range []struct {
		n          int
		noun, what string
	}{
		{d.ChunksWithoutFTS, "chunk", "without a full-text row"},
		{d.FTSWithoutChunk, "full-text row", "without a chunk"},
		{d.VectorsWithoutChunk, "vector", "without a chunk"},
		{d.EmbeddedWithoutVector, "chunk", "marked embedded without a vector"},
	} {
		if p.n > 0 {
			parts = append(parts, count(p.n, p.noun)+" "+p.what)
		}
	}
	c.Message = strings.Join(parts, ", ") + "; a repair rebuilds the index"
	c.Metadata = map[string]any{"drift": d}
	return c
}

func checkPages(p Pages) memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "pages"}
	if p.Err != "" {
		return memhost.HealthCheck{Name: c.Name, Status: Fail, Message: "cannot compare the files with the index: " + p.Err}
	}
	var parts []string
	c.Status = Pass
	if n := len(p.Stale); n > 0 {
		c.Status = Warn
		parts = append(parts, fmt.Sprintf("%d not indexed since they changed (%s)", n, list(p.Stale)))
	}
	if n := len(p.TooLarge); n > 0 {
		c.Status = Warn
		parts = append(parts, fmt.Sprintf("%d too large to index (%s)", n, list(p.TooLarge)))
	}
	if n := len(p.Unreadable); n > 0 {
		c.Status = Warn
		parts = append(parts, fmt.Sprintf("%d unreadable (%s)", n, list(p.Unreadable)))
	}
	if n := len(p.Recent); n > 0 {
		parts = append(parts, fmt.Sprintf("%d changed moments ago, indexed at the next sync", n))
	}
	if len(parts) == 0 {
		c.Message = "every file is indexed as it is on disk"
		return c
	}
	c.Message = strings.Join(parts, "; ")
	c.Metadata = map[string]any{}
	for k, v := range map[string][]string{"stale": p.Stale, "tooLarge": p.TooLarge, "unreadable": p.Unreadable, "recent": p.Recent} {
		if len(v) > 0 {
			c.Metadata[k] = v
		}
	}
	return c
}

func checkTranscripts(t Transcripts, th config.Health) memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "transcripts"}
	if t.Err != "" {
		return memhost.HealthCheck{Name: c.Name, Status: Fail, Message: "cannot compare transcripts with the index: " + t.Err}
	}
	n := t.Extra + len(t.Missing)
	c.Status = grade(float64(n), float64(th.DriftWarn), float64(th.DriftFail))
	var parts []string
	if len(t.Duplicated) > 0 {
		parts = append(parts, fmt.Sprintf("%s indexed more than once (%s; first: %s)", count(len(t.Duplicated), "turn"), count(t.Extra, "extra chunk"), turnName(t.Duplicated[0])))
	}
	if len(t.Missing) > 0 {
		parts = append(parts, fmt.Sprintf("%s missing from the index (first: %s)", count(len(t.Missing), "turn"), turnName(t.Missing[0])))
	}
	if len(parts) > 0 {
		parts[len(parts)-1] += "; a repair rebuilds the index"
	}
	if len(t.Torn) > 0 {
		c.Status = worse(c.Status, Warn)
		parts = append(parts, fmt.Sprintf("%d with an incomplete last line (%s)", len(t.Torn), list(t.Torn)))
	}
	if t.Malformed > 0 {
		c.Status = worse(c.Status, Warn)
		parts = append(parts, fmt.Sprintf("%d lines are not JSON turns (skipped)", t.Malformed))
	}
	if len(parts) == 0 {
		c.Message = fmt.Sprintf("%s in %s, each indexed once", count(t.Turns, "turn"), count(t.Files, "transcript"))
		return c
	}
	c.Message = strings.Join(parts, "; ")
	c.Metadata = map[string]any{}
	if len(t.Duplicated) > 0 {
		c.Metadata["duplicated"] = first(t.Duplicated, 20)
	}
	if len(t.Missing) > 0 {
		c.Metadata["missing"] = first(t.Missing, 20)
	}
	if len(t.Torn) > 0 {
		c.Metadata["torn"] = t.Torn
	}
	return c
}

// worse is the worse of two statuses: pass < warn < fail.
func worse(a, b memhost.HealthStatus) memhost.HealthStatus {
	rank := map[memhost.HealthStatus]int{Pass: 0, Warn: 1, Fail: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func turnName(t TurnIssue) string { return t.Session + " turn " + t.Turn }

func first[T any](s []T, n int) []T { return s[:min(n, len(s))] }

// checkQueue passes while the queue is being worked through, or will be
// by the next search or background run: chunks waiting for a vector are
// the normal state after every write. Only a queue that is stuck warns
// (or fails, with more chunks than th.PendingFail): its provider cannot
// embed, or its worker has failed or made no progress for
// th.StaleGraceMinutes.
func checkQueue(q Queue, p Provider, now time.Time, th config.Health) memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "embedding-queue"}
	switch {
	case q.Err != "":
		return memhost.HealthCheck{Name: c.Name, Status: Fail, Message: "cannot read the queue: " + q.Err}
	case q.Dead > 0:
		c.Status = Fail
		d := q.DeadChunks
		c.Message = fmt.Sprintf("%d chunks dead after %d failed embeddings (first: %s line %d: %s), %d pending; a repair retries them",
			q.Dead, th.DeadAfterFailures, d[0].Path, d[0].StartLine, d[0].LastError, q.Pending)
		c.Metadata = map[string]any{"dead": d}
	case q.NoProvider:
		c.Status, c.Message = Pass, fmt.Sprintf("no embeddings provider: keyword-only search (%s without a vector)", count(q.Pending, "chunk"))
	case q.Pending == 0:
		c.Status, c.Message = Pass, "0 chunks waiting for a vector, none dead"
	default:
		waiting := fmt.Sprintf("%s waiting for a vector", count(q.Pending, "chunk"))
		if why, since := stuck(q, p, now, th); why != "" {
			c.Status = worse(Warn, grade(float64(q.Pending), float64(th.PendingWarn), float64(th.PendingFail)))
			c.Message = waiting + ", stuck: " + why
			c.Metadata = map[string]any{"stuck": why}
			if !since.IsZero() {
				c.Metadata["since"] = since.UTC().Format(time.RFC3339)
			}
			break
		}
		c.Status = Pass
		w := q.Worker
		switch {
		case p.Preparing:
			c.Message = fmt.Sprintf("%s, embedded once %s is ready (%s)", waiting, p.Name, p.Err)
		case w.Running && w.Err != "":
			c.Message = fmt.Sprintf("%s; the embedding worker retries after a failure %s ago: %s", waiting, ago(now.Sub(w.FailingSince)), w.Err)
		case w.Running:
			c.Message = fmt.Sprintf("%s; the embedding worker is on them (last progress %s ago)", waiting, ago(now.Sub(w.Progress)))
		default:
			c.Message = waiting + "; the next search or the background run embeds them"
		}
	}
	c.Metadata = merge(c.Metadata, map[string]any{"pending": q.Pending, "dead": q.Dead})
	return c
}

// stuck says why a queue with pending chunks is not being worked through,
// and since when ("" when it is): the provider cannot embed, or the
// worker has been failing or without progress longer than the grace.
func stuck(q Queue, p Provider, now time.Time, th config.Health) (string, time.Time) {
	w := q.Worker
	grace := time.Duration(th.StaleGraceMinutes) * time.Minute
	switch {
	case p.Err != "" && !p.Preparing:
		why := fmt.Sprintf("%s cannot embed (%s)", p.Name, p.Err)
		if w.Running && !w.FailingSince.IsZero() {
			return why + sinceAgo(w.FailingSince, now), w.FailingSince
		}
		return why, time.Time{}
	case p.Preparing:
		return "", time.Time{} // the provider readies itself; the provider check reports it
	case w.Running && !w.FailingSince.IsZero() && now.Sub(w.FailingSince) > grace:
		return "the embedding worker fails" + sinceAgo(w.FailingSince, now) + ": " + w.Err, w.FailingSince
	case w.Running && now.Sub(w.Progress) > grace:
		return "the embedding worker has made no progress" + sinceAgo(w.Progress, now), w.Progress
	}
	return "", time.Time{}
}

func sinceAgo(t, now time.Time) string {
	return fmt.Sprintf(" since %s (%s ago)", t.UTC().Format(time.RFC3339), ago(now.Sub(t)))
}

func merge(a, b map[string]any) map[string]any {
	if a == nil {
		return b
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			a[k] = v
		}
	}
	return a
}

func checkProvider(p Provider, th config.Health, m *memhost.HealthMetrics) memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "embedding-provider"}
	switch {
	case p.NoProvider:
		c.Status, c.Message = Pass, "none configured: search is keyword-only ("+p.Err+")"
		return c
	case p.Preparing:
		c.Status, c.Message = Warn, fmt.Sprintf("%s is not ready yet: %s", p.Name, p.Err)
		return c
	case p.Err != "":
		c.Status, c.Message = Fail, fmt.Sprintf("%s cannot embed: %s", p.Name, p.Err)
		return c
	case len(p.LatenciesMs) == 0:
		c.Status, c.Message = Warn, fmt.Sprintf("%s was not probed", p.Name)
		return c
	}
	p95 := Percentile(p.LatenciesMs, 95)
	m.LatencyP95Ms = &p95
	c.LatencyMs = p95
	c.Status = grade(p95, float64(th.LatencyWarnMs), float64(th.LatencyFailMs))
	c.Message = fmt.Sprintf("%s responds: p95 %s over %d query embeds", p.Name, fmtMs(p95), len(p.LatenciesMs))
	c.Metadata = map[string]any{"latenciesMs": p.LatenciesMs}
	return c
}

// Percentile is the p-th percentile of xs (nearest rank); 0 for none.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(len(s)-1, i)]
}

func fmtMs(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

// checkDaily judges the daily markdown logs: today's conversations need
// their episode log once the last message is older than grace (a session
// under way is logged when it ends); a quiet day needs none. The daily log
// (daily-log entries) is an agent's choice and never warns.
func checkDaily(d Daily, e Episodes, now time.Time, grace time.Duration) memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "daily-log", Status: Pass}
	daily := d.Path + " exists"
	if !d.Exists {
		daily = "no daily log for today yet (" + d.Path + ")"
	}
	switch {
	case e.Err != "":
		c.Status, c.Message = Warn, "cannot compare today's conversations with their episode log: "+e.Err
	case e.Messages == 0:
		c.Message = daily + "; no conversation today"
	case e.State == episodes.Kept:
		c.Message = fmt.Sprintf("%s; %s was edited by hand and is kept as it is", daily, e.Path)
	case e.State == episodes.Unchanged:
		c.Message = fmt.Sprintf("%s; %s holds today's %d messages", daily, e.Path, e.Messages)
	case now.Sub(e.Newest) < grace:
		c.Message = fmt.Sprintf("%s; a conversation is under way (last message at %s): %s is written when it ends", daily, e.Newest.Format("15:04"), e.Path)
	case !e.Exists:
		c.Status = Warn
		c.Message = fmt.Sprintf("%d messages in conversations today but no episode log (%s): regenerate it", e.Messages, e.Path)
	default:
		c.Status = Warn
		c.Message = fmt.Sprintf("%s is out of date: today's conversations hold %d messages since it was written; regenerate it", e.Path, e.Messages)
	}
	return c
}

func checkCache(q Queue, th config.Health, m *memhost.HealthMetrics) memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "embedding-cache", Status: Pass}
	total := q.CacheHits + q.CacheMisses
	if total == 0 {
		c.Message = "no look-ups recorded yet"
		return c
	}
	rate := float64(q.CacheHits) / float64(total)
	m.CacheHitRate = &rate
	c.Message = fmt.Sprintf("hit rate %.0f%% (%d of %d look-ups)", 100*rate, q.CacheHits, total)
	if th.MinCacheHitRate > 0 && rate < th.MinCacheHitRate {
		c.Status = Warn
		c.Message += fmt.Sprintf(", below %.0f%%", 100*th.MinCacheHitRate)
	}
	return c
}

func checkSize(name, what string, bytes int64, warnMB, failMB int) memhost.HealthCheck {
	mb := float64(bytes) / (1 << 20)
	c := memhost.HealthCheck{Name: name, Status: grade(mb, float64(warnMB), float64(failMB))}
	limit := fmt.Sprintf("warn above %d MB", warnMB)
	if failMB > 0 {
		limit += fmt.Sprintf(", fail above %d MB", failMB)
	}
	c.Message = fmt.Sprintf("%s: %s (%s)", what, fmtBytes(bytes), limit)
	return c
}

func fmtBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.0f kB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func checkLeaks(l Leaks) memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "leaked-files", Status: Pass}
	if l.Err != "" {
		return memhost.HealthCheck{Name: c.Name, Status: Warn, Message: "cannot look for leaked files: " + l.Err}
	}
	var parts []string
	if n := len(l.Rebuild); n > 0 {
		parts = append(parts, fmt.Sprintf("%d files of interrupted rebuilds (%s)", n, list(l.Rebuild)))
	}
	if n := len(l.StrayWAL); n > 0 {
		parts = append(parts, fmt.Sprintf("%d -wal/-shm files without their database (%s)", n, list(l.StrayWAL)))
	}
	if n := len(l.Serve); n > 0 {
		parts = append(parts, fmt.Sprintf("%d files of a server that was killed (%s)", n, list(l.Serve)))
	}
	if n := len(l.PageTemp); n > 0 {
		parts = append(parts, fmt.Sprintf("%d temporary files of interrupted page writes (%s)", n, list(l.PageTemp)))
	}
	if len(parts) > 0 {
		parts[len(parts)-1] += "; a repair removes them"
	}
	if n := len(l.Corrupt); n > 0 {
		parts = append(parts, fmt.Sprintf("%d copies of damaged indexes kept for inspection (%s); delete them when done", n, list(l.Corrupt)))
	}
	if len(parts) == 0 {
		c.Message = "none"
		return c
	}
	c.Status = Warn
	c.Message = strings.Join(parts, "; ")
	c.Metadata = map[string]any{}
	for k, v := range map[string][]string{"rebuild": l.Rebuild, "corrupt": l.Corrupt, "strayWal": l.StrayWAL, "pageTemp": l.PageTemp, "serve": l.Serve} {
		if len(v) > 0 {
			c.Metadata[k] = v
		}
	}
	return c
}

func checkWatcher(w Watcher, now time.Time) memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "watcher"}
	last := "no change seen yet"
	if !w.LastEvent.IsZero() {
		last = "last change seen " + ago(now.Sub(w.LastEvent)) + " ago"
	}
	switch {
	case !w.Started:
		c.Status, c.Message = Pass, "not running in this process (a server runs one); recalls check files for changes"
	case !w.Running:
		c.Status, c.Message = Fail, "the file watcher stopped; searches stat every page until the server restarts ("+last+")"
	default:
		c.Status, c.Message = Pass, "running; "+last
	}
	return c
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// list names up to three items, then how many more.
func list(xs []string) string {
	if len(xs) <= 3 {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:3], ", ") + fmt.Sprintf(" and %d more", len(xs)-3)
}

// count is "1 chunk", "2 chunks": a person reads these messages.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
