package markdown

import (
	"reflect"
	"strings"
	"testing"
)

func TestMarkdownLinks(t *testing.T) {
	type L = Link
	md := func(target, heading, alias string) L {
		return L{Target: target, Heading: heading, Alias: alias, Markdown: true, Line: 1}
	}
	embed := func(l L) L { l.Embed = true; return l }
	tests := []struct {
		name, line string
		want       []L
	}{
		{"plain", "See [the page](page.md).", []L{md("page.md", "", "the page")}},
		{"folder and heading", "[x](folder/page.md#Some%20Heading)", []L{md("folder/page.md", "Some Heading", "x")}},
		{"URL-encoded", "[x](Some%20Page.md)", []L{md("Some Page.md", "", "x")}},
		{"UTF-8 encoded", "[x](Caf%C3%A9.md) [y](Café.md)", []L{md("Café.md", "", "x"), md("Café.md", "", "y")}},
		{"relative", "[up](../notes.md) [here](./notes.md)", []L{md("../notes.md", "", "up"), md("./notes.md", "", "here")}},
		{"vault-absolute", "[x](/people/Sarah%20Chen.md)", []L{md("/people/Sarah Chen.md", "", "x")}},
		{"no extension", "[x](Project%20Alpha)", []L{md("Project Alpha", "", "x")}},
		{"angle brackets", "[x](<Some Page.md#Part two>)", []L{md("Some Page.md", "Part two", "x")}},
		{"title", `[x](page.md "The title") [y](b.md 'single') [z](c.md (paren))`, []L{md("page.md", "", "x"), md("b.md", "", "y"), md("c.md", "", "z")}},
		{"balanced parentheses", "[x](notes%20(2026).md) [y](a(b).md)", []L{md("notes (2026).md", "", "x"), md("a(b).md", "", "y")}},
		{"backslash escapes", `[x](a\(b.md) \[not](a link.md) [y](c\_d.md)`, []L{md("a(b.md", "", "x"), md("c_d.md", "", "y")}},
		{"image", "![a chart](images/chart%201.png)", []L{embed(md("images/chart 1.png", "", "a chart"))}},
		{"linked image", "[![alt](img.png)](page.md)", []L{md("page.md", "", "![alt](img.png)"), embed(md("img.png", "", "alt"))}},
		{"nested text brackets", "[a [b] c](x.md)", []L{md("x.md", "", "a [b] c")}},
		{"empty text", "[](x.md)", []L{md("x.md", "", "")}},
		{"block id", "[x](page.md#^abc123)", []L{md("page.md", "^abc123", "x")}},
		{"external", "[a](https://example.org/x.md) [b](http://x) [c](mailto:me@x.org) [d](obsidian://open?vault=v) [e](//host/x.md) [f](file:///tmp/x.md) [g](ftp.example.org/a.md)",
			[]L{md("ftp.example.org/a.md", "", "g")}},
		{"anchor only", "[a](#Heading) [b](#)", nil},
		{"not links", "[a] (b.md) [c]() [d](<e.md) [f](g.md [h](i.md \"t) [j](a b.md)", nil},
		{"inline code", "`[a](b.md)` and ``[c](`d`.md)`` but [e](f.md)", []L{md("f.md", "", "e")}},
		{"malformed escape kept", "[x](50%25%zz.md)", []L{md("50%25%zz.md", "", "x")}},
		{"inside a wikilink", "[[page|see [x](y.md)]] [[a]](b.md)", nil},
		{"text holds a wikilink", "[see [[a]]](b.md)", []L{md("b.md", "", "see [[a]]")}},
		{"wikilink in the destination", "[x](a[[b]].md) [y](c.md)", []L{md("c.md", "", "y")}},
		{"code span over the destination", "[x](`) [y](c.md)`", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MarkdownLinks([]string{tt.line})
			for i, l := range got {
				if !strings.HasPrefix(tt.line[l.Start:], "[") || !strings.HasSuffix(tt.line[:l.End], ")") || l.PathStart < l.Start || l.PathEnd > l.End || l.PathStart > l.PathEnd {
					t.Fatalf("link %+v: offsets do not frame it in %q", l, tt.line)
				}
				got[i].Start, got[i].End, got[i].PathStart, got[i].PathEnd = 0, 0, 0, 0
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("MarkdownLinks(%q)\ngot  %+v\nwant %+v", tt.line, got, tt.want)
			}
		})
	}
}

func TestLinksBothKinds(t *testing.T) {
	page := strings.Join([]string{
		"---",
		"related: \"[x](in-frontmatter.md)\"",
		"---",
		"[b](b.md) then [[a]] then ![c](c.png)",
		"```",
		"[fenced](f.md)",
		"```",
	}, "\n")
	var got []string
	for _, l := range Links(Lines(page)) {
		got = append(got, l.Target)
	}
	if want := []string{"b.md", "a", "c.png"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Links = %q, want %q in the order written", got, want)
	}
}

func TestEncodePath(t *testing.T) {
	for _, tt := range []struct {
		path, old string
		angle     bool
		want      string
	}{
		{"people/Sarah Chen.md", "Sarah%20Chen.md", false, "people/Sarah%20Chen.md"},
		{"people/Sarah Chen.md", "x.md", false, "people/Sarah%20Chen.md"}, // a space cannot stay raw
		{"people/Sarah Chen.md", "Sarah Chen.md", true, "people/Sarah Chen.md"},
		{"Café (2).md", "Caf%C3%A9.md", false, "Caf%C3%A9%20%282%29.md"},
		{"Café (2).md", "Café.md", false, "Café%20%282%29.md"},
		{"a#b:c%d<e>.md", "", false, "a%23b%3Ac%25d%3Ce%3E.md"},
	} {
		got := EncodePath(tt.path, tt.old, tt.angle)
		if got != tt.want {
			t.Errorf("EncodePath(%q, %q, %v) = %q, want %q", tt.path, tt.old, tt.angle, got, tt.want)
		}
		dest := got
		if tt.angle {
			dest = "<" + got + ">"
		}
		if ls := MarkdownLinks([]string{"[x](" + dest + ")"}); len(ls) != 1 || ls[0].Target != tt.path {
			t.Errorf("%q reads back as %+v, want %q", dest, ls, tt.path)
		}
	}
}
