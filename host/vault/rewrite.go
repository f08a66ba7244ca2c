package vault

import (
	"sort"
	"strings"

	"github.com/memhost/memhost/host/markdown"
)

// RewriteLinks returns page with the page part of each link for which
// target returns a new one replaced by it, and how many were. For a
// wikilink the new page part is written as given; for a markdown link it
// is a path, written %-escaped in the style of the link's destination
// (markdown.EncodePath: inside <...> when it was, non-ASCII escaped when
// it was). Everything else stays byte for byte: the link's #heading,
// |alias and text, the page's frontmatter (whose links are not
// rewritten), its line endings.
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
	// Markdown links come in the order of their "[", and an image inside
	// a link's text follows it; the rewrites go in the order of the parts
	// they replace, which never overlap.
	sort.SliceStable(links, func(i, j int) bool {
		if links[i].Line != links[j].Line {
			return links[i].Line < links[j].Line
		}
		return links[i].PathStart < links[j].PathStart
	})
	var b strings.Builder
	last, n := 0, 0
	for _, l := range links {
		nt, ok := target(l)
		if !ok {
			continue
		}
		line := lines[l.Line-1]
		at0, at1 := starts[l.Line-1]+l.PathStart, starts[l.Line-1]+l.PathEnd
		old := line[l.PathStart:l.PathEnd]
		b.WriteString(page[last:at0])
		if l.Markdown {
			angle := l.PathStart > 0 && line[l.PathStart-1] == '<'
			b.WriteString(markdown.EncodePath(nt, old, angle))
		} else {
			// Keep the white space the target was written with.
			lead := old[:len(old)-len(strings.TrimLeft(old, " \t"))]
			trail := old[len(strings.TrimRight(old, " \t")):]
			b.WriteString(lead + nt + trail)
		}
		last = at1
		n++
	}
	b.WriteString(page[last:])
	return b.String(), n
}
