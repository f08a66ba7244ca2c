package vault

import (
	"strings"
	"testing"

	"github.com/memhost/memhost/host/markdown"
)

// FuzzRewriteLinks: on any page, every link found is framed by "[[" and
// "]]" at its offsets, rewriting each link to the target it has leaves the
// page byte for byte as it was, and rewriting to a new target changes
// nothing outside the links' page parts (the frontmatter included).
func FuzzRewriteLinks(f *testing.F) {
	for _, s := range []string{
		"See [[a]] and [[b#h|c]].\n",
		"---\nx: \"[[a]]\"\n---\n[[a]]\r\n`[[a]]` ![[a.png]]\n",
		"[[a [[b]] c]] [[]] [[#h]] [[|x]] [[a\\|b]]",
		"```\n[[a]]\n```\n[[a]]",
		"[[ spaced #h | alias ]]",
		"\xff[[\xfe]]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, page string) {
		lines := markdown.Lines(page)
		links := markdown.Links(lines)
		for _, l := range links {
			line := lines[l.Line-1]
			if l.Start < 0 || l.End > len(line) || !strings.HasPrefix(line[l.Start:], "[[") || !strings.HasSuffix(line[:l.End], "]]") {
				t.Fatalf("link %+v is not framed in line %q", l, line)
			}
		}
		markdown.InlineTags(lines)
		same, n := RewriteLinks(page, func(l markdown.Link) (string, bool) {
			// The page part as written, white space and all.
			return "", false
		})
		if same != page || n != 0 {
			t.Fatalf("a rewrite of nothing changed the page")
		}
		out, n := RewriteLinks(page, func(markdown.Link) (string, bool) { return "NEW", true })
		if n != len(links) {
			t.Fatalf("%d links rewritten of %d", n, len(links))
		}
		front, _ := markdown.SplitFrontmatter(page)
		if !strings.HasPrefix(out, front) {
			t.Fatalf("the frontmatter changed: %q", out)
		}
		if n == 0 && out != page {
			t.Fatalf("no link, yet the page changed")
		}
	})
}
