package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost/host/config"
)

// BenchmarkCatalogue is what remember --auto reads before asking the
// generator: the pages of lists/, reference/ and knowledge/ with their
// sections and tags, here 200 pages of 10 sections (the cap).
func BenchmarkCatalogue(b *testing.B) {
	h, err := Open(context.Background(), Options{Home: b.TempDir(), Config: config.Default()})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	for i := range 200 {
		var page strings.Builder
		fmt.Fprintf(&page, "---\ntags: [t%d, people]\n---\n# Page %d\n", i%7, i)
		for s := range 10 {
			fmt.Fprintf(&page, "\n## Section %d\n- an entry of some length about section %d\n- another\n", s, s)
		}
		cat := []string{"lists", "reference", "knowledge"}[i%3]
		p := filepath.Join(h.NotebookDir(), cat, fmt.Sprintf("page-%d.md", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(page.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var size int
	for b.Loop() {
		pages, _ := h.catalogue()
		size = len(pages)
	}
	b.ReportMetric(float64(size), "prompt-bytes")
}
