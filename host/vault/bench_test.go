package vault

import (
	"fmt"
	"testing"
)

// notebook10k is 10,000 pages in 100 folders, three links each: to a page
// by name, by path, and to nothing.
func notebook10k() ([]Page, [][2]string) {
	pages := make([]Page, 0, 10000)
	var links [][2]string
	for i := range 10000 {
		p := fmt.Sprintf("f%02d/page %05d.md", i%100, i)
		pages = append(pages, Page{Path: p, Aliases: []string{fmt.Sprintf("alias %d", i)}})
		links = append(links,
			[2]string{p, fmt.Sprintf("page %05d", (i*7+1)%10000)},
			[2]string{p, fmt.Sprintf("f%02d/page %05d", (i*3)%100, (i*3)%10000)},
			[2]string{p, fmt.Sprintf("missing %d", i)})
	}
	return pages, links
}

// BenchmarkResolve10k builds the resolver over 10k pages and resolves
// their 30k links: what links, status and mv do per call.
func BenchmarkResolve10k(b *testing.B) {
	pages, links := notebook10k()
	b.ReportAllocs()
	for b.Loop() {
		r := NewResolver(pages, nil)
		n := 0
		for _, l := range links {
			if _, ok := r.Resolve(l[0], l[1]); ok {
				n++
			}
		}
		if n != 20000 {
			b.Fatalf("%d resolved", n)
		}
	}
}
