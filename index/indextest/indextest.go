// Package indextest has what the tests of the packages over the index
// share: a fresh index in a test's folder, pages to apply to it, and the
// paths of hits. (The index's own tests have their copies: they cannot
// import this package, which imports theirs.)
package indextest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/memhost/memhost/index"
)

// Open opens a new index in t's temporary folder, closed when t ends.
func Open(t testing.TB) *index.DB {
	t.Helper()
	db, err := index.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Page makes an update of a notebook page with one chunk per text.
func Page(path string, texts ...string) index.Update {
	u := index.Update{File: index.File{Path: path, Source: "notebook", Hash: "h-" + path, Mtime: time.Unix(1, 0), Size: 1, IndexedAt: time.Unix(2, 0)}}
	for i, t := range texts {
		u.Chunks = append(u.Chunks, index.Chunk{Heading: "## " + path, StartLine: i + 1, EndLine: i + 1, Text: t, Hash: t})
	}
	return u
}

// Paths are the paths of hits, in their order.
func Paths(hits []index.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Path)
	}
	return out
}
