package markdown

import (
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Link is one link of a page to a vault file: a wikilink [[Target]],
// [[Target#Heading]], [[Target|Alias]] or an embed ![[Target]]; or a
// markdown link [Alias](Target#Heading) or embed ![Alias](Target) to a
// file of the vault (see MarkdownLinks).
type Link struct {
	Target  string `json:"target"`            // the page part as written, trimmed ("people/Sarah Chen", "photo.png"); a markdown link's URL-decoded
	Heading string `json:"heading,omitempty"` // after '#': a heading or a ^block id
	Alias   string `json:"alias,omitempty"`   // after '|': the text shown; a markdown link's text
	Embed   bool   `json:"embed,omitempty"`   // ![[...]], ![...](...)
	Line    int    `json:"line"`              // 1-based
	// Markdown says the link is [text](target), not a wikilink.
	Markdown bool `json:"markdown,omitempty"`
	// Start and End are the byte offsets of "[[" (a markdown link's "[")
	// and just past "]]" (its ")") in the line.
	Start int `json:"-"`
	End   int `json:"-"`
	// PathStart and PathEnd are the byte offsets in the line of the page
	// part as written (before '#', '|'; a markdown link's undecoded path
	// before '#'): what a rename rewrites.
	PathStart int `json:"-"`
	PathEnd   int `json:"-"`
}

// Tag is an inline #tag of a page.
type Tag struct {
	Name string `json:"name"` // normalised (NormalizeTag): no '#', lowercase
	Line int    `json:"line"`
}

// Links returns the links of a page's lines to vault files, wikilinks and
// markdown links (MarkdownLinks) in the order they are written, leaving
// out its frontmatter, fenced code and inline code spans, as Obsidian
// does. A link to a heading of the page itself ([[#Heading]], [x](#h))
// has no Target and is left out.
func Links(lines []string) []Link {
	var out []Link
	eachText(lines, func(n int, line string, code []bool) {
		wiki := wikiLinks(n, line, code)
		md := markdownLinks(n, line, code, wiki)
		if len(md) == 0 {
			out = append(out, wiki...)
			return
		}
		all := append(wiki, md...)
		sort.SliceStable(all, func(i, j int) bool { return all[i].Start < all[j].Start })
		out = append(out, all...)
	})
	return out
}

// wikiLinks returns the wikilinks of line n.
func wikiLinks(n int, line string, code []bool) []Link {
	var out []Link
	for at := 0; ; {
		i := strings.Index(line[at:], "[[")
		if i < 0 {
			return out
		}
		i += at
		j := strings.Index(line[i+2:], "]]")
		if j < 0 {
			return out
		}
		j += i + 2
		if code[i] {
			at = i + 2
			continue
		}
		if slices.Contains(code[i:j+2], true) {
			at = j + 2 // a code span begins inside: "[[`]] `"
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
		// The page part as written, white space and all.
		cut := len(inner)
		if k := strings.IndexAny(inner, "#|"); k >= 0 {
			cut = k
			if inner[k] == '|' && k > 0 && inner[k-1] == '\\' {
				cut = k - 1 // [[page\|alias]] in a table
			}
		}
		l.PathStart, l.PathEnd = i+2, i+2+cut
		out = append(out, l)
	}
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
	inFence := Fenced(lines[fm:])
	for i := fm; i < len(lines); i++ {
		if inFence[i-fm] {
			continue
		}
		fn(i+1, lines[i], codeSpans(lines[i]))
	}
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
