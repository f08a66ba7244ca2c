package indexer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFreshWatching: the stale check of a recall while a watcher
// runs and nothing changed, with the cookie round trip (the default) and
// without it (CookieDir "", events already read only), over 1,000 pages.
func BenchmarkFreshWatching(b *testing.B) {
	for _, tc := range []struct {
		name   string
		cookie bool
	}{{"cookie", true}, {"channel-only", false}} {
		b.Run(tc.name, func(b *testing.B) {
			x := newIndexer(b)
			if !tc.cookie {
				x.opts.CookieDir = ""
			}
			for i := range 1000 {
				os.WriteFile(filepath.Join(x.opts.Notebook.Root(), "knowledge", fmt.Sprintf("p%04d.md", i)), []byte(fmt.Sprintf("# Page %d\nsome text %d\n", i, i)), 0o644)
			}
			startWatch(b, x)
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				if _, err := x.Fresh(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
