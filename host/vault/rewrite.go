package vault

import (
	"strings"

	"github.com/memhost/memhost/host/markdown"
)

// RewriteLinks returns page with the page part of each wikilink for which
// target returns a new one replaced by it, and how many were. Everything
// else stays byte for byte: the link's #heading and |alias, the page's
// frontmatter (whose links are not rewritten), its line endings.
func RewriteLinks(page string, target func(markdown.Link) (string, bool)) (string, int) {
	lines := markdown.Lines(page)
	links := markdown.Links(lines)
	if len(links) == 0 {
		return page, 0
	}
	// Byte offset of each line's start in page.
	starts := make([]int, 0, len(lines))
	for at := 0; len(starts) < len(lines); {
		starts = append(starts, at)
		i := strings.IndexByte(page[at:], '\n')
		if i < 0 {
			break
		}
		at += i + 1
	}
	var b strings.Builder
	last, n := 0, 0
	for _, l := range links {
		nt, ok := target(l)
		if !ok {
			continue
		}
		inner0 := starts[l.Line-1] + l.Start + 2 // just after "[["
		inner := page[inner0 : starts[l.Line-1]+l.End-2]
		cut := len(inner)
		if i := strings.IndexAny(inner, "#|"); i >= 0 {
			cut = i
			if inner[i] == '|' && i > 0 && inner[i-1] == '\\' {
				cut = i - 1 // [[page\|alias]] in a table
			}
		}
		// Keep the white space the target was written with.
		old := inner[:cut]
		lead := old[:len(old)-len(strings.TrimLeft(old, " \t"))]
		trail := old[len(strings.TrimRight(old, " \t")):]
		b.WriteString(page[last:inner0])
		b.WriteString(lead + nt + trail)
		last = inner0 + cut
		n++
	}
	b.WriteString(page[last:])
	return b.String(), n
}
