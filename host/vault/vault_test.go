package vault

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost/host/markdown"
)

func TestResolve(t *testing.T) {
	r := NewResolver([]Page{
		{Path: "knowledge/people/Sarah Chen.md", Aliases: []string{"Sarah", "S. Chen"}},
		{Path: "projects/alpha/Project Alpha.md", Aliases: []string{"Alpha"}},
		{Path: "notes.md"},
		{Path: "a/notes.md"},
		{Path: "b/c/notes.md"},
		{Path: "b/Project Alpha.md"}, // the same name as a page elsewhere
		{Path: "daily/archive/2026-08-03.md"},
		{Path: "v1.2 notes.md"},
	}, []string{"attachments/whiteboard.png", "projects/alpha/board.canvas", "a/photo.png", "b/photo.png"})
	tests := []struct {
		from, target, want string
	}{
		{"x.md", "Sarah Chen", "knowledge/people/Sarah Chen.md"},
		{"x.md", "sarah chen", "knowledge/people/Sarah Chen.md"},        // case-insensitive
		{"x.md", "Sarah Chen.md", "knowledge/people/Sarah Chen.md"},     // with the extension
		{"x.md", "people/Sarah Chen", "knowledge/people/Sarah Chen.md"}, // the end of a path
		{"x.md", "knowledge/people/Sarah Chen", "knowledge/people/Sarah Chen.md"},
		{"x.md", "/knowledge/people/Sarah Chen", "knowledge/people/Sarah Chen.md"},
		{"x.md", "S. Chen", "knowledge/people/Sarah Chen.md"}, // an alias
		{"x.md", "notes", "notes.md"},                         // shortest path
		{"a/x.md", "notes", "a/notes.md"},                     // the linking page's folder first
		{"b/c/x.md", "notes", "b/c/notes.md"},
		{"b/c/x.md", "c/notes", "b/c/notes.md"},
		{"b/c/x.md", "../../notes", "notes.md"}, // relative
		{"b/c/x.md", "./notes", "b/c/notes.md"},
		{"x.md", "Project Alpha", "b/Project Alpha.md"}, // shortest of two
		{"projects/alpha/y.md", "Project Alpha", "projects/alpha/Project Alpha.md"},
		{"x.md", "alpha/Project Alpha", "projects/alpha/Project Alpha.md"},
		{"x.md", "2026-08-03", "daily/archive/2026-08-03.md"},
		{"x.md", "v1.2 notes", "v1.2 notes.md"}, // a dot is no extension
		{"x.md", "whiteboard.png", "attachments/whiteboard.png"},
		{"x.md", "board.canvas", "projects/alpha/board.canvas"},
		{"a/x.md", "photo.png", "a/photo.png"},
		{"x.md", "Finance Team", ""},
		{"x.md", "missing.png", ""},
		{"x.md", "people", ""}, // a folder is no page
		{"x.md", "../../outside", ""},
	}
	for _, tt := range tests {
		got, ok := r.Resolve(tt.from, tt.target)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", tt.from, tt.target, got, ok, tt.want)
		}
	}
	for _, tt := range []struct{ from, page, want string }{
		{"x.md", "knowledge/people/Sarah Chen.md", "Sarah Chen"},
		{"x.md", "a/notes.md", "a/notes"}, // "notes" finds notes.md
		{"a/x.md", "a/notes.md", "notes"},
	} {
		if got := r.LinkText(tt.from, tt.page); got != tt.want {
			t.Errorf("LinkText(%q, %q) = %q, want %q", tt.from, tt.page, got, tt.want)
		}
	}
}

func TestRewriteLinks(t *testing.T) {
	page := "---\r\nrelated: \"[[Old]]\"\r\n---\r\n# Page\r\nSee [[Old]], [[ Old#Part|shown ]], [[Other]] and ![[old]].\r\n| t | [[Old\\|alias]] |\r\n`[[Old]]`\r\n"
	got, n := RewriteLinks(page, func(l markdown.Link) (string, bool) {
		return "people/New", strings.EqualFold(l.Target, "old")
	})
	want := "---\r\nrelated: \"[[Old]]\"\r\n---\r\n# Page\r\nSee [[people/New]], [[ people/New#Part|shown ]], [[Other]] and ![[people/New]].\r\n| t | [[people/New\\|alias]] |\r\n`[[Old]]`\r\n"
	if got != want || n != 4 {
		t.Fatalf("RewriteLinks = %d,\n%q\nwant 4,\n%q", n, got, want)
	}
	if same, n := RewriteLinks(page, func(markdown.Link) (string, bool) { return "", false }); same != page || n != 0 {
		t.Fatalf("a rewrite of nothing changed the page: %q", same)
	}
}

func TestParsePeriod(t *testing.T) {
	today := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC) // a Monday
	for _, tt := range []struct {
		kind, s, name, from, to string
	}{
		{Week, "", "2026-W48", "2026-11-23", "2026-11-29"},
		{Week, "2026-11-22", "2026-W47", "2026-11-16", "2026-11-22"},
		{Week, "2026-W47", "2026-W47", "2026-11-16", "2026-11-22"},
		{Week, "2026-w1", "2026-W01", "2025-12-29", "2026-01-04"},
		{Week, "2026-W09", "2026-W09", "2026-02-23", "2026-03-01"},
		{Week, "2026-W53", "2026-W53", "2026-12-28", "2027-01-03"},
		{Week, "2027-01-01", "2026-W53", "2026-12-28", "2027-01-03"},
		{Month, "", "2026-11", "2026-11-01", "2026-11-30"},
		{Month, "2024-02", "2024-02", "2024-02-01", "2024-02-29"},
		{Month, "2026-12-31", "2026-12", "2026-12-01", "2026-12-31"},
	} {
		p, err := ParsePeriod(tt.kind, tt.s, today)
		if err != nil {
			t.Fatalf("ParsePeriod(%s, %q): %v", tt.kind, tt.s, err)
		}
		if p.Name != tt.name || p.From.Format(time.DateOnly) != tt.from || p.To.Format(time.DateOnly) != tt.to {
			t.Fatalf("ParsePeriod(%s, %q) = %s %s..%s, want %s %s..%s", tt.kind, tt.s, p.Name, p.From.Format(time.DateOnly), p.To.Format(time.DateOnly), tt.name, tt.from, tt.to)
		}
	}
	for _, tt := range []struct{ kind, s string }{
		{Week, "2025-W53"}, {Week, "2026-W0"}, {Week, "2026-11"}, {Month, "2026-W47"}, {Month, "November"}, {"year", ""},
	} {
		if _, err := ParsePeriod(tt.kind, tt.s, today); err == nil {
			t.Fatalf("ParsePeriod(%s, %q) took it", tt.kind, tt.s)
		}
	}
}

func TestRender(t *testing.T) {
	day := func(date, text string) Day {
		d, _ := time.Parse(time.DateOnly, date)
		return ParseDay("daily/"+date+".md", d, []byte(text))
	}
	days := []Day{
		day("2026-11-18", "---\nmood: good\n---\n# Daily Log — 2026-11-18\n\nA quiet day.\n\n## Decisions\n- Ship on Friday\n"),
		day("2026-11-16", "# Daily Log — 2026-11-16\n\n## 09:15 — Started the spec\nDrafted it.\n\n```\n## not a section\n```\n## 16:40 — Chose SQLite\n### Why\nOne file.\n"),
	}
	p, _ := ParsePeriod(Week, "2026-W47", time.Now())
	got := Render(p, days, "")
	want := `# Week 2026-W47: 2026-11-16 to 2026-11-22

Rolled up from 2 daily logs: [[2026-11-16]], [[2026-11-18]].
<!-- memhost-rollup sources: 2026-11-16.md=` + days[1].Hash + ` 2026-11-18.md=` + days[0].Hash + ` -->
@@HASH@@
## Monday 2026-11-16

### 09:15 — Started the spec

Drafted it.

` + "```\n## not a section\n```" + `

### 16:40 — Chose SQLite

#### Why
One file.

## Wednesday 2026-11-18

A quiet day.

### Decisions

- Ship on Friday
`
	// The hash line holds the SHA-256 of the rest of the body.
	sum := sha256.Sum256([]byte(strings.Replace(want, "@@HASH@@\n", "\n", 1)))
	want = strings.Replace(want, "@@HASH@@", "<!-- memhost-rollup generated: sha256:"+hex.EncodeToString(sum[:])+" -->\n", 1)
	if got != want {
		t.Fatalf("Render =\n%s\nwant\n%s", got, want)
	}
	if again := Render(p, []Day{days[1], days[0]}, ""); again != got {
		t.Fatal("the same logs rendered twice differ")
	}
	src := Sources(NewFrontmatter(p) + got)
	if len(src) != 2 || src["2026-11-16.md"] != days[1].Hash || src["2026-11-18.md"] != LogHash([]byte("---\nmood: good\n---\n# Daily Log — 2026-11-18\n\nA quiet day.\n\n## Decisions\n- Ship on Friday\n")) {
		t.Fatalf("Sources = %v", src)
	}
	if s := Render(p, days, "They shipped."); !strings.Contains(s, "-->\n\n## Summary\n\nThey shipped.\n\n## Monday") {
		t.Fatalf("the summary is not where it belongs:\n%s", s)
	}
	fm, err := markdown.ParseFrontmatter(NewFrontmatter(p) + got)
	if err != nil || fm.Title != "Week 2026-W47" || len(fm.Tags) != 1 || fm.Tags[0] != "rollup" || fm.Dates["from"] != "2026-11-16" {
		t.Fatalf("frontmatter = %+v, %v", fm, err)
	}
}

// TestRollupOwnership: which rollup pages are memhost's to write again
// (keptWhy "") and which a person's, and which logs a page's text holds.
func TestRollupOwnership(t *testing.T) {
	day := func(date, text string) Day {
		d, _ := time.Parse(time.DateOnly, date)
		return ParseDay("daily/"+date+".md", d, []byte(text))
	}
	mon := day("2026-11-16", "# Daily Log — 2026-11-16\n\n## 09:15 — Started the spec\nDrafted it.\n")
	wed := day("2026-11-18", "# Daily Log — 2026-11-18\n\nA quiet day.\n\n## Decisions\n- Ship on Friday\n")
	p, _ := ParsePeriod(Week, "2026-W47", time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
	body := Render(p, []Day{mon, wed}, "")
	hashLine := body[strings.Index(body, generatedMarker):]
	hashLine = hashLine[:strings.IndexByte(hashLine, '\n')+1]
	older := strings.Replace(body, hashLine, "", 1) // as an earlier memhost wrote it
	withThu := Render(p, []Day{mon, wed, day("2026-11-19", "# Daily Log — 2026-11-19\n\n## Later\n")}, "")

	for _, tt := range []struct {
		name, old, body, why string
	}{
		{"as written", body, body, ""},
		{"as written, the logs changed since", body, withThu, ""},
		{"a line added", body + "\nMy note.\n", body, "edited since memhost wrote it"},
		{"a word changed", strings.Replace(body, "Drafted it.", "Drafted it!", 1), body, "edited since memhost wrote it"},
		{"line ends changed", strings.ReplaceAll(body, "\n", "\r\n"), body, ""},
		{"the hash removed, the rest as written", older, body, ""},
		{"the hash removed, a log changed since", older, withThu, "written by an earlier memhost without the hash that shows edits, and not what its logs give now, so it may hold edits"},
		{"the hash removed, not yet judged", older, "", ""},
		{"a person's page", "# My week\n\nQuiet.\n", body, "not a rollup memhost wrote"},
		{"an empty page", "", body, "not a rollup memhost wrote"},
	} {
		if got := keptWhy(tt.old, tt.body); got != tt.why {
			t.Errorf("%s: keptWhy = %q, want %q", tt.name, got, tt.why)
		}
	}

	page := NewFrontmatter(p) + body
	if !Holds(page, mon) || !Holds(page, wed) {
		t.Fatalf("the rollup does not hold its logs:\n%s", page)
	}
	own := strings.Replace(page, "### 09:15 — Started the spec\n\nDrafted it.\n", "We began.\n", 1)
	if Holds(own, mon) || !Holds(own, wed) {
		t.Fatalf("Holds after Monday was rewritten: %v %v", Holds(own, mon), Holds(own, wed))
	}
	if crlf := strings.ReplaceAll(page, "\n", "\r\n"); !Holds(crlf, mon) || !Holds(crlf, wed) {
		t.Fatal("a rollup with \\r\\n line ends does not hold its logs")
	}
	if added := page + "- And a note of mine\n"; !Holds(added, wed) {
		t.Fatal("text added after a day's section lost it")
	}
	if changed := day("2026-11-16", "# Daily Log — 2026-11-16\n\n## 09:15 — Started the spec\nDrafted it twice.\n"); Holds(page, changed) {
		t.Fatal("the rollup holds a log's later text")
	}
}
