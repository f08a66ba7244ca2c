package facts

import (
	"bytes"
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/index/factrows"
)

// TestRoundTripThroughIndex: a page memhost wrote, parsed into the index
// and read back from it, renders to the same bytes. So the facts tables
// hold everything the pages say, and rebuilding them loses nothing.
func TestRoundTripThroughIndex(t *testing.T) {
	ctx := context.Background()
	db, err := index.Open(ctx, filepath.Join(t.TempDir(), "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := rand.New(rand.NewPCG(3, 4))
	pages := map[string][]byte{}
	for i := range 200 {
		e := randomEntity(r)
		page := Render(e)
		p := Parse(e.Slug, page)
		rel := Path(e.Slug)
		pages[e.Slug] = page
		u := index.Update{File: index.File{Path: rel, Source: "notebook", Hash: string(rune('a' + i%26)), Mtime: time.Now(), IndexedAt: time.Now()}, Entity: Rows(p.Entity)}
		if err := db.Apply(ctx, index.Batch{Upserts: []index.Update{u}}); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := db.Facts().Entities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != len(pages) {
		t.Fatalf("%d entities in the index, want %d", len(ents), len(pages))
	}
	for _, er := range ents {
		rows, err := db.Facts().List(ctx, factrows.Query{Entity: er.Slug, History: true})
		if err != nil {
			t.Fatal(err)
		}
		got := Render(FromRows(er, rows))
		if want := pages[er.Slug]; !bytes.Equal(got, want) {
			t.Fatalf("%s from the index:\n%s\nwant\n%s", er.Slug, got, want)
		}
	}
	// Removing a page removes its rows.
	var some string
	for s := range pages {
		some = s
		break
	}
	if err := db.Apply(ctx, index.Batch{Removes: []string{Path(some)}}); err != nil {
		t.Fatal(err)
	}
	if rows, _ := db.Facts().List(ctx, factrows.Query{Entity: some, History: true}); len(rows) != 0 {
		t.Fatalf("%d facts left after removing %s", len(rows), Path(some))
	}
	if rel, _ := db.Facts().Relations(ctx, some, false); len(rel) != 0 {
		t.Fatalf("%d relations left after removing %s", len(rel), Path(some))
	}
}
