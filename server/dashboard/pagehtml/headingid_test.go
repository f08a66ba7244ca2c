package pagehtml

import (
	"context"
	"html"
	"net/url"
	"regexp"
	"slices"
	"testing"
)

var (
	headingIDAttr = regexp.MustCompile(`<h[1-6] id="([^"]*)"`)
	hrefAttr      = regexp.MustCompile(`href="([^"]*)"`)
)

// TestSectionLinksFindHeadings: each [[p#heading]] link points at the id
// the heading of that name is rendered with, for headings that are
// repeated, have punctuation or are in a script without ASCII letters.
func TestSectionLinksFindHeadings(t *testing.T) {
	headings := []string{"Café", "Café", "Hello, World!", "日本語", "Ünïcode_and-dashes 2"}
	resolve := func(target string) (string, bool) { return target + ".md", target == "p" }
	md := NewMarkdown(resolve)
	ctx := context.Background()

	page := ""
	for _, h := range headings {
		page += "## " + h + "\n\ntext\n\n"
	}
	out, err := RenderHTML(ctx, md, resolve, []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range headingIDAttr.FindAllStringSubmatch(out, -1) {
		ids = append(ids, html.UnescapeString(m[1]))
	}
	if len(ids) != len(headings) {
		t.Fatalf("%d heading ids in %s", len(ids), out)
	}
	blocks, err := RenderBlocks(ctx, md, resolve, []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	var blockIDs []string
	for _, b := range blocks {
		if b.HeadingID != "" {
			blockIDs = append(blockIDs, b.HeadingID)
		}
	}
	if !slices.Equal(blockIDs, ids) {
		t.Fatalf("RenderBlocks' heading ids %q, RenderHTML's %q", blockIDs, ids)
	}

	links := ""
	for _, h := range headings {
		links += "[[p#" + h + "]] [[#" + h + "]]\n"
	}
	out, err = RenderHTML(ctx, md, resolve, []byte(links))
	if err != nil {
		t.Fatal(err)
	}
	hrefs := hrefAttr.FindAllStringSubmatch(out, -1)
	if len(hrefs) != 2*len(headings) {
		t.Fatalf("%d links in %s", len(hrefs), out)
	}
	for _, m := range hrefs {
		u, err := url.Parse(html.UnescapeString(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(ids, u.Fragment) {
			t.Errorf("link %s points at #%s; the headings' ids are %q", m[1], u.Fragment, ids)
		}
	}
}
