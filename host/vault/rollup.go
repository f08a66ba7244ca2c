package vault

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memhost/memhost/host/markdown"
)

// Folders of the notebook over time: rollups of the daily logs, and the
// daily logs pruned after their rollups were written.
const (
	RollupDir  = "daily/rollups"
	ArchiveDir = "daily/archive"
)

// Period kinds.
const (
	Week  = "week"
	Month = "month"
)

// Period is the span a rollup covers: an ISO week (Monday to Sunday) or a
// calendar month.
type Period struct {
	Kind string    `json:"kind"` // week | month
	Name string    `json:"name"` // 2026-W47 | 2026-11
	From time.Time `json:"-"`    // first day
	To   time.Time `json:"-"`    // last day
}

// WeekOf is the ISO week holding day.
func WeekOf(day time.Time) Period {
	d := dateOf(day)
	monday := d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	y, w := d.ISOWeek()
	return Period{Kind: Week, Name: fmt.Sprintf("%04d-W%02d", y, w), From: monday, To: monday.AddDate(0, 0, 6)}
}

// MonthOf is the month holding day.
func MonthOf(day time.Time) Period {
	d := dateOf(day)
	first := time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
	return Period{Kind: Month, Name: first.Format("2006-01"), From: first, To: first.AddDate(0, 1, -1)}
}

var weekName = regexp.MustCompile(`^(\d{4})-[Ww](\d{1,2})$`)

// ParsePeriod reads the period of kind that s names: a day (YYYY-MM-DD,
// the period holding it), a week (YYYY-Www) or a month (YYYY-MM). "" is
// the period holding today.
func ParsePeriod(kind, s string, today time.Time) (Period, error) {
	of := WeekOf
	if kind == Month {
		of = MonthOf
	} else if kind != Week {
		return Period{}, fmt.Errorf("unknown period %q (choose week or month)", kind)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return of(today), nil
	}
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		return of(d), nil
	}
	if kind == Month {
		if d, err := time.Parse("2006-01", s); err == nil {
			return of(d), nil
		}
		return Period{}, fmt.Errorf("%q is neither a day (2026-11-20) nor a month (2026-11)", s)
	}
	if m := weekName.FindStringSubmatch(s); m != nil {
		y, _ := strconv.Atoi(m[1])
		w, _ := strconv.Atoi(m[2])
		// January 4th is always in week 1.
		p := WeekOf(time.Date(y, 1, 4, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 7*(w-1)))
		if w < 1 || p.Name != fmt.Sprintf("%04d-W%02d", y, w) {
			return Period{}, fmt.Errorf("%q: %d has no week %d", s, y, w)
		}
		return p, nil
	}
	return Period{}, fmt.Errorf("%q is neither a day (2026-11-20) nor a week (2026-W47)", s)
}

// Path is the rollup page of the period: daily/rollups/2026-W47.md or
// daily/rollups/2026-11.md.
func (p Period) Path() string { return RollupDir + "/" + p.Name + ".md" }

// Contains reports whether day falls in the period.
func (p Period) Contains(day time.Time) bool {
	d := dateOf(day)
	return !d.Before(p.From) && !d.After(p.To)
}

func (p Period) title() string {
	if p.Kind == Week {
		return fmt.Sprintf("Week %s: %s to %s", p.Name, p.From.Format(time.DateOnly), p.To.Format(time.DateOnly))
	}
	return "Month " + p.Name + ": " + p.From.Format("January 2006")
}

func dateOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// LogDate returns the day a daily log's file name (YYYY-MM-DD.md) names.
func LogDate(name string) (time.Time, bool) {
	base := path.Base(name)
	if !strings.HasSuffix(base, ".md") {
		return time.Time{}, false
	}
	d, err := time.Parse(time.DateOnly, strings.TrimSuffix(base, ".md"))
	return d, err == nil
}

// Day is one daily log, read for a rollup.
type Day struct {
	Date     time.Time `json:"-"`
	Path     string    `json:"path"`
	Hash     string    `json:"hash"`  // of the log's bytes: see LogHash
	Intro    []string  `json:"intro"` // text before the first section, without the page's title
	Sections []Section `json:"sections"`
}

// Section is one H1/H2 section of a daily log: an entry ("## 09:15 — …")
// or a section a person wrote ("## Decisions").
type Section struct {
	Heading string   `json:"heading"` // its text, without #s
	Lines   []string `json:"lines"`   // its body, blank lines at both ends trimmed
}

// LogHash identifies a daily log's content in its rollup: the first 16 hex
// digits of its SHA-256.
func LogHash(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:8])
}

// ParseDay reads a daily log: its frontmatter is left out, its first H1
// (the page's title) dropped, every other H1 or H2 starts a section, and
// headings inside a section are moved one level down (### becomes ####)
// to sit under the rollup's ### section headings.
func ParseDay(rel string, date time.Time, data []byte) Day {
	d := Day{Date: dateOf(date), Path: rel, Hash: LogHash(data)}
	lines := markdown.Lines(string(data))
	fm := markdown.FrontmatterLines(lines)
	lines = lines[fm:]
	levels := markdown.HeadingLevels(lines)
	titled := false
	var cur *Section
	for i, l := range lines {
		switch lv := levels[i]; {
		case lv == 1 && !titled && cur == nil && strings.TrimSpace(strings.Join(d.Intro, "")) == "":
			titled = true
			d.Intro = nil
			continue
		case lv == 1 || lv == 2:
			d.Sections = append(d.Sections, Section{Heading: markdown.HeadingText(l)})
			cur = &d.Sections[len(d.Sections)-1]
			continue
		case lv > 2:
			l = markdown.Heading(min(lv+1, 6), markdown.HeadingText(l))
		}
		if cur == nil {
			d.Intro = append(d.Intro, l)
		} else {
			cur.Lines = append(cur.Lines, l)
		}
	}
	d.Intro = trimBlank(d.Intro)
	for i := range d.Sections {
		d.Sections[i].Lines = trimBlank(d.Sections[i].Lines)
	}
	return d
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// sourcesMarker starts the HTML comment (hidden when the page is read in
// Obsidian) in which a rollup names the logs it was made from and their
// hashes: prune archives a log only when a rollup holds its current
// content.
const sourcesMarker = "<!-- memhost-rollup sources:"

// NewFrontmatter is the frontmatter of a new rollup page. A rollup written
// again keeps the page's frontmatter as it is (a person may have added
// keys).
func NewFrontmatter(p Period) string {
	return "---\n" +
		"title: " + strings.SplitN(p.title(), ":", 2)[0] + "\n" +
		"tags: [rollup]\n" +
		"period: " + p.Name + "\n" +
		"from: " + p.From.Format(time.DateOnly) + "\n" +
		"to: " + p.To.Format(time.DateOnly) + "\n" +
		"---\n"
}

// Render writes the body of the rollup of p (below its frontmatter): a
// title, a line linking the logs it holds, their hashes in a hidden
// comment, the summary when there is one, then each day (oldest first) as
// an H2 holding its sections as H3s, text and all. The same logs give the
// same bytes: writing a rollup again changes nothing.
func Render(p Period, days []Day, summary string) string {
	days = append([]Day(nil), days...)
	sort.Slice(days, func(i, j int) bool { return days[i].Date.Before(days[j].Date) })
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", p.title())
	links := make([]string, len(days))
	sources := make([]string, len(days))
	for i, d := range days {
		name := strings.TrimSuffix(path.Base(d.Path), ".md")
		links[i] = "[[" + name + "]]"
		sources[i] = path.Base(d.Path) + "=" + d.Hash
	}
	noun := "logs"
	if len(days) == 1 {
		noun = "log"
	}
	fmt.Fprintf(&b, "Rolled up from %d daily %s: %s.\n", len(days), noun, strings.Join(links, ", "))
	fmt.Fprintf(&b, "%s %s -->\n", sourcesMarker, strings.Join(sources, " "))
	if s := strings.TrimSpace(summary); s != "" {
		fmt.Fprintf(&b, "\n## Summary\n\n%s\n", s)
	}
	for _, d := range days {
		fmt.Fprintf(&b, "\n## %s\n", d.Date.Format("Monday 2006-01-02"))
		if len(d.Intro) > 0 {
			b.WriteString("\n" + strings.Join(d.Intro, "\n") + "\n")
		}
		for _, s := range d.Sections {
			b.WriteString("\n" + markdown.Heading(3, s.Heading) + "\n")
			if len(s.Lines) > 0 {
				b.WriteString("\n" + strings.Join(s.Lines, "\n") + "\n")
			}
		}
	}
	return b.String()
}

// Sources returns the logs a rollup page says it holds: file name
// (2026-11-20.md) → hash.
func Sources(page string) map[string]string {
	out := map[string]string{}
	for _, l := range markdown.Lines(page) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), sourcesMarker)
		if !ok {
			continue
		}
		for _, f := range strings.Fields(strings.TrimSuffix(strings.TrimSpace(rest), "-->")) {
			if name, hash, ok := strings.Cut(f, "="); ok {
				out[name] = hash
			}
		}
	}
	return out
}
