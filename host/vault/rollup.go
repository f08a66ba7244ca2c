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
// hashes: prune archives a log only when a rollup was made from its
// current content and still holds its text (see Holds).
const sourcesMarker = "<!-- memhost-rollup sources:"

// generatedMarker starts the hidden comment holding the SHA-256 of the
// rollup's body (below its frontmatter) as Render wrote it, without this
// line: a body that no longer matches was edited by a person, and the
// page is theirs (see Generated). The frontmatter is left out: a rollup
// written again keeps it as it is, so a person's keys there are no edit.
const generatedMarker = "<!-- memhost-rollup generated: sha256:"

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
// title, a line linking the logs it holds, their hashes and the body's
// own in hidden comments, the summary when there is one, then each day
// (oldest first) as an H2 holding its sections as H3s, text and all. The
// same logs give the same bytes: writing a rollup again changes nothing.
func Render(p Period, days []Day, summary string) string {
	days = append([]Day(nil), days...)
	sort.Slice(days, func(i, j int) bool { return days[i].Date.Before(days[j].Date) })
	var head, b strings.Builder
	fmt.Fprintf(&head, "# %s\n\n", p.title())
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
	fmt.Fprintf(&head, "Rolled up from %d daily %s: %s.\n", len(days), noun, strings.Join(links, ", "))
	fmt.Fprintf(&head, "%s %s -->\n", sourcesMarker, strings.Join(sources, " "))
	if s := strings.TrimSpace(summary); s != "" {
		fmt.Fprintf(&b, "\n## Summary\n\n%s\n", s)
	}
	for _, d := range days {
		b.WriteString("\n" + dayBlock(d))
	}
	return head.String() + generatedMarker + digest(head.String()+b.String()) + " -->\n" + b.String()
}

// dayBlock is a day's section of a rollup, as Render writes it: its H2,
// its intro, its sections as H3s.
func dayBlock(d Day) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n", d.Date.Format("Monday 2006-01-02"))
	if len(d.Intro) > 0 {
		b.WriteString("\n" + strings.Join(d.Intro, "\n") + "\n")
	}
	for _, s := range d.Sections {
		b.WriteString("\n" + markdown.Heading(3, s.Heading) + "\n")
		if len(s.Lines) > 0 {
			b.WriteString("\n" + strings.Join(s.Lines, "\n") + "\n")
		}
	}
	return b.String()
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Holds reports whether a rollup page's text holds day's text as Render
// writes it: the day's section, from its heading to its last line,
// verbatim (a person may have added text around it). A page that names
// the log's hash but lost its text (a person wrote their own summary
// instead) does not hold it. Line ends are not text: \r\n reads as \n.
func Holds(page string, d Day) bool {
	_, body := markdown.SplitFrontmatter(strings.ReplaceAll(page, "\r\n", "\n"))
	block := dayBlock(d)
	return strings.HasPrefix(body, block) || strings.Contains(body, "\n"+block)
}

// Generated reports whether a rollup page's body (below its frontmatter)
// is one Render wrote (it holds the hash line), and whether it is as
// written (no one edited it since). Line ends are not an edit: \r\n
// reads as \n (a checkout may change them).
func Generated(body string) (generated, intact bool) {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	at := -1
	if strings.HasPrefix(body, generatedMarker) {
		at = 0
	} else if i := strings.Index(body, "\n"+generatedMarker); i >= 0 {
		at = i + 1
	}
	if at < 0 {
		return false, false
	}
	end := len(body)
	if i := strings.IndexByte(body[at:], '\n'); i >= 0 {
		end = at + i + 1
	}
	sum := strings.TrimSuffix(strings.TrimPrefix(body[at:end], generatedMarker), "\n")
	return true, sum == digest(body[:at]+body[end:])+" -->"
}

// keptWhy says why the rollup page whose body (below its frontmatter) is
// old is a person's, to be left as it is rather than written as body (""
// when it may be written): a person edited it since memhost wrote it, or
// memhost never wrote it. A page of an earlier memhost (its sources named,
// no hash) may be written only when it is what body would be but for the
// hash, since nothing else tells whether a person edited it. With body ""
// such a page is not judged.
func keptWhy(old, body string) string {
	generated, intact := Generated(old)
	switch {
	case intact:
		return ""
	case generated:
		return "edited since memhost wrote it"
	case !strings.Contains(old, sourcesMarker):
		return "not a rollup memhost wrote"
	case body == "":
		return ""
	}
	if at := strings.Index(body, generatedMarker); at >= 0 {
		if end := strings.IndexByte(body[at:], '\n'); end >= 0 && old == body[:at]+body[at+end+1:] {
			return ""
		}
	}
	return "written by an earlier memhost without the hash that shows edits, and not what its logs give now, so it may hold edits"
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
