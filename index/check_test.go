package index

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestDrift(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if err := db.Apply(ctx, Batch{Upserts: []Update{page("a.md", "alpha one", "alpha two", "alpha three"), page("b.md", "beta")}}); err != nil {
		t.Fatal(err)
	}
	check := func(want Drift) {
		t.Helper()
		got, err := db.Drift(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("Drift() = %+v, want %+v", got, want)
		}
	}
	check(Drift{})
	if problems, err := db.QuickCheck(ctx, 10); err != nil || problems != nil {
		t.Fatalf("QuickCheck of a sound index = %q, %v", problems, err)
	}
	// No model yet: a chunk marked embedded has no vector.
	exec(t, db, `UPDATE chunks SET embedded = 1 WHERE text = 'beta'`)
	check(Drift{EmbeddedWithoutVector: 1})
	exec(t, db, `UPDATE chunks SET embedded = 0`)

	if _, err := db.SetVectorModel(ctx, VectorModel{Provider: "p", Model: "m", Dimensions: 4}); err != nil {
		t.Fatal(err)
	}
	ids := chunkIDs(t, db)
	vecs := []ChunkVector{}
	for _, id := range ids {
		vecs = append(vecs, ChunkVector{ID: id, Vector: []float32{1, 0, 0, float32(id % 7)}})
	}
	if _, err := db.PutVectors(ctx, "m", vecs); err != nil {
		t.Fatal(err)
	}
	check(Drift{})

	exec(t, db, `DELETE FROM chunks_fts WHERE rowid = ?`, ids[0])
	exec(t, db, `DELETE FROM chunks_vec WHERE chunk_id = ?`, ids[1])                      // embedded, no vector
	exec(t, db, `DELETE FROM chunks WHERE id = ?`, ids[2])                                // FTS row, vector and bits left
	exec(t, db, `INSERT INTO chunks_fts(rowid, text) VALUES (?, 'orphan')`, int64(1)<<39) // FTS row of no chunk
	check(Drift{ChunksWithoutFTS: 1, FTSWithoutChunk: 2, VectorsWithoutChunk: 2, EmbeddedWithoutVector: 1})
}

func exec(t *testing.T, db *DB, q string, args ...any) {
	t.Helper()
	if _, err := db.db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func chunkIDs(t *testing.T, db *DB) []int64 {
	t.Helper()
	rows, err := db.db.Query(`SELECT id FROM chunks ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		ids = append(ids, id)
	}
	return ids
}

// TestQuickCheckFindsCorruption writes garbage into the middle of a real
// index file, as a failing disk would.
func TestQuickCheckFindsCorruption(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var pages []Update
	// Enough pages that the middle half of the file is past the schema's
	// pages (the facts tables made it longer), which Open reads.
	for i := range 1000 {
		pages = append(pages, page(filepath.Join("p", string(rune('a'+i%26)), "x.md")+strconv.Itoa(i/26), "some words to fill the pages of the database with", "and more words, different ones, number", string(rune('A'+i%26))))
	}
	if err := db.Apply(ctx, Batch{Upserts: pages}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	Corrupt(t, path)
	if _, err := Open(ctx, path); !IsCorrupt(err) {
		t.Fatalf("Open's quick check missed the damage: %v", err)
	}
	// A larger index is not checked at open; QuickCheck finds it.
	defer func(n int64) { quickCheckMax = n }(quickCheckMax)
	quickCheckMax = 0
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("the header is intact, so Open works: %v", err)
	}
	defer db.Close()
	problems, err := db.QuickCheck(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) == 0 {
		t.Fatal("QuickCheck found nothing in a corrupt index")
	}
}

// Corrupt overwrites the middle half of the file at path with garbage
// (its first page, the header, stays intact).
func Corrupt(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	if fi.Size() < 5*4096 {
		t.Fatalf("%s is too small (%d bytes) to corrupt", path, fi.Size())
	}
	junk := make([]byte, fi.Size()/2)
	for i := range junk {
		junk[i] = byte(i*31 + 7)
	}
	if _, err := f.WriteAt(junk, fi.Size()/4); err != nil {
		t.Fatal(err)
	}
}
