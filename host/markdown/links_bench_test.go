package markdown

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkLinks reads the links of a 12 KB page of 200 lines, each with
// a wikilink, a markdown link, an external URL and inline code: what
// indexing a page costs for its links.
func BenchmarkLinks(b *testing.B) {
	var sb strings.Builder
	for i := range 200 {
		fmt.Fprintf(&sb, "- Line %d sees [[Page %d#Part|alias]] and [the notes](../notes/Some%%20Page%%20%d.md#h) and [web](https://example.org/%d) `code [x](y.md)`\n", i, i, i, i)
	}
	lines := Lines(sb.String())
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if n := len(Links(lines)); n != 400 {
			b.Fatalf("%d links", n)
		}
	}
}
