// Package alert routes the changes of the scheduled health check to the
// home owner's sinks by severity: a failing check at once (critical),
// warnings in one message an hour, and a digest of the day once a day
// (info). An alert is a change: a check that keeps its status and message
// is never alerted again, one that passes again is alerted once as
// resolved, at the severity of what it resolves.
//
// What was alerted, what waits for its batch and what a sink has not yet
// taken is kept in health/alerts.json in the home, replaced atomically
// under health/alerts.lock, so a restart neither repeats nor loses an
// alert. A sink that fails keeps its messages and is tried again at the
// next run; it never stops the check or the other sink.
package alert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/internal/fsx"
)

// StatePath is where the router keeps its state, relative to the home.
const StatePath = "health/alerts.json"

// Severities of an alert and kinds of a message.
const (
	Critical = "critical" // sent at once
	Warning  = "warning"  // batched: one message an hour
	Info     = "info"     // the daily digest
)

// maxOutbox bounds the messages kept for a sink that keeps failing; the
// oldest are dropped.
const maxOutbox = 100

// Alert is one check's change.
type Alert struct {
	Check    string               `json:"check"`
	Severity string               `json:"severity"`
	Status   memhost.HealthStatus `json:"status"` // pass when Resolved
	Message  string               `json:"message"`
	Resolved bool                 `json:"resolved,omitempty"`
	Time     string               `json:"time"` // RFC 3339, UTC: the run that saw it
}

// Message is what a sink receives, as JSON: the alerts of one kind. A
// digest's Alerts are the day's, with Runs checks run that day.
type Message struct {
	Kind    string                `json:"kind"` // critical, warning or info
	Time    string                `json:"time"`
	Overall memhost.HealthOverall `json:"overall"` // at the run that sent it
	Day     string                `json:"day,omitempty"`
	Runs    int                   `json:"runs,omitempty"`
	Alerts  []Alert               `json:"alerts"`
}

// A Sink delivers one message's JSON.
type Sink interface {
	Name() string
	Send(ctx context.Context, msg []byte) error
}

// state is health/alerts.json.
type state struct {
	// Last is the status and message last alerted per check (non-pass
	// checks only: a check that passes is forgotten once resolved).
	Last map[string]Alert `json:"last"`
	// Warnings wait for the hour that began with the first of them.
	Warnings      []Alert `json:"warnings,omitempty"`
	WarningsSince string  `json:"warningsSince,omitempty"`
	// Day collects the digest of one day (the home's time zone).
	Day       string  `json:"day,omitempty"`
	DayRuns   int     `json:"dayRuns,omitempty"`
	DayAlerts []Alert `json:"dayAlerts,omitempty"`
	// Outbox holds per sink the messages it has not taken yet.
	Outbox map[string][]json.RawMessage `json:"outbox,omitempty"`
}

// Router routes the reports of one home. It is not safe for concurrent
// use; the state's lock keeps two processes apart.
type Router struct {
	Home     string
	Sinks    []Sink
	Location *time.Location // the home's: where a day ends; nil is UTC
	Log      *slog.Logger   // nil is slog.Default()
}

// Route takes the report of a run made at now: it records the changes,
// sends what is due and delivers what each sink has waiting. Sink
// failures are logged, not returned; an error is the state's.
func (r *Router) Route(ctx context.Context, rep memhost.HealthReport, now time.Time) error {
	path := filepath.Join(r.Home, filepath.FromSlash(StatePath))
	unlock, err := fsx.Lock(ctx, path[:len(path)-len(".json")]+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	st, err := load(path)
	if err != nil {
		// Kept as it is, the file would stop every later alert.
		r.log().Warn("health alerts: the state was unreadable and starts afresh", "err", err)
	}
	loc := r.Location
	if loc == nil {
		loc = time.UTC
	}
	var due []Message
	stamp := now.UTC().Format(time.RFC3339)
	day := now.In(loc).Format(time.DateOnly)
	if st.Day != "" && st.Day != day && st.DayRuns > 0 {
		due = append(due, Message{Kind: Info, Time: stamp, Overall: rep.Overall, Day: st.Day, Runs: st.DayRuns, Alerts: nonNil(st.DayAlerts)})
	}
	if st.Day != day {
		st.Day, st.DayRuns, st.DayAlerts = day, 0, nil
	}
	st.DayRuns++

	var critical []Alert
	seen := map[string]bool{}
	for _, c := range rep.Checks {
		seen[c.Name] = true
		last, had := st.Last[c.Name]
		var a Alert
		switch {
		case c.Status == memhost.HealthStatus("pass") && had:
			a = Alert{Check: c.Name, Severity: last.Severity, Status: c.Status, Message: c.Message, Resolved: true, Time: stamp}
			delete(st.Last, c.Name)
		case c.Status == memhost.HealthStatus("pass"):
			continue
		case had && last.Status == c.Status && last.Message == c.Message:
			continue // unchanged: never sent again
		default:
			sev := Warning
			if c.Status == memhost.HealthStatus("fail") {
				sev = Critical
			}
			a = Alert{Check: c.Name, Severity: sev, Status: c.Status, Message: c.Message, Time: stamp}
			st.Last[c.Name] = a
		}
		st.DayAlerts = append(st.DayAlerts, a)
		if a.Severity == Critical {
			critical = append(critical, a)
		} else {
			if len(st.Warnings) == 0 {
				st.WarningsSince = stamp
			}
			st.Warnings = append(st.Warnings, a)
		}
	}
	for name := range st.Last { // a check no longer run is not resolved, only forgotten
		if !seen[name] {
			delete(st.Last, name)
		}
	}
	if len(critical) > 0 {
		due = append(due, Message{Kind: Critical, Time: stamp, Overall: rep.Overall, Alerts: critical})
	}
	if since, err := time.Parse(time.RFC3339, st.WarningsSince); err == nil && len(st.Warnings) > 0 && now.Sub(since) >= time.Hour {
		due = append(due, Message{Kind: Warning, Time: stamp, Overall: rep.Overall, Alerts: st.Warnings})
		st.Warnings, st.WarningsSince = nil, ""
	}

	outbox := map[string][]json.RawMessage{}
	for _, s := range r.Sinks {
		outbox[s.Name()] = st.Outbox[s.Name()] // a sink no longer configured loses its own
	}
	for _, m := range due {
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		for name, q := range outbox {
			outbox[name] = append(q, b)
		}
	}
	for _, s := range r.Sinks {
		q := outbox[s.Name()]
		if len(q) > maxOutbox {
			r.log().Warn("health alerts: dropped messages a sink did not take", "sink", s.Name(), "dropped", len(q)-maxOutbox)
			q = q[len(q)-maxOutbox:]
		}
		for len(q) > 0 {
			if err := s.Send(ctx, q[0]); err != nil {
				r.log().Warn("health alerts: a sink failed; tried again at the next check", "sink", s.Name(), "waiting", len(q), "err", err)
				break
			}
			q = q[1:]
		}
		outbox[s.Name()] = q
	}
	st.Outbox = outbox
	return save(path, st)
}

func (r *Router) log() *slog.Logger {
	if r.Log == nil {
		return slog.Default()
	}
	return r.Log
}

func nonNil(a []Alert) []Alert {
	if a == nil {
		return []Alert{}
	}
	return slices.Clone(a)
}

func load(path string) (state, error) {
	st := state{Last: map[string]Alert{}}
	b, err := fsx.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return state{Last: map[string]Alert{}}, fmt.Errorf("%s: %w", path, err)
	}
	if st.Last == nil {
		st.Last = map[string]Alert{}
	}
	return st, nil
}

func save(path string, st state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return fsx.WriteFileAtomic(path, append(b, '\n'), 0o600)
}
