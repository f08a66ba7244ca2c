package pagehtml

import (
	"strings"
	"testing"

	"github.com/memhost/memhost/host/markdown/markdowntest"
)

// TestFrontmatterCases: the properties table is drawn from the
// frontmatter host/markdown reads, and the markdown below it is the rest
// of the page, byte for byte.
func TestFrontmatterCases(t *testing.T) {
	for _, c := range markdowntest.FrontmatterCases {
		p, body := frontmatter([]byte(c.Page))
		lines := 0
		if p != nil {
			lines = p.lines
		}
		if lines != c.Lines {
			t.Errorf("%s: frontmatter(%q) takes %d lines, want %d", c.Name, c.Page, lines, c.Lines)
		}
		if len(body) != len(c.Page) || !strings.HasSuffix(string(body), c.Body) {
			t.Errorf("%s: frontmatter(%q) leaves %q to render, want it to end in %q", c.Name, c.Page, body, c.Body)
		}
		if blank := string(body[:len(body)-len(c.Body)]); strings.Trim(blank, " \n") != "" {
			t.Errorf("%s: frontmatter(%q) leaves %q of the block to render", c.Name, c.Page, blank)
		}
	}
}
