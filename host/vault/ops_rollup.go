package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/sdk"
)

// rollupSummarizer asks the generator for a rollup's summary section.
const rollupSummarizer = `You write the summary of a person's daily logs over a week or a month, for the top of a page that keeps the logs themselves below it. ` +
	`Keep what they will look for later: decisions and their reasons, what was done and learnt, people, names, numbers, dates and open tasks. ` +
	`Write at most 10 short markdown bullet points, with no heading and no preamble.`

// Rollup summary budgets: the logs' text sent (about 24,000 tokens, the
// compaction summary's input when the model's context is unknown) and the
// summary's tokens.
const (
	rollupSummaryInput  = 96000 // characters
	rollupSummaryOutput = 1024
)

// summarize has the generator write the summary of p's days. A heading in
// its answer is written as text: the summary is one section.
func (s *VaultService) summarize(ctx context.Context, p Period, days []Day) (summary, model string, err error) {
	g, release, err := s.k.Generator(ctx)
	defer release()
	if err != nil {
		return "", "", err
	}
	logs := Render(p, days, "")
	if len(logs) > rollupSummaryInput {
		logs = logs[:rollupSummaryInput]
	}
	resp, err := g.Complete(ctx, sdk.CompleteRequest{MaxTokens: rollupSummaryOutput, Messages: []sdk.Message{
		{Role: "system", Content: rollupSummarizer}, {Role: "user", Content: logs}}})
	if err != nil {
		if fault.KindOf(err) == fault.Internal {
			err = fault.Errorf(fault.Unavailable, "generator", "%w", err)
		}
		return "", "", err
	}
	lines := strings.Split(strings.TrimSpace(resp.Text), "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "#") {
			lines[i] = "\\" + strings.TrimLeft(l, " ")
		}
	}
	return strings.Join(lines, "\n"), resp.Model, nil
}

// Rollup writes the rollup page of a week (daily/rollups/2026-W47.md) or a
// month (daily/rollups/2026-11.md) from the daily logs of its days, in
// daily/ and daily/archive/: each day an H2, each of its sections an H3
// with its text (see Render), after a summary the generator writes when
// req.Summarize asks for one. Running it again over the same logs writes the same bytes; a page
// that exists keeps its frontmatter as it is. A page that is a person's
// (its body edited since memhost wrote it, or not a rollup memhost wrote)
// is left as it is, every time: the answer says it is kept, and why.
func (s *VaultService) Rollup(ctx context.Context, req memhost.RollupRequest) (out memhost.RollupResponse, err error) {
	today := s.k.Now().In(s.k.Location())
	p, err := ParsePeriod(req.Period, req.Date, today)
	if err != nil {
		field := "date"
		if req.Period != Week && req.Period != Month {
			field = "period"
		}
		return memhost.RollupResponse{}, fault.BadInputf(field, "%v", err)
	}
	logs, err := s.dailyLogs()
	if err != nil {
		return memhost.RollupResponse{}, err
	}
	var days []Day
	resp := memhost.RollupResponse{Path: p.Path(), Period: p.Name, From: p.From.Format(time.DateOnly), To: p.To.Format(time.DateOnly), Logs: []string{}}
	for _, l := range logs {
		if !p.Contains(l.date) {
			continue
		}
		data, err := s.k.Notebook().Read(l.path)
		if err != nil {
			return memhost.RollupResponse{}, err
		}
		d := ParseDay(l.path, l.date, data)
		days = append(days, d)
		resp.Logs = append(resp.Logs, l.path)
		resp.Entries += len(d.Sections)
	}
	if len(days) == 0 {
		return memhost.RollupResponse{}, fault.Errorf(fault.NotFound, "date", "no daily logs from %s to %s (in daily/ or %s/)", resp.From, resp.To, ArchiveDir)
	}
	// A person's page is known before any summary is asked for; it is
	// judged again under the notebook's lock below.
	if old, err := s.k.Notebook().Read(p.Path()); err == nil {
		_, body := markdown.SplitFrontmatter(string(old))
		if why := keptWhy(body, ""); why != "" {
			resp.Kept, resp.Why = true, why
			return resp, nil
		}
	}
	summary := ""
	if req.Summarize {
		if summary, resp.Model, err = s.summarize(ctx, p, days); err != nil {
			return memhost.RollupResponse{}, err
		}
		resp.Summary = summary != ""
	}
	body := Render(p, days, summary)
	err = s.k.Notebook().Update(ctx, p.Path(), func(old []byte, exists bool) ([]byte, error) {
		resp.Created = !exists
		front, oldBody := markdown.SplitFrontmatter(string(old))
		if why := keptWhy(oldBody, body); exists && why != "" {
			resp.Kept, resp.Why = true, why
			return nil, notebook.ErrUnchanged
		}
		if front == "" {
			front = NewFrontmatter(p)
		}
		page := front + body
		if exists && page == string(old) {
			return nil, notebook.ErrUnchanged
		}
		resp.Changed = true
		return []byte(page), nil
	})
	if err != nil && !errors.Is(err, notebook.ErrUnchanged) {
		return memhost.RollupResponse{}, err
	}
	if resp.Changed {
		resp.Warnings = s.k.IndexWritten(ctx, p.Path())
	}
	return resp, nil
}

// dailyLog is a daily log found on disk.
type dailyLog struct {
	path     string // daily/2026-11-20.md or daily/archive/2026-11-20.md
	date     time.Time
	archived bool
}

// dailyLogs lists the daily logs (YYYY-MM-DD.md) in daily/ and
// daily/archive/, by date; a day in both is taken from daily/.
func (s *VaultService) dailyLogs() ([]dailyLog, error) {
	seen := map[string]bool{}
	var out []dailyLog
	for _, dir := range []string{"daily", ArchiveDir} {
		entries, err := os.ReadDir(s.k.Notebook().Abs(dir))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("daily logs: %w", err)
		}
		for _, e := range entries {
			d, ok := LogDate(e.Name())
			if !ok || !e.Type().IsRegular() || seen[e.Name()] {
				continue
			}
			seen[e.Name()] = true
			out = append(out, dailyLog{path: dir + "/" + e.Name(), date: d, archived: dir != "daily"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].date.Before(out[j].date) })
	return out, nil
}

// Prune moves the daily logs of days more than OlderThanDays before today
// from daily/ into daily/archive/, or deletes them (archived ones too)
// with Delete. A log is pruned only when its week's or its month's rollup
// was made from it as it is now (a rollup names the logs it holds with a
// hash of each) and still holds its text (Holds). A log whose rollup names
// it but no longer holds its text, or whose rollup is a person's page
// that does not hold it as it is now (Rollup leaves such pages as they
// are), is kept where it is and reported in Kept, with why: pruning it
// would lose its text. Any other log without a rollup holding it fails the
// whole prune with memhost.ErrRollupsMissing, naming the rollups to write,
// and nothing is pruned. Archived logs are still pages: they stay indexed
// and searchable, and a rollup written again still reads them.
func (s *VaultService) Prune(ctx context.Context, req memhost.PruneRequest) (out memhost.PruneResponse, err error) {
	if req.OlderThanDays < 1 {
		return memhost.PruneResponse{}, fault.BadInputf("olderThanDays", "the age must be at least 1 day, got %d", req.OlderThanDays)
	}
	today := s.k.Now().In(s.k.Location())
	cutoff := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -req.OlderThanDays)
	resp := memhost.PruneResponse{Before: cutoff.Format(time.DateOnly), Archived: []memhost.PrunedLog{}, Deleted: []string{}, DryRun: req.DryRun}
	logs, err := s.dailyLogs()
	if err != nil {
		return resp, err
	}
	var old []dailyLog
	for _, l := range logs {
		if l.date.Before(cutoff) && (req.Delete || !l.archived) {
			old = append(old, l)
		}
	}
	// What each rollup holds, read once.
	type rollup struct {
		path    string
		page    string            // "" when missing
		sources map[string]string // nil when missing
		kept    string            // why the page is a person's (keptWhy)
	}
	rollups := map[string]*rollup{}
	read := func(rel string) *rollup {
		if r, ok := rollups[rel]; ok {
			return r
		}
		r := &rollup{path: rel}
		if data, err := s.k.Notebook().Read(rel); err == nil {
			_, body := markdown.SplitFrontmatter(string(data))
			r.page, r.sources, r.kept = string(data), Sources(string(data)), keptWhy(body, "")
		}
		rollups[rel] = r
		return r
	}
	var prunable []dailyLog
	for _, l := range old {
		data, err := s.k.Notebook().Read(l.path)
		if err != nil {
			return resp, err
		}
		name, d := path.Base(l.path), ParseDay(l.path, l.date, data)
		week, month := read(WeekOf(l.date).Path()), read(MonthOf(l.date).Path())
		names := func(r *rollup) bool { return r.sources[name] == d.Hash }
		if (names(week) && Holds(week.page, d)) || (names(month) && Holds(month.page, d)) {
			prunable = append(prunable, l)
			continue
		}
		switch {
		case names(week):
			resp.Kept = append(resp.Kept, memhost.KeptLog{Log: l.path, Rollup: week.path, Why: "the rollup no longer holds its text (edited since memhost wrote it)"})
		case names(month):
			resp.Kept = append(resp.Kept, memhost.KeptLog{Log: l.path, Rollup: month.path, Why: "the rollup no longer holds its text (edited since memhost wrote it)"})
		case week.kept != "":
			resp.Kept = append(resp.Kept, memhost.KeptLog{Log: l.path, Rollup: week.path, Why: "the rollup does not hold it as it is now and is not written again (" + week.kept + ")"})
		default:
			why := "missing"
			if week.sources != nil {
				why = "out of date"
			}
			resp.Missing = append(resp.Missing, memhost.MissingLog{Log: l.path, Rollup: week.path, Why: why})
		}
	}
	if len(resp.Missing) > 0 {
		rm := &memhost.RollupsMissingError{Missing: resp.Missing}
		return resp, &fault.Error{Kind: fault.Conflict, Field: "olderThanDays", Message: rm.Error(), Err: rm}
	}
	var paths []string
	for _, l := range prunable {
		if req.Delete {
			if !req.DryRun {
				if err := s.k.Notebook().Remove(ctx, l.path); err != nil {
					// What was pruned before stays pruned and is reported.
					resp.Warnings = append(resp.Warnings, fmt.Sprintf("%s not deleted: %v", l.path, err))
					continue
				}
			}
			resp.Deleted = append(resp.Deleted, l.path)
			paths = append(paths, l.path)
			continue
		}
		to := ArchiveDir + "/" + path.Base(l.path)
		if !req.DryRun {
			if err := s.k.Notebook().Rename(ctx, l.path, to); err != nil {
				resp.Warnings = append(resp.Warnings, fmt.Sprintf("%s not archived: %v", l.path, err))
				continue
			}
		}
		resp.Archived = append(resp.Archived, memhost.PrunedLog{From: l.path, To: to})
		paths = append(paths, l.path, to)
	}
	if !req.DryRun && len(paths) > 0 {
		resp.Warnings = append(resp.Warnings, s.k.IndexWritten(ctx, paths...)...)
	}
	return resp, nil
}
