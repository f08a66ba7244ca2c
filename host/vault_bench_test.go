package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memhost/memhost"
)

// vaultNotebook writes n small pages in 100 folders, each with frontmatter
// (an alias, a tag), three wikilinks (by name, by path, to nothing) and an
// inline tag, and returns the notebook folder.
func vaultNotebook(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	for i := range n {
		rel := fmt.Sprintf("f%02d/page %05d.md", i%100, i)
		text := fmt.Sprintf("---\naliases: [alias %d]\ntags: [t%d]\n---\n# Page %d\n\nSee [[page %05d]], [[f%02d/page %05d|there]] and [[missing %d]]. #inline%d\n",
			i, i%10, i, (i*7+1)%n, (i*3)%100, (i*3)%n, i, i%5)
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkVault10k measures, on 10,000 pages holding 30,000 links, the
// calls that resolve every link: a page's links (after the freshness
// check), status (which counts unresolved links, kept while no page
// changes), the count alone resolved and kept, status after a write,
// and a keyword recall
// filtered by a tag and by a folder against the same recall unfiltered.
func BenchmarkVault10k(b *testing.B) {
	ctx := context.Background()
	h := benchHost(b, vaultNotebook(b, 10000), true)
	start := time.Now()
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		b.Fatal(err)
	}
	b.Logf("sync of 10k pages: %v", time.Since(start))
	b.Run("links", func(b *testing.B) {
		for b.Loop() {
			resp, err := h.Links(ctx, memhost.LinksRequest{Path: "f07/page 00007.md"})
			if err != nil || len(resp.Out) != 3 || len(resp.Back) == 0 {
				b.Fatalf("%+v, %v", resp, err)
			}
		}
	})
	b.Run("unresolved", func(b *testing.B) {
		for b.Loop() {
			resp, err := h.Links(ctx, memhost.LinksRequest{Unresolved: true})
			if err != nil || len(resp.Unresolved) != 10000 {
				b.Fatalf("%d, %v", len(resp.Unresolved), err)
			}
		}
	})
	b.Run("status", func(b *testing.B) {
		for b.Loop() {
			st, err := h.Status(ctx, memhost.StatusRequest{})
			if err != nil || st.UnresolvedLinks != 10000 {
				b.Fatalf("%d, %v", st.UnresolvedLinks, err)
			}
		}
	})
	// Status as it was before the count was kept: every call walks the
	// notebook for attachments and resolves every link.
	b.Run("status-resolving", func(b *testing.B) {
		for b.Loop() {
			h.impl.ForgetKept()
			st, err := h.Status(ctx, memhost.StatusRequest{})
			if err != nil || st.UnresolvedLinks != 10000 {
				b.Fatalf("%d, %v", st.UnresolvedLinks, err)
			}
		}
	})
	// The count alone: resolved anew (what status did on every call
	// before the count was kept), and kept (nothing changed since).
	b.Run("count-resolved", func(b *testing.B) {
		for b.Loop() {
			h.impl.ForgetKept()
			list, err := h.impl.UnresolvedLinks(ctx)
			if err != nil || len(list) != 10000 {
				b.Fatalf("%d, %v", len(list), err)
			}
		}
	})
	b.Run("count-kept", func(b *testing.B) {
		for b.Loop() {
			list, err := h.impl.UnresolvedLinks(ctx)
			if err != nil || len(list) != 10000 {
				b.Fatalf("%d, %v", len(list), err)
			}
		}
	})
	// After a page is written the count is resolved once again.
	b.Run("status-after-write", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := h.Write(ctx, memhost.WriteRequest{Path: "f00/page 00000.md", Text: fmt.Sprintf("write %d", i)}); err != nil {
				b.Fatal(err)
			}
			st, err := h.Status(ctx, memhost.StatusRequest{})
			if err != nil || st.UnresolvedLinks != 10000 {
				b.Fatalf("%d, %v", st.UnresolvedLinks, err)
			}
		}
	})
	for _, tt := range []struct {
		name string
		req  memhost.RecallRequest
	}{
		{"recall", memhost.RecallRequest{Query: "page see"}},
		{"recall-tag", memhost.RecallRequest{Query: "page see", Tags: []string{"t3"}}},
		{"recall-path", memhost.RecallRequest{Query: "page see", Path: "f42/"}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := h.Recall(ctx, tt.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
