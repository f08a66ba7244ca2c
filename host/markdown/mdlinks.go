package markdown

import (
	"net/url"
	"slices"
	"sort"
	"strings"
)

// MarkdownLinks returns the markdown links of a page's lines that name a
// file of the vault, as Obsidian reads them: [text](page.md),
// [text](folder/page.md#Heading), [text](Some%20Page.md),
// [text](<Some Page.md>), [text](page.md "title") and the embed
// ![alt](image.png). The destination is URL-decoded (and its backslash
// escapes read) into Target and Heading; Alias holds the link text.
// Links to elsewhere are left out: a URL with a scheme (http:, https:,
// mailto:, obsidian:, file: ...), "//host/..." and "#heading" alone. So are
// links in the frontmatter, fenced code and inline code spans, and inside
// wikilinks, as Links leaves out wikilinks there.
//
// It reads CommonMark's inline links on one line (reference links and
// links across lines are not read): the text's brackets nest, a
// backslash-escaped bracket is text, a destination is <...> or a run
// without white space whose parentheses balance, a title may follow.
func MarkdownLinks(lines []string) []Link {
	var out []Link
	eachText(lines, func(n int, line string, code []bool) {
		out = append(out, markdownLinks(n, line, code, wikiLinks(n, line, code))...)
	})
	return out
}

// markdownLinks returns the markdown links of line n, whose inline code
// is marked in code, outside its wikilinks, by the position of their "[".
// It follows CommonMark's look for link ends: each "]" closes the nearest
// "[" still open; when "(destination)" follows, that is a link (or an
// image, after "!"), the scan goes on after it, and a link (not an image)
// closes every "[" before it, since links do not hold links.
func markdownLinks(n int, line string, code []bool, wiki []Link) []Link {
	if !strings.Contains(line, "](") {
		return nil
	}
	type opener struct {
		at     int
		active bool
	}
	var open []opener
	var out []Link
	w := 0
	for k := 0; k < len(line); k++ {
		for w < len(wiki) && wiki[w].End <= k {
			w++
		}
		if w < len(wiki) && k >= wiki[w].Start {
			k = wiki[w].End - 1 // a wikilink is text here
			continue
		}
		if code[k] || (line[k] != '[' && line[k] != ']') || escaped(line, k) {
			continue
		}
		if line[k] == '[' {
			open = append(open, opener{at: k, active: true})
			continue
		}
		if len(open) == 0 {
			continue
		}
		o := open[len(open)-1]
		open = open[:len(open)-1]
		if !o.active || k+1 >= len(line) || line[k+1] != '(' {
			continue
		}
		d, ok := destination(line, k+2)
		if !ok || strings.Contains(line[k+1:d.end], "[[") || slices.Contains(code[k+1:d.end], true) {
			continue // no destination, or a wikilink's start or a code span in it
		}
		embed := o.at > 0 && line[o.at-1] == '!'
		if !embed {
			for i := range open {
				open[i].active = false
			}
		}
		i, j := o.at, k
		k = d.end - 1
		raw := line[d.pathStart:d.pathEnd]
		if external(raw) {
			continue
		}
		target, heading := decode(raw), ""
		if d.fragEnd > d.pathEnd {
			heading = strings.TrimSpace(decode(line[d.pathEnd+1 : d.fragEnd]))
		}
		target = strings.TrimSpace(target)
		if target == "" {
			continue // [x](#heading): this page
		}
		out = append(out, Link{
			Target: target, Heading: heading, Alias: strings.TrimSpace(line[i+1 : j]),
			Embed: embed, Line: n, Markdown: true,
			Start: i, End: d.end, PathStart: d.pathStart, PathEnd: d.pathEnd,
		})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Start < out[b].Start })
	return out
}

// escaped reports whether the byte at i follows an odd run of backslashes.
func escaped(line string, i int) bool {
	n := 0
	for k := i - 1; k >= 0 && line[k] == '\\'; k-- {
		n++
	}
	return n%2 == 1
}

// dest is where a link destination's parts are in the line: the path
// (before '#'), the fragment (after it, up to fragEnd), and the end of
// the link, just past ')'.
type dest struct {
	pathStart, pathEnd, fragEnd, end int
}

// destination reads a link's destination, optional title and ")" from at
// (just past "(").
func destination(line string, at int) (dest, bool) {
	var d dest
	k := skipSpace(line, at)
	var start, stop int // the destination as written, without <>
	if k < len(line) && line[k] == '<' {
		start = k + 1
		for k = start; k < len(line) && line[k] != '>'; k++ {
			if line[k] == '<' && !escaped(line, k) {
				return d, false
			}
			if line[k] == '\\' && k+1 < len(line) {
				k++
			}
		}
		if k >= len(line) {
			return d, false
		}
		stop, k = k, k+1
	} else {
		start = k
		depth := 0
	run:
		for ; k < len(line); k++ {
			c := line[k]
			switch {
			case c == '\\' && k+1 < len(line):
				k++
			case c <= ' ' || c == 0x7f:
				break run
			case c == '(':
				depth++
			case c == ')':
				if depth == 0 {
					break run
				}
				depth--
			}
		}
		if depth != 0 {
			return d, false
		}
		stop = k
	}
	if k = skipSpace(line, k); k < len(line) && k > stop && (line[k] == '"' || line[k] == '\'' || line[k] == '(') {
		closer := line[k]
		if closer == '(' {
			closer = ')'
		}
		for k++; k < len(line) && (line[k] != closer || escaped(line, k)); k++ {
		}
		if k >= len(line) {
			return d, false
		}
		k = skipSpace(line, k+1)
	}
	if k >= len(line) || line[k] != ')' || stop == start {
		return d, false
	}
	d.end = k + 1
	d.pathStart, d.pathEnd, d.fragEnd = start, stop, stop
	// The fragment starts at the first '#' outside parentheses: then the
	// path's parentheses balance by themselves, as a new path's do.
	depth := 0
	for h := start; h < stop; h++ {
		switch c := line[h]; {
		case c == '\\':
			h++
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '#' && depth == 0:
			d.pathEnd = h
			return d, true
		}
	}
	return d, true
}

func skipSpace(line string, k int) int {
	for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
		k++
	}
	return k
}

// external reports whether a destination as written leads out of the
// vault: a scheme ("https:", "mailto:", "obsidian:") or "//host".
func external(raw string) bool {
	if strings.HasPrefix(raw, "//") {
		return true
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == ':':
			return i > 0
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return false
}

// decode reads a destination part as written: backslash escapes of
// punctuation, then %XX escapes (left as written when malformed).
func decode(raw string) string {
	s := raw
	if strings.IndexByte(s, '\\') >= 0 {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) && isPunct(s[i+1]) {
				i++
			}
			b.WriteByte(s[i])
		}
		s = b.String()
	}
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

func isPunct(c byte) bool {
	return c < 0x80 && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) >= 0
}

// EncodePath writes a vault path as a markdown link's destination, in the
// style of one written before (old, as written): inside <...> (angle)
// only what would end or break it is escaped; otherwise what a
// destination cannot hold raw (white space, parentheses, '<', '>', '#',
// '%', '\', ':', '[', ']', '`', control characters) is
// %-escaped, and so are non-ASCII characters when old escaped them.
// MarkdownLinks reads the result back as path.
func EncodePath(path, old string, angle bool) string {
	escapeUTF8 := false
	for i := 0; i+2 < len(old); i++ {
		if old[i] == '%' && strings.IndexByte("89abcdefABCDEF", old[i+1]) >= 0 {
			escapeUTF8 = true
			break
		}
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		var esc bool
		switch {
		case c < 0x20 || c == 0x7f, c == '%', c == '\\', c == '<', c == '>', c == '#', c == ':', c == '[', c == ']', c == '`':
			esc = true
		case c >= 0x80:
			esc = escapeUTF8
		case angle:
		case c == ' ', c == '(', c == ')':
			esc = true
		}
		if esc {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}
