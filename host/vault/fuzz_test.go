package vault

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memhost/memhost/host/markdown"
)

// FuzzRewriteLinks: on any page, every link found is framed by "[[" and
// "]]" (a markdown link by "[" and ")") at its offsets, with its page part
// inside; rewriting each link to the target it has leaves the page byte
// for byte as it was; rewriting every link to a new target changes
// nothing outside the links' page parts (the frontmatter included), and
// the page read again has the same links, each naming the new target
// (a markdown link's path, however odd, is escaped so that it reads back
// as given) with its heading, alias and kind as they were.
func FuzzRewriteLinks(f *testing.F) {
	for _, s := range []string{
		"See [[a]] and [[b#h|c]].\n",
		"---\nx: \"[[a]]\"\n---\n[[a]]\r\n`[[a]]` ![[a.png]]\n",
		"[[a [[b]] c]] [[]] [[#h]] [[|x]] [[a\\|b]]",
		"```\n[[a]]\n```\n[[a]]",
		"[[ spaced #h | alias ]]",
		"\xff[[\xfe]]",
		"[x](a.md) ![y](b%20c.png#h) [z](<d e.md> \"t\") [![i](j.png)](k.md) [w](https://x)",
		"[a [b](c.md)](d.md) \\[e](f.md) [g](h\\(i.md) `[j](k.md)`",
		"[[a]](b.md) [c [[d]]](e.md) [x](#h) [y](Caf%C3%A9.md)",
	} {
		f.Add(s, "NEW")
	}
	f.Add("[x](a.md)", "people/Sarah Chen (2).md")
	f.Add("[x](<a.md>)", "a>b<c#d%e:f\\g.md")
	f.Fuzz(func(t *testing.T, page, newPath string) {
		lines := markdown.Lines(page)
		links := markdown.Links(lines)
		for _, l := range links {
			line := lines[l.Line-1]
			open, close := "[[", "]]"
			if l.Markdown {
				open, close = "[", ")"
			}
			if l.Start < 0 || l.End > len(line) || !strings.HasPrefix(line[l.Start:], open) || !strings.HasSuffix(line[:l.End], close) ||
				l.PathStart < l.Start || l.PathEnd > l.End || l.PathStart > l.PathEnd {
				t.Fatalf("link %+v is not framed in line %q", l, line)
			}
		}
		markdown.InlineTags(lines)
		same, n := RewriteLinks(page, func(l markdown.Link) (string, bool) { return "", false })
		if same != page || n != 0 {
			t.Fatalf("a rewrite of nothing changed the page")
		}
		// A markdown link's new path: any one line of text that reads as
		// a path (not empty, no white space around it, no scheme).
		mdPath := strings.TrimSpace(newPath)
		if mdPath == "" || strings.ContainsAny(mdPath, "\r\n") || !utf8.ValidString(mdPath) || strings.HasPrefix(mdPath, "//") || strings.HasPrefix(mdPath, "#") {
			mdPath = "NEW"
		}
		out, n := RewriteLinks(page, func(l markdown.Link) (string, bool) {
			if l.Markdown {
				return mdPath, true
			}
			return "NEW", true
		})
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
		// Outside the page parts, the bytes are the page's.
		if a, b := outsideLinks(page, links), outsideLinks(out, markdown.Links(markdown.Lines(out))); a != b {
			t.Fatalf("bytes outside the links changed:\n%q\n%q", a, b)
		}
		again := markdown.Links(markdown.Lines(out))
		if len(again) != len(links) {
			t.Fatalf("%d links before the rewrite, %d after:\n%q\n%q", len(links), len(again), page, out)
		}
		for i, l := range again {
			want := links[i]
			want.Target = "NEW"
			if want.Markdown {
				want.Target = mdPath
			}
			if l.Target != want.Target || l.Heading != want.Heading || l.Markdown != want.Markdown || l.Embed != want.Embed || l.Line != want.Line ||
				(!l.Markdown && l.Alias != want.Alias) {
				t.Fatalf("link %d reads back as %+v, want %+v\n%q", i, l, want, out)
			}
		}
	})
}

// outsideLinks is page with the page part of each link cut out.
func outsideLinks(page string, links []markdown.Link) string {
	lines := strings.SplitAfter(page, "\n")
	cut := make([][][2]int, len(lines))
	for _, l := range links {
		cut[l.Line-1] = append(cut[l.Line-1], [2]int{l.PathStart, l.PathEnd})
	}
	var b strings.Builder
	for i, line := range lines {
		at := 0
		for _, c := range sortedCuts(cut[i]) {
			b.WriteString(line[at:c[0]])
			b.WriteString("\x00")
			at = c[1]
		}
		b.WriteString(line[at:])
	}
	return b.String()
}

func sortedCuts(c [][2]int) [][2]int {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j][0] < c[j-1][0]; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
	return c
}
