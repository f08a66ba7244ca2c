package host

import (
	"context"
	"reflect"
	"testing"

	"github.com/memhost/memhost"
)

// TestMarkdownLinks: markdown links to vault files are links as wikilinks
// are: out and back in memhost links (URL-decoded, relative to the
// linking page's folder or from the root), unresolved when they find
// nothing (external URLs and #anchors are no links), and memhost mv
// rewrites them in another folder in the style they were written,
// leaving every other byte of the page as it was; the moved page's own
// relative links are rewritten to find from its new folder what they
// found before.
func TestMarkdownLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	writePage(t, h, "knowledge/people/Sarah Chen.md", "# Sarah\nWorks on [the project](../../projects/Alpha.md#Goals) with [[Bob]].\n")
	writePage(t, h, "projects/Alpha.md", "# Alpha\n")
	writePage(t, h, "projects/notes.md", "---\nsee: \"[x](../knowledge/people/Sarah%20Chen.md)\"\n---\n"+
		"# Notes\nAsk [Sarah](../knowledge/people/Sarah%20Chen.md#Contact \"her page\"), or [her](</knowledge/people/Sarah Chen.md>),\n"+
		"or [by name](Sarah%20Chen.md). ![chart](img/chart%201.png) [web](https://example.org/Sarah%20Chen.md) [up](#Notes)\n"+
		"`[code](Sarah%20Chen.md)` and [gone](../missing%20page.md).\r\n")
	writePage(t, h, "Bob.md", "# Bob\n")

	links, err := h.Links(ctx, memhost.LinksRequest{Path: "knowledge/people/Sarah Chen.md"})
	if err != nil {
		t.Fatal(err)
	}
	var back []string
	for _, l := range links.Back {
		if !l.Markdown || l.Page != "projects/notes.md" {
			t.Fatalf("back link %+v", l)
		}
		back = append(back, l.Target)
	}
	if want := []string{"../knowledge/people/Sarah Chen.md", "/knowledge/people/Sarah Chen.md", "Sarah Chen.md"}; !reflect.DeepEqual(back, want) {
		t.Fatalf("back links %q, want %q", back, want)
	}
	if len(links.Out) != 2 || links.Out[0].Page != "projects/Alpha.md" || links.Out[0].Heading != "Goals" || links.Out[0].Alias != "the project" || !links.Out[0].Markdown || links.Out[1].Page != "Bob.md" {
		t.Fatalf("out links %+v", links.Out)
	}
	un, err := h.Links(ctx, memhost.LinksRequest{Unresolved: true})
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, l := range un.Unresolved {
		missing = append(missing, l.Target)
	}
	if want := []string{"img/chart 1.png", "../missing page.md"}; !reflect.DeepEqual(missing, want) {
		t.Fatalf("unresolved %q, want %q", missing, want)
	}
	if st, err := h.Status(ctx, memhost.StatusRequest{}); err != nil || st.UnresolvedLinks != 2 {
		t.Fatalf("status counts %d unresolved, %v", st.UnresolvedLinks, err)
	}

	bob := readPage(t, h, "Bob.md")
	resp, err := h.Move(ctx, memhost.MoveRequest{From: "knowledge/people/Sarah Chen.md", To: "team/Sarah Chen.md"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []memhost.LinkUpdate{{Path: "team/Sarah Chen.md", Links: 1}, {Path: "projects/notes.md", Links: 2}}; !reflect.DeepEqual(resp.Updated, want) {
		t.Fatalf("updated %+v, want %+v", resp.Updated, want)
	}
	// Relative stays relative (from projects/), from the root stays from
	// the root; the link by name still finds her; the frontmatter, the
	// code span, the title, CRLF: as they were.
	want := "---\nsee: \"[x](../knowledge/people/Sarah%20Chen.md)\"\n---\n" +
		"# Notes\nAsk [Sarah](../team/Sarah%20Chen.md#Contact \"her page\"), or [her](</team/Sarah Chen.md>),\n" +
		"or [by name](Sarah%20Chen.md). ![chart](img/chart%201.png) [web](https://example.org/Sarah%20Chen.md) [up](#Notes)\n" +
		"`[code](Sarah%20Chen.md)` and [gone](../missing%20page.md).\r\n"
	if got := readPage(t, h, "projects/notes.md"); got != want {
		t.Fatalf("notes.md =\n%q\nwant\n%q", got, want)
	}
	// Her own relative link finds the project from her new folder.
	if got := readPage(t, h, "team/Sarah Chen.md"); got != "# Sarah\nWorks on [the project](../projects/Alpha.md#Goals) with [[Bob]].\n" {
		t.Fatalf("the moved page = %q", got)
	}
	if readPage(t, h, "Bob.md") != bob {
		t.Fatal("a page without links to her changed")
	}
	links, err = h.Links(ctx, memhost.LinksRequest{Path: "team/Sarah Chen.md"})
	if err != nil || len(links.Back) != 3 || len(links.Out) != 2 || !links.Out[0].Resolved {
		t.Fatalf("links after the move: %+v, %v", links, err)
	}
}
