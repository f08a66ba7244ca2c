package vectors

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/index/vaultrows"
)

// BenchmarkSearchScoped: the vector half of a recall limited by a tag or a
// folder (recall --tag, --path), k = 60, over 30k notebook chunks of 384
// dimensions (3,000 pages of 10, in three folders), against the same search unlimited. A tag
// on 30 pages (300 chunks) is compared chunk by chunk; one on 300 pages
// (3,000 chunks) and a folder of 10,000 chunks run the KNN (or the bits)
// with the allowed ids.
func BenchmarkSearchScoped(b *testing.B) {
	ctx := context.Background()
	db := vecDB(b, "scoped-folders-30000-384", 384, func(add func(index.Update)) {
		for i := range 3000 {
			u := page(fmt.Sprintf("notes/f%d/p%04d.md", i%3, i))
			for j := range 10 {
				text := fmt.Sprintf("p%04d %d", i, j)
				u.Chunks = append(u.Chunks, index.Chunk{StartLine: j + 1, EndLine: j + 1, Text: text, Hash: text})
			}
			add(u)
		}
	})
	for i := range 3000 {
		for _, tag := range []string{"every10", "every100"} {
			if (tag == "every10" && i%10 == 0) || (tag == "every100" && i%100 == 0) {
				if _, err := db.SQL().Exec(`INSERT OR IGNORE INTO page_tags(tag, file_path) VALUES (?, ?)`, tag, fmt.Sprintf("notes/f%d/p%04d.md", i%3, i)); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	r := rand.New(rand.NewSource(5))
	for _, tt := range []struct {
		name string
		sc   vaultrows.Scope
	}{
		{"all", vaultrows.Scope{}},
		{"tag-300-chunks", vaultrows.Scope{Tags: []string{"every100"}}},
		{"tag-3000-chunks", vaultrows.Scope{Tags: []string{"every10"}}},
		{"folder-10000-chunks", vaultrows.Scope{Prefix: "notes/f0/"}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				hits, err := db.SearchIn(ctx, randomUnit(r, 384), 60, []string{"notebook"}, tt.sc)
				if err != nil || len(hits) != 60 {
					b.Fatalf("%d hits, %v", len(hits), err)
				}
			}
		})
	}
}
