// Package episodes writes the episode logs: a notebook page a day
// (memory.episodes.folder, default "episodes/YYYY-MM-DD.md") generated
// from the transcripts, a section per session and a heading per message,
// for people to read. The transcripts stay the truth: a page is
// written again from them when a session ends (the Claude Code hooks) or
// when asked (the Episodes operation), and the same transcripts give the
// same bytes, so a retry or a second run writes nothing.
//
// A page says it is generated (frontmatter "generated: memhost" and the
// hash of the rest of the page); one a person edited since, or wrote
// themselves, is never overwritten: its day is reported as kept.
//
// Times and days are in the configured time zone (the timezone key,
// default the machine's), as the daily log's are. Tool calls, tool results
// and compaction entries are left out: the page is the conversation.
package episodes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/schedule"
	"github.com/memhost/memhost/host/sessions"
)

// Kernel is what the EpisodeService uses of the Host.
type Kernel interface {
	Sessions() *sessions.Store
	Notebook() *notebook.Notebook
	Config() *config.Config
	Location() *time.Location
	Now() time.Time
	IndexWritten(ctx context.Context, rels ...string) []string
	// Publish publishes what op, run with req outside the operation
	// chain (by a schedule, a hook or another operation), changed.
	Publish(op api.Operation, req, resp any, err error)
	Log() *slog.Logger
}

// EpisodeService writes the episode logs. It holds no state: pages are
// written under the notebook's lock, so any number of goroutines and
// processes may run it at once.
type EpisodeService struct {
	k Kernel
	// known is which days each transcript has messages on, as of its
	// size and modification time: a day's log reads only the transcripts
	// with messages that day (or changed since), not every one of the
	// home, which a session's end would otherwise pay for on each hook.
	knownMu sync.Mutex
	known   map[string]transcriptDays
	// unit is the schedule's minute; 0 is a minute (tests shorten it
	// before the schedule starts).
	unit time.Duration
}

// New returns the service over k; minute is the length of RunSchedule's
// minute (tests shorten it; 0 is a minute).
func New(k Kernel, minute time.Duration) *EpisodeService {
	return &EpisodeService{k: k, unit: minute}
}

// RunSchedule writes today's and yesterday's episode logs every
// memory.episodes.everyMin minutes (a session crossing midnight ends
// yesterday's), until ctx ends: conversations through a channel have no
// end for a hook to mark. The Host's supervisor runs it while the home is
// watched (memhost serve).
func (es *EpisodeService) RunSchedule(ctx context.Context) {
	schedule.Every(ctx, es.unit, nil, func() int { return es.k.Config().Memory.Episodes.EveryMin }, func(ctx context.Context) {
		now := es.k.Now().In(es.k.Location())
		days := []string{now.AddDate(0, 0, -1).Format(time.DateOnly), now.Format(time.DateOnly)}
		if _, err := es.published(ctx, days); err != nil && ctx.Err() == nil {
			es.k.Log().Warn("scheduled episode logs not written", "err", err)
		}
	})
}

// The states of a day's page (memhost.EpisodeDay.State).
const (
	Written   = memhost.EpisodeWritten
	Unchanged = "unchanged"
	Kept      = "kept"
	Empty     = "empty"
)

// maxDays bounds the days of one request.
const maxDays = 366

// Episodes writes the episode logs of the days req names (today when it
// names none).
func (es *EpisodeService) Episodes(ctx context.Context, req memhost.EpisodesRequest) (memhost.EpisodesResponse, error) {
	days, err := es.days(req)
	if err != nil {
		return memhost.EpisodesResponse{}, err
	}
	return es.write(ctx, days)
}

// SessionEnded writes the episode logs of the days the session's messages
// fall on.
func (es *EpisodeService) SessionEnded(ctx context.Context, session string) (memhost.EpisodesResponse, error) {
	tr, err := es.k.Sessions().Read(session)
	if err != nil {
		return memhost.EpisodesResponse{}, err
	}
	loc := es.k.Location()
	var days []string
	for _, t := range tr.Turns {
		if day, ok := dayOf(t, loc); ok && !slices.Contains(days, day) {
			days = append(days, day)
		}
	}
	sort.Strings(days)
	return es.published(ctx, days)
}

// published writes the pages of days outside the Episodes operation (a
// schedule, a session's end) and publishes what it wrote, as the
// operation would.
func (es *EpisodeService) published(ctx context.Context, days []string) (memhost.EpisodesResponse, error) {
	resp, err := es.write(ctx, days)
	es.k.Publish(api.OpEpisodes, memhost.EpisodesRequest{}, resp, err)
	return resp, err
}

// Status is what health judges of a day's episode log.
type Status struct {
	Path     string
	Messages int       // messages of the day in the transcripts
	Newest   time.Time // the last of them
	Exists   bool      // the page is there
	// State is Written when the page is missing or out of date (it would
	// be written), Unchanged when current, Kept when a person edited it.
	State string
}

// DayStatus compares day's page with what its transcripts give.
func (es *EpisodeService) DayStatus(ctx context.Context, day string) (Status, error) {
	loc := es.k.Location()
	byDay, _, err := es.collect(ctx, []string{day})
	if err != nil {
		return Status{}, err
	}
	st := Status{Path: es.page(day)}
	for _, s := range byDay[day] {
		st.Messages += len(s.Turns)
		if t, ok := sessions.TurnTime(s.Turns[len(s.Turns)-1].Timestamp, loc); ok && t.After(st.Newest) {
			st.Newest = t
		}
	}
	old, err := es.k.Notebook().Read(st.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || fault.KindOf(err) == fault.NotFound:
		st.State = Written
	case err != nil:
		return st, err
	default:
		st.Exists = true
		st.State, _ = judge(old, true, Render(day, loc, byDay[day]))
	}
	return st, nil
}

// days are the days req names, in order.
func (es *EpisodeService) days(req memhost.EpisodesRequest) ([]string, error) {
	parse := func(field, s string) (time.Time, error) {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return t, fault.BadInputf(field, "%s %q: want YYYY-MM-DD", field, s)
		}
		return t, nil
	}
	switch {
	case req.Date != "" && (req.Since != "" || req.Until != ""):
		return nil, fault.BadInputf("date", "give a date or a range (since, until), not both")
	case req.Date != "":
		if _, err := parse("date", req.Date); err != nil {
			return nil, err
		}
		return []string{req.Date}, nil
	case req.Since == "" && req.Until == "":
		return []string{es.k.Now().In(es.k.Location()).Format(time.DateOnly)}, nil
	case req.Since == "" || req.Until == "":
		return nil, fault.BadInputf("since", "a range needs both since and until")
	}
	since, err := parse("since", req.Since)
	if err != nil {
		return nil, err
	}
	until, err := parse("until", req.Until)
	if err != nil {
		return nil, err
	}
	if until.Before(since) {
		return nil, fault.BadInputf("until", "until %s is before since %s", req.Until, req.Since)
	}
	var days []string
	for d := since; !d.After(until); d = d.AddDate(0, 0, 1) {
		if len(days) == maxDays {
			return nil, fault.BadInputf("until", "at most %d days at once", maxDays)
		}
		days = append(days, d.Format(time.DateOnly))
	}
	return days, nil
}

// page is the notebook path of day's episode log.
func (es *EpisodeService) page(day string) string {
	return path.Join(es.k.Config().Memory.Episodes.Folder, day+".md")
}

// write writes the pages of days.
func (es *EpisodeService) write(ctx context.Context, days []string) (resp memhost.EpisodesResponse, err error) {
	var written []string
	loc := es.k.Location()
	byDay, seen, err := es.collect(ctx, days)
	if err != nil {
		return resp, err
	}
	resp.Days = []memhost.EpisodeDay{}
	for _, day := range days {
		d := memhost.EpisodeDay{Date: day, Path: es.page(day)}
		err := es.k.Notebook().Update(ctx, d.Path, func(old []byte, exists bool) ([]byte, error) {
			// Under the notebook's lock: a transcript that grew since it
			// was read is read again, so that a run which read less can
			// never write after one which read more.
			if now, err := es.snapshot(); err != nil || !maps.Equal(now, seen) {
				if byDay, seen, err = es.collect(ctx, days); err != nil {
					return nil, err
				}
			}
			ss := byDay[day]
			d.Sessions, d.Messages = len(ss), 0
			for _, s := range ss {
				d.Messages += len(s.Turns)
			}
			if len(ss) == 0 {
				// Nothing to log: a page the transcripts no longer
				// hold (an archive's) is left as it is.
				d.State = Unchanged
				if !exists {
					d.State, d.Path = Empty, ""
				}
				return nil, notebook.ErrUnchanged
			}
			var page []byte
			d.State, page = judge(old, exists, Render(day, loc, ss))
			if d.State != Written {
				return nil, notebook.ErrUnchanged
			}
			return page, nil
		})
		if err != nil && !errors.Is(err, notebook.ErrUnchanged) {
			return resp, err
		}
		if d.State == Written {
			written = append(written, d.Path)
		}
		resp.Days = append(resp.Days, d)
	}
	if len(written) > 0 {
		resp.Warnings = es.k.IndexWritten(ctx, written...)
	}
	return resp, nil
}

// judge decides what becomes of a page that holds old (when it exists)
// and should hold page: Written (with page), Unchanged, or Kept when a
// person wrote or edited it.
func judge(old []byte, exists bool, page []byte) (string, []byte) {
	switch generated, intact := Generated(old); {
	case !exists:
		return Written, page
	case !generated || !intact:
		return Kept, nil
	case bytes.Equal(old, page):
		return Unchanged, nil
	}
	return Written, page
}

// collect reads the transcripts and gives the messages of each of days,
// by session, sessions in the order of their first message that day; and
// the size of each transcript read (snapshot).
func (es *EpisodeService) collect(ctx context.Context, days []string) (map[string][]Session, map[string]int64, error) {
	seen, err := es.snapshot()
	if err != nil {
		return nil, nil, err
	}
	want := map[string]bool{}
	for _, d := range days {
		want[d] = true
	}
	loc := es.k.Location()
	out := map[string][]Session{}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		// Stat before the read: a transcript that grows meanwhile is then
		// read again next time.
		stamp, stamped := es.stamp(id, loc)
		if stamped && es.hasNone(id, stamp, want) {
			continue
		}
		tr, err := es.k.Sessions().Read(id)
		if k := fault.KindOf(err); k == fault.NotFound || k == fault.BadInput {
			continue // removed meanwhile, or not a regular file: sync reports it
		}
		if err != nil {
			return nil, nil, err
		}
		mine := map[string]*Session{}
		all := map[string]bool{}
		for _, t := range tr.Turns {
			day, ok := dayOf(t, loc)
			if ok {
				all[day] = true
			}
			if !ok || !want[day] {
				continue
			}
			if mine[day] == nil {
				mine[day] = &Session{ID: id}
			}
			mine[day].Turns = append(mine[day].Turns, t)
		}
		for day, s := range mine {
			out[day] = append(out[day], *s)
		}
		if stamped {
			stamp.days = all
			es.knownMu.Lock()
			if es.known == nil {
				es.known = map[string]transcriptDays{}
			}
			es.known[id] = stamp
			es.knownMu.Unlock()
		}
	}
	for _, ss := range out {
		sort.SliceStable(ss, func(i, j int) bool {
			a, _ := sessions.TurnTime(ss[i].Turns[0].Timestamp, loc)
			b, _ := sessions.TurnTime(ss[j].Turns[0].Timestamp, loc)
			return a.Before(b)
		})
	}
	return out, seen, nil
}

// snapshot is the size of every transcript, by session id (transcripts
// are only appended to, so a size that did not change is a transcript
// that did not).
func (es *EpisodeService) snapshot() (map[string]int64, error) {
	dir := es.k.Sessions().Dir
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("episodes: %w", err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !sessions.ValidID(id) || !(e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
			out[id] = fi.Size()
		}
	}
	return out, nil
}

// transcriptDays is what collect knows of a transcript: the days of its
// messages in a zone, when the file had this size and modification time.
type transcriptDays struct {
	size, mtime int64
	zone        string
	days        map[string]bool
}

// stamp is the transcript's file as it is now, without its days; false
// when it cannot be stat'ed (collect then reads it, and learns nothing).
func (es *EpisodeService) stamp(id string, loc *time.Location) (transcriptDays, bool) {
	fi, err := os.Stat(filepath.Join(es.k.Sessions().Dir, id+".jsonl"))
	if err != nil {
		return transcriptDays{}, false
	}
	return transcriptDays{size: fi.Size(), mtime: fi.ModTime().UnixNano(), zone: loc.String()}, true
}

// hasNone reports whether transcript id, unchanged (now) since collect
// last read it, has no message on any day of want.
func (es *EpisodeService) hasNone(id string, now transcriptDays, want map[string]bool) bool {
	es.knownMu.Lock()
	k, ok := es.known[id]
	es.knownMu.Unlock()
	if !ok || k.size != now.size || k.mtime != now.mtime || k.zone != now.zone {
		return false
	}
	for d := range want {
		if k.days[d] {
			return false
		}
	}
	return true
}

// dayOf is the day of a message turn in loc; false for a turn the log
// leaves out (tool calls and results, compactions, blank or undated turns).
func dayOf(t memhost.Turn, loc *time.Location) (string, bool) {
	if t.Type != "message" && t.Type != "" || t.Role == "tool" || strings.TrimSpace(t.Content) == "" {
		return "", false
	}
	at, ok := sessions.TurnTime(t.Timestamp, loc)
	if !ok {
		return "", false
	}
	return at.In(loc).Format(time.DateOnly), true
}
