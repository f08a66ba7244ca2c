package vectors

import (
	"context"
	"testing"

	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/index/indextest"
)

// vdb names DB where testDB embeds it, beside the index.DB of the same
// name: Apply comes from the index, Pending, Put and the rest from the
// vector side (both have a Search: write db.vdb.Search for the vectors').
type vdb = DB

// testDB is an index database with its vector side.
type testDB struct {
	*index.DB
	*vdb
}

func withVectors(idx *index.DB) testDB { return testDB{idx, New(idx)} }

func open(t *testing.T) testDB { return withVectors(indextest.Open(t)) }

var (
	page  = indextest.Page
	paths = indextest.Paths
)

// openAt opens the index at path with its vector side.
func openAt(ctx context.Context, path string) (testDB, error) {
	idx, err := index.Open(ctx, path)
	if err != nil {
		return testDB{}, err
	}
	return withVectors(idx), nil
}
