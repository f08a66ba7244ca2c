package notebook

import (
	"strings"
	"unicode"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/markdown"
)

// Edit is the result of a section edit: the new page and the 1-based,
// inclusive line range the new text occupies in it.
type Edit struct {
	Page      string
	StartLine int
	EndLine   int
}

// SectionName normalises a section given by a user: "## Groceries",
// "Groceries" and " groceries " name the same H2 section. A line break or
// other control character in s (which CheckSection refuses) becomes a
// space, so that the name is one heading line.
func SectionName(s string) string {
	return markdown.HeadingText(strings.Map(func(r rune) rune {
		if controlChar(r) {
			return ' '
		}
		return r
	}, s))
}

// MaxSection is the longest section name a user may give, in bytes: a
// heading, not a paragraph.
const MaxSection = 500

// CheckSection checks a section given by a user ("" means none): it must
// be one line without control characters, since a line break in it would
// write headings of its own; it must name a heading once its #s are
// dropped, since an empty name means the whole page; and its heading must
// read back as its name: "0 # #" names "0 #", whose heading "## 0 #"
// reads as "0".
func CheckSection(s string) error {
	switch {
	case s == "":
		return nil
	case len(s) > MaxSection:
		return fault.BadInputf("section", "section %q: %d bytes; a section's heading takes at most %d", s, len(s), MaxSection)
	case strings.ContainsFunc(s, controlChar):
		return fault.BadInputf("section", "section %q: it holds a line break, a tab or another control character (a section is one heading line)", s)
	case SectionName(s) == "":
		return fault.BadInputf("section", "section %q names no heading", s)
	case markdown.HeadingText("## "+SectionName(s)) != SectionName(s):
		return fault.BadInputf("section", "section %q names %q, but the heading \"## %s\" reads as %q, its last #s being closing #s", s, SectionName(s), SectionName(s), markdown.HeadingText("## "+SectionName(s)))
	}
	return nil
}

// findSection returns the line index of the H2 heading named name and the
// index of the line after the section's last line (the next H1/H2 heading or
// len(lines)); start is -1 when there is no such section. Frontmatter is
// not searched: a YAML comment "## Groceries" in it is no section.
func findSection(lines []string, name string) (start, end int) {
	fm := frontmatter(lines)
	levels := append(make([]int, fm), markdown.HeadingLevels(lines[fm:])...)
	start = -1
	for i, l := range lines {
		if start < 0 {
			if levels[i] == 2 && strings.EqualFold(markdown.HeadingText(l), name) {
				start = i
			}
			continue
		}
		if levels[i] == 1 || levels[i] == 2 {
			return start, i
		}
	}
	return start, len(lines)
}

// Append adds text at the end of the page, or of its H2 section when
// section is not empty (creating the section at the end of the page when it
// is missing). A blank line separates the new text from a following heading.
// Text with no lines adds none: the Edit's range is then empty, EndLine
// being StartLine-1.
func Append(page, section, text string) Edit {
	return edit(page, section, text, false)
}

// Replace replaces the body of an H2 section with text, keeping its heading;
// with no section it replaces the whole page, keeping the page's
// frontmatter byte for byte unless text starts with frontmatter of its own.
// A missing section is created.
func Replace(page, section, text string) Edit {
	if section == "" {
		// The page's frontmatter stays unless text brings its own: no
		// write drops a page's metadata (aliases, tags) by accident.
		body := markdown.Lines(strings.TrimRight(text, "\n"))
		front, _ := markdown.SplitFrontmatter(page)
		if front == "" || markdown.FrontmatterLines(body) > 0 {
			return Edit{Page: join(body, lineEnding(page)), StartLine: 1, EndLine: max(1, len(body))}
		}
		if !strings.HasSuffix(front, "\n") {
			front += lineEnding(page)
		}
		at := len(markdown.Lines(front))
		return Edit{Page: front + join(body, lineEnding(page)), StartLine: at + 1, EndLine: at + max(1, len(body))}
	}
	return edit(page, section, text, true)
}

func edit(page, section, text string, replace bool) Edit {
	eol := lineEnding(page)
	lines := markdown.Lines(page)
	body := markdown.Lines(strings.Trim(text, "\n"))
	name := SectionName(section)
	start, end := -1, len(lines)
	if name != "" {
		start, end = findSection(lines, name)
	}
	if name != "" && start < 0 {
		// New section at the end of the page, where a code fence left open
		// would make its heading code: close the fence first.
		lines = trimBlankTail(lines)
		if f := markdown.OpenFence(lines[frontmatter(lines):]); f != "" {
			lines = append(lines, f)
		}
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, markdown.Heading(2, name))
		at := len(lines)
		lines = append(lines, body...)
		return Edit{Page: join(lines, eol), StartLine: at + 1, EndLine: at + len(body)}
	}
	var head []string
	if replace {
		head = append(head, lines[:start+1]...) // through the heading
	} else {
		head = trimBlankTail(append(head, lines[:end]...))
		if n := len(head); n > 0 && len(body) > 0 && needsBlank(head[n-1], body[0]) {
			head = append(head, "")
		}
	}
	at := len(head)
	out := append(head, body...)
	if tail := trimBlankHead(lines[end:]); len(tail) > 0 {
		out = append(out, "")
		out = append(out, tail...)
	}
	return Edit{Page: join(out, eol), StartLine: at + 1, EndLine: at + len(body)}
}

// frontmatter returns how many lines a page's leading YAML frontmatter
// takes (markdown.FrontmatterLines). The editor never edits it, and its
// lines are neither headings nor fences (a block scalar may hold "```").
func frontmatter(lines []string) int { return markdown.FrontmatterLines(lines) }

// join writes lines, each ended with eol. On an LF page a CR left at the
// end of a line (\r\r\n, or a last line \r with no newline) is dropped:
// written before "\n" it would make a CRLF and be read back without it,
// one CR lost on each write instead of all at once.
func join(lines []string, eol string) string {
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	for _, l := range lines {
		if eol == "\n" {
			l = strings.TrimRight(l, "\r")
		}
		b.WriteString(l)
		b.WriteString(eol)
	}
	return b.String()
}

// lineEnding is the line ending most of page's lines have: "\r\n" for a
// page from a Windows editor, else "\n". An edit writes the whole page with
// it, so that adding a line does not rewrite every other line's ending.
func lineEnding(page string) string {
	crlf := strings.Count(page, "\r\n")
	if crlf > strings.Count(page, "\n")-crlf {
		return "\r\n"
	}
	return "\n"
}

func trimBlankTail(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func trimBlankHead(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	return lines
}

// IsListItem reports whether a line is a markdown list item.
func IsListItem(l string) bool {
	t := strings.TrimLeft(l, " \t")
	if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "+ ") {
		return true
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i < len(t)-1 && (t[i] == '.' || t[i] == ')') && t[i+1] == ' '
}

// needsBlank says whether a blank line goes between prev and next: a list
// item follows the last one directly, and text follows its section heading
// directly; anything else (a heading, text after the page title) gets a
// blank line.
func needsBlank(prev, next string) bool {
	if markdown.HeadingLevels([]string{next})[0] > 0 {
		return true
	}
	if l := markdown.HeadingLevels([]string{prev})[0]; l > 1 {
		return false
	}
	return !(IsListItem(prev) && IsListItem(next))
}

// PersonSection returns the H2 section of page that name refers to: the
// section named name, or else the one section whose first word is name
// ("Sarah" finds "## Sarah Chen"). It returns name when none or several
// match.
func PersonSection(page, name string) string {
	if s, ok := PersonIn(Sections(page), name); ok {
		return s
	}
	return name
}

// PersonIn is PersonSection over a page's sections; ok is false when
// none or several match.
func PersonIn(sections []string, name string) (string, bool) {
	var found []string
	for _, h := range sections {
		if strings.EqualFold(h, name) {
			return h, true
		}
		if f := strings.Fields(h); len(f) > 1 && strings.EqualFold(f[0], name) {
			found = append(found, h)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return "", false
}

// Sections returns the text of page's H2 headings in order; headings in
// frontmatter or code are none.
func Sections(page string) []string {
	var out []string
	lines := markdown.Lines(page)
	fm := frontmatter(lines)
	for i, level := range markdown.HeadingLevels(lines[fm:]) {
		if level == 2 {
			out = append(out, markdown.HeadingText(lines[fm+i]))
		}
	}
	return out
}

// FindSection returns the H2 heading of page that name names (ignoring
// case and #s), as the page spells it.
func FindSection(page, name string) (string, bool) {
	name = SectionName(name)
	for _, h := range Sections(page) {
		if strings.EqualFold(h, name) {
			return h, true
		}
	}
	return "", false
}

// SectionAt returns the H2 section that holds the 1-based line of page, or
// "" for a line before the first.
func SectionAt(page string, line int) string {
	lines := markdown.Lines(page)
	fm := frontmatter(lines)
	section := ""
	for i, level := range markdown.HeadingLevels(lines[fm:]) {
		if fm+i+1 > line {
			break
		}
		if level == 1 {
			section = ""
		}
		if level == 2 {
			section = markdown.HeadingText(lines[fm+i])
		}
	}
	return section
}

// GeneralSection is the section Place creates for an entry that belongs
// to none of a page's sections.
const GeneralSection = "Notes"

// generalSections are headings that hold what belongs nowhere else.
var generalSections = []string{GeneralSection, "General", "Misc", "Miscellaneous", "Other"}

// Place chooses the H2 section of page for text that comes with none. On
// a page without sections it is "" (the end of the page). Otherwise the
// end of the page is the last section's, which text may have nothing to
// do with (a fact at the end of contacts.md would read as the last
// person's), so text goes under the section whose every word it names
// (the one naming the most), else the page's general section (Notes,
// General, Misc...), else a new GeneralSection.
func Place(page, text string) string {
	sections := Sections(page)
	if len(sections) == 0 {
		return ""
	}
	named := map[string]bool{}
	for _, w := range words(text) {
		named[w] = true
	}
	best, most := "", 0
	for _, h := range sections {
		ws := words(h)
		all := len(ws) > 0
		for _, w := range ws {
			all = all && named[w]
		}
		if all && len(ws) > most {
			best, most = h, len(ws)
		}
	}
	if best != "" {
		return best
	}
	for _, g := range generalSections {
		for _, h := range sections {
			if strings.EqualFold(h, g) {
				return h
			}
		}
	}
	return GeneralSection
}

// words are the lowercased runs of letters and digits of s.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
