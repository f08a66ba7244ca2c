package markdown

import (
	"strings"
	"testing"

	"github.com/memhost/memhost/host/markdown/markdowntest"
)

// TestFrontmatterCases: FrontmatterLines (on lines with and without
// their endings), FrontmatterSpan, SplitFrontmatter and ParseFrontmatter
// agree on where each page's frontmatter ends.
func TestFrontmatterCases(t *testing.T) {
	for _, c := range markdowntest.FrontmatterCases {
		if got := FrontmatterLines(Lines(c.Page)); got != c.Lines {
			t.Errorf("%s: FrontmatterLines(Lines(%q)) = %d, want %d", c.Name, c.Page, got, c.Lines)
		}
		if got := FrontmatterLines(strings.SplitAfter(c.Page, "\n")); got != c.Lines {
			t.Errorf("%s: FrontmatterLines of %q's lines with their endings = %d, want %d", c.Name, c.Page, got, c.Lines)
		}
		yamlStart, yamlEnd, bodyStart, ok := FrontmatterSpan(c.Page)
		if ok != (c.Lines > 0) || c.Page[yamlStart:yamlEnd] != c.YAML || c.Page[bodyStart:] != c.Body {
			t.Errorf("%s: FrontmatterSpan(%q) = %d, %d, %d, %v: YAML %q, body %q; want %q, %q",
				c.Name, c.Page, yamlStart, yamlEnd, bodyStart, ok, c.Page[yamlStart:yamlEnd], c.Page[bodyStart:], c.YAML, c.Body)
		}
		if front, body := SplitFrontmatter(c.Page); body != c.Body || front+body != c.Page {
			t.Errorf("%s: SplitFrontmatter(%q) = %q, %q; want the body %q", c.Name, c.Page, front, body, c.Body)
		}
		if fm, err := ParseFrontmatter(c.Page); err != nil || fm.Lines != c.Lines {
			t.Errorf("%s: ParseFrontmatter(%q) = %d lines, %v; want %d", c.Name, c.Page, fm.Lines, err, c.Lines)
		}
	}
}
