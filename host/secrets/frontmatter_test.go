package secrets

import (
	"testing"

	"github.com/memhost/memhost/host/markdown/markdowntest"
)

// TestFrontmatterCases: the YAML that quoteFrontmatter edits is the
// frontmatter host/markdown reads.
func TestFrontmatterCases(t *testing.T) {
	for _, c := range markdowntest.FrontmatterCases {
		start, end, ok := frontmatter(c.Page)
		if ok != (c.Lines > 0) || c.Page[start:end] != c.YAML {
			t.Errorf("%s: frontmatter(%q) = %d, %d, %v (%q), want %q", c.Name, c.Page, start, end, ok, c.Page[start:end], c.YAML)
		}
	}
}
