package route

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost/host/notebook"
)

// BenchmarkCatalogue is what remember --auto reads before asking the
// generator: the pages of lists/, reference/ and knowledge/ with their
// sections and tags, here 200 pages of 10 sections (the cap).
func BenchmarkCatalogue(b *testing.B) {
	root := b.TempDir()
	nb, err := notebook.Open(root, filepath.Join(b.TempDir(), "notebook.lock"))
	if err != nil {
		b.Fatal(err)
	}
	defer nb.Close()
	for i := range 200 {
		var page strings.Builder
		fmt.Fprintf(&page, "---\ntags: [t%d, people]\n---\n# Page %d\n", i%7, i)
		for s := range 10 {
			fmt.Fprintf(&page, "\n## Section %d\n- an entry of some length about section %d\n- another\n", s, s)
		}
		cat := []string{"lists", "reference", "knowledge"}[i%3]
		p := filepath.Join(root, cat, fmt.Sprintf("page-%d.md", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(page.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var size int
	for b.Loop() {
		pages, _ := catalogue(nb)
		size = len(pages)
	}
	b.ReportMetric(float64(size), "prompt-bytes")
}
