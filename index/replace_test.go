package index

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memhost/memhost/internal/damage"
)

// TestDeletedWhileOpen: a person deletes memory.db while a process (a
// watcher) has it open; another process opening the path gets a fresh
// index, and the first one follows it to the new file instead of failing
// with "disk I/O error" or writing into the deleted one.
func TestDeletedWhileOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Apply(ctx, Batch{Upserts: []Update{page("a.md", "alpha")}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open after delete: %v", err)
	}
	defer b.Close()
	if err := b.Apply(ctx, Batch{Upserts: []Update{page("b.md", "beta")}}); err != nil {
		t.Fatalf("write after delete: %v", err)
	}
	if err := a.Apply(ctx, Batch{Upserts: []Update{page("c.md", "gamma")}}); err != nil {
		t.Fatalf("the first process writing after the delete: %v", err)
	}
	for name, db := range map[string]*DB{"a": a, "b": b} {
		files, err := db.Files(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, ok := files["a.md"]; ok || files["b.md"].Path == "" || files["c.md"].Path == "" {
			t.Fatalf("%s sees %v, want b.md and c.md in the new index", name, files)
		}
	}
}

// TestMoveAsideCorrupt: an index corrupted mid-file fails to open with an
// error IsCorrupt recognises; MoveAside and Replace move it aside under a name of its own
// (two in one second do not overwrite each other) and starts afresh.
func TestMoveAsideCorrupt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.db")
	var asides []string
	defer func(n int64) { quickCheckMax = n }(quickCheckMax)
	for round := range 2 {
		// Round 0: Open's quick check finds it; round 1: a query does.
		quickCheckMax = []int64{1 << 30, 0}[round]
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		var pages []Update
		for i := range 300 {
			pages = append(pages, page(filepath.Join("p", strings.Repeat("x", i%7), string(rune('a'+i%26))+".md")+string(rune('0'+round)), strings.Repeat("lorem ipsum dolor ", 50)))
		}
		if err := db.Apply(ctx, Batch{Upserts: pages}); err != nil {
			t.Fatal(err)
		}
		db.Close()
		damage.MiddleHalf(t, path)
		db, err = Open(ctx, path)
		if round == 0 && !IsCorrupt(err) {
			t.Fatalf("round %d: corrupt index gave %v", round, err)
		}
		if db != nil { // where the damage is, a query may or may not meet it
			aside, err := db.Replace(ctx, db.Generation())
			if err != nil {
				t.Fatal(err)
			}
			asides = append(asides, aside)
			if files, err := db.Files(ctx); err != nil || len(files) != 0 {
				t.Fatalf("after Replace: %v, %v", files, err)
			}
			db.Close()
		} else {
			aside, err := MoveAside(path)
			if err != nil {
				t.Fatal(err)
			}
			asides = append(asides, aside)
		}
	}
	if len(asides) != 2 || asides[0] == asides[1] {
		t.Fatalf("moved aside to %v", asides)
	}
	for _, a := range asides {
		if _, err := os.Stat(a); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkHandle: what following the file at the path costs each query
// (a stat and a read lock).
func BenchmarkHandle(b *testing.B) {
	db, err := Open(context.Background(), filepath.Join(b.TempDir(), "memory.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for b.Loop() {
		db.SQL()
	}
}

// TestReplaceOnce: two requests that met the same damage both ask for a
// Replace; the second finds the file replaced since and leaves the new
// index alone (it used to move the fresh index aside too).
func TestReplaceOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seen := db.Generation()
	first, err := db.Replace(ctx, seen)
	if err != nil || first == "" {
		t.Fatalf("first Replace = %q, %v", first, err)
	}
	if err := db.Apply(ctx, Batch{Upserts: []Update{page("a.md", "alpha")}}); err != nil {
		t.Fatal(err)
	}
	second, err := db.Replace(ctx, seen)
	if err != nil || second != "" {
		t.Fatalf("second Replace = %q, %v; want nothing done", second, err)
	}
	if files, err := db.Files(ctx); err != nil || files["a.md"].Path == "" {
		t.Fatalf("the new index lost its rows: %v, %v", files, err)
	}
}

// TestOpenFindsCorruption writes garbage into the middle of a small index
// file, as a failing disk would: Open checks it whole and says so.
func TestOpenFindsCorruption(t *testing.T) {
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
	damage.MiddleHalf(t, path)
	if _, err := Open(ctx, path); !IsCorrupt(err) {
		t.Fatalf("Open's quick check missed the damage: %v", err)
	}
}
