package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Link is one wikilink of a page: [[Target]], [[Target#Heading]],
// [[Target|Alias]], or an embed ![[Target]].
type Link struct {
	Target  string `json:"target"`            // the page part as written, trimmed ("people/Sarah Chen", "photo.png")
	Heading string `json:"heading,omitempty"` // after '#': a heading or a ^block id
	Alias   string `json:"alias,omitempty"`   // after '|': the text shown
	Embed   bool   `json:"embed,omitempty"`   // ![[...]]
	Line    int    `json:"line"`              // 1-based
	// Start and End are the byte offsets of "[[" and just past "]]" in the
	// line: what a rename rewrites.
	Start int `json:"-"`
	End   int `json:"-"`
}

// Tag is an inline #tag of a page.
type Tag struct {
	Name string `json:"name"` // normalised (NormalizeTag): no '#', lowercase
	Line int    `json:"line"`
}

// Links returns the wikilinks of a page's lines, in order, leaving out its
// frontmatter, fenced code and inline code spans, as Obsidian does. A link
// to a heading of the page itself ([[#Heading]]) has no Target and is left
// out.
func Links(lines []string) []Link {
	var out []Link
	eachText(lines, func(n int, line string, code []bool) {
		for at := 0; ; {
			i := strings.Index(line[at:], "[[")
			if i < 0 {
				return
			}
			i += at
			j := strings.Index(line[i+2:], "]]")
			if j < 0 {
				return
			}
			j += i + 2
			if code[i] {
				at = i + 2
				continue
			}
			inner := line[i+2 : j]
			if k := strings.LastIndex(inner, "[["); k >= 0 { // "[[a [[b]]": the inner one
				i += 2 + k
				inner = inner[k+2:]
			}
			at = j + 2
			l := parseLink(inner)
			if l.Target == "" {
				continue
			}
			l.Line, l.Start, l.End = n, i, j+2
			l.Embed = i > 0 && line[i-1] == '!'
			out = append(out, l)
		}
	})
	return out
}

// parseLink reads the inside of [[...]].
func parseLink(inner string) Link {
	var l Link
	target := inner
	if p := strings.IndexByte(inner, '|'); p >= 0 {
		target, l.Alias = inner[:p], strings.TrimSpace(inner[p+1:])
		// In a table the pipe is escaped: [[page\|alias]].
		target = strings.TrimSuffix(target, `\`)
	}
	if h := strings.IndexByte(target, '#'); h >= 0 {
		target, l.Heading = target[:h], strings.TrimSpace(target[h+1:])
	}
	l.Target = strings.TrimSpace(target)
	return l
}

// InlineTags returns the #tags in a page's text, outside its frontmatter,
// code and links: '#' at the start of a line or after white space, then
// letters, digits, '_', '-' and '/' with at least one that is not a digit
// (#2026 is no tag). A heading's #s are followed by a space, so they are
// none.
func InlineTags(lines []string) []Tag {
	var out []Tag
	eachText(lines, func(n int, line string, code []bool) {
		for i := 0; i < len(line); i++ {
			if line[i] != '#' || code[i] {
				continue
			}
			if i > 0 {
				r, _ := utf8.DecodeLastRuneInString(line[:i])
				if !unicode.IsSpace(r) {
					continue
				}
			}
			end := i + 1
			digits := true
			for end < len(line) {
				r, size := utf8.DecodeRuneInString(line[end:])
				if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '/') {
					break
				}
				if !unicode.IsDigit(r) {
					digits = false
				}
				end += size
			}
			if end > i+1 && !digits {
				if t := NormalizeTag(line[i+1 : end]); t != "" {
					out = append(out, Tag{Name: t, Line: n})
				}
			}
			i = end - 1
		}
	})
	return out
}

// eachText calls fn with each line outside the frontmatter and fenced
// code, its 1-based number, and which of its bytes are inside inline code
// spans.
func eachText(lines []string, fn func(n int, line string, code []bool)) {
	fm := FrontmatterLines(lines)
	inFence := fencedLines(lines[fm:])
	for i := fm; i < len(lines); i++ {
		if inFence[i-fm] {
			continue
		}
		fn(i+1, lines[i], codeSpans(lines[i]))
	}
}

// fencedLines marks the lines of fenced code blocks, fences included.
func fencedLines(lines []string) []bool {
	out := make([]bool, len(lines))
	fence := ""
	for i, l := range lines {
		if fence != "" {
			out[i] = true
			if strings.HasPrefix(strings.TrimLeft(l, " "), fence) {
				fence = ""
			}
			continue
		}
		if f := fenceMarker(l); f != "" {
			fence, out[i] = f, true
		}
	}
	return out
}

// codeSpans marks the bytes of line inside `code spans` (a run of
// backticks closed by a run of the same length), backticks included.
func codeSpans(line string) []bool {
	code := make([]bool, len(line))
	for i := 0; i < len(line); {
		if line[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		run := line[i : i+n]
		closeAt := -1
		for j := i + n; j < len(line); {
			k := strings.Index(line[j:], run)
			if k < 0 {
				break
			}
			k += j
			m := 0
			for k+m < len(line) && line[k+m] == '`' {
				m++
			}
			if m == n {
				closeAt = k
				break
			}
			j = k + m
		}
		if closeAt < 0 {
			i += n
			continue
		}
		for k := i; k < closeAt+n; k++ {
			code[k] = true
		}
		i = closeAt + n
	}
	return code
}
