package embcache

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memhost/memhost/index"
)

func TestCache(t *testing.T) {
	ctx := context.Background()
	c, err := Open(ctx, filepath.Join(t.TempDir(), "embeddings.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Put(ctx, "m", map[string][]float32{"h1": {1, 2}, "h2": {3, 4}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, "m", []string{"h1", "h3"})
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got["h1"], []float32{1, 2}) {
		t.Errorf("Get = %v, %v", got, err)
	}
	if got, _ := c.Get(ctx, "other", []string{"h1"}); len(got) != 0 {
		t.Errorf("another model's vectors returned: %v", got)
	}
}

// TestCacheSize: 1,000 vectors of 384 dimensions take at most 1.5 times
// their size on disk (1.42 now: two rows a page and the index of hashes;
// the first layout took 2.8 times).
func TestCacheSize(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "embeddings.db")
	c, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	vecs := map[string][]float32{}
	for i := range 1000 {
		v := make([]float32, 384)
		for j := range v {
			v[j] = float32(i*384+j) / 1e6
		}
		vecs[fmt.Sprintf("%064x", i)] = v
	}
	if err := c.Put(ctx, "all-MiniLM-L6-v2-Q4_K_M@2ec4cee28a27", vecs); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(path + suffix); err == nil {
			size += fi.Size()
		}
	}
	if data := int64(1000 * 384 * 4); size > data*3/2 {
		t.Errorf("%d bytes on disk for %d bytes of vectors", size, data)
	}
}

// TestCacheUpgrade: a cache of the first layout (a WITHOUT ROWID table,
// embeddings) opens with its vectors, in the new table.
func TestCacheUpgrade(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "embeddings.db")
	db, err := sql.Open(index.DriverName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TABLE embeddings (hash TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL,
			created_at TEXT NOT NULL DEFAULT (datetime('now')), PRIMARY KEY (hash, model)) WITHOUT ROWID`,
		`INSERT INTO embeddings(hash, model, vector) VALUES ('h1', 'm', x'0000803f00000040'), ('h1', 'n', x'00004040')`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	c, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := c.Get(ctx, "m", []string{"h1"}); err != nil || !reflect.DeepEqual(got["h1"], []float32{1, 2}) {
		t.Errorf("Get(m) = %v, %v", got, err)
	}
	if got, err := c.Get(ctx, "n", []string{"h1"}); err != nil || !reflect.DeepEqual(got["h1"], []float32{3}) {
		t.Errorf("Get(n) = %v, %v", got, err)
	}
	var old int
	if err := c.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'embeddings'`).Scan(&old); err != nil || old != 0 {
		t.Errorf("the first layout's table is still there (%d, %v)", old, err)
	}
}
