package vault

import (
	"strings"
	"testing"

	"github.com/memhost/memhost/host/markdown"
)

// TestRewriteMarkdownLinks: a markdown link's path is rewritten in the
// style it was written (escaped, inside <...>, raw UTF-8 or escaped), its
// text, #heading and title kept, and the rest of the line untouched.
func TestRewriteMarkdownLinks(t *testing.T) {
	to := func(nt string) func(markdown.Link) (string, bool) {
		return func(l markdown.Link) (string, bool) { return nt, strings.Contains(l.Target, "Old") }
	}
	tests := []struct {
		name, page, target, want string
	}{
		{"escaped", "See [the old page](Old%20Page.md#Part%20one) now.\n", "../people/New Page.md",
			"See [the old page](../people/New%20Page.md#Part%20one) now.\n"},
		{"plain", "[x](Old.md)", "New.md", "[x](New.md)"},
		{"no extension kept as given", "[x](folder/Old)", "folder/New", "[x](folder/New)"},
		{"angle brackets", "[x](<Old Page.md> \"title\")", "New Page.md", "[x](<New Page.md> \"title\")"},
		{"embed", "![chart](img/Old.png)", "img/New chart.png", "![chart](img/New%20chart.png)"},
		{"UTF-8 escaped stays escaped", "[x](Old%C3%A9.md)", "Né.md", "[x](N%C3%A9.md)"},
		{"UTF-8 raw stays raw", "[x](Oldé.md)", "Né.md", "[x](Né.md)"},
		{"linked image", "[![a](img/Old.png)](Old.md)", "N.md", "[![a](N.md)](N.md)"},
		{"both kinds", "[[Old]] and [x](Old.md) and [[Other]]", "New", "[[New]] and [x](New) and [[Other]]"},
		{"code untouched", "`[x](Old.md)`\n```\n[x](Old.md)\n```\n[x](Old.md)\r\n", "N.md", "`[x](Old.md)`\n```\n[x](Old.md)\n```\n[x](N.md)\r\n"},
		{"frontmatter untouched", "---\nsee: \"[x](Old.md)\"\n---\n[x](Old.md)\n", "N.md", "---\nsee: \"[x](Old.md)\"\n---\n[x](N.md)\n"},
		{"external untouched", "[x](https://h/Old.md) [y](#Old) [z](Old.md)", "N.md", "[x](https://h/Old.md) [y](#Old) [z](N.md)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := RewriteLinks(tt.page, to(tt.target))
			if got != tt.want {
				t.Fatalf("RewriteLinks(%q) = %q, want %q", tt.page, got, tt.want)
			}
			want := 1
			switch tt.name {
			case "linked image", "both kinds":
				want = 2
			}
			if n != want {
				t.Fatalf("%d links rewritten, want %d", n, want)
			}
			// Read back, every rewritten link names the new target.
			for _, l := range markdown.Links(markdown.Lines(got)) {
				if strings.Contains(l.Target, "Old") {
					t.Fatalf("a link still names the old page: %+v", l)
				}
			}
		})
	}
}
