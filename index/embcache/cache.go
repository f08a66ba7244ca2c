// Package embcache is the embedding cache (cache/embeddings.db): vectors
// by chunk text hash and model, outside the index so that a rebuild, or a
// switch of provider and back, embeds nothing twice.
package embcache

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/memhost/memhost/index"
)

// Cache is the embedding cache in cache/embeddings.db: vectors by (chunk
// text hash, model id). It lives outside memory.db so that a rebuild, or a
// switch to another provider and back, re-embeds nothing already embedded.
// It is safe for concurrent use, by several processes too.
type Cache struct {
	db *sql.DB
}

// Open opens or creates the cache at path (its folder must exist).
func Open(ctx context.Context, path string) (*Cache, error) {
	db, err := sql.Open(index.DriverName, "file:"+path+"?_busy_timeout=30000&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	if err := upgrade(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("embedding cache %s: %w", path, err)
	}
	return &Cache{db: db}, nil
}

// The vectors are kept in a table with rowids. The first layout,
// embeddings, was WITHOUT ROWID: a row of such a table must fit a quarter
// of a page in its B-tree leaf, so each 1.6 KB row of a 384-dimension
// vector overflowed onto a page of its own, and the cache took 2.8 times
// its vectors' size (22.9 MB for 5,000 MiniLM vectors, 8.1 MB of data);
// rows of a table with rowids fit two a page, 1.42 times the vectors
// with the index of hashes (TestCacheSize).
const schema = `CREATE TABLE IF NOT EXISTS vectors (
	hash TEXT NOT NULL,
	model TEXT NOT NULL,
	vector BLOB NOT NULL,
	created_at TEXT NOT NULL DEFAULT (datetime('now')),
	UNIQUE (hash, model)
)`

// upgrade creates the vectors table, moving the vectors of the first
// layout's table into it; the file is compacted after a move.
func upgrade(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return err
	}
	var old bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'embeddings')`).Scan(&old); err != nil {
		return err
	}
	if old {
		for _, stmt := range []string{
			`INSERT OR IGNORE INTO vectors(hash, model, vector, created_at) SELECT hash, model, vector, created_at FROM embeddings`,
			`DROP TABLE embeddings`,
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if old {
		// Best effort: another process reading the cache makes VACUUM
		// fail, and the freed pages are then reused by later vectors.
		_, _ = db.ExecContext(ctx, `VACUUM`)
	}
	return nil
}

// Close closes the cache.
func (c *Cache) Close() error { return c.db.Close() }

// inBatches calls fn with the hashes 500 at a time (under SQLite's bound
// on a statement's variables): the condition selecting them under model,
// and its arguments.
func inBatches(model string, hashes []string, fn func(cond string, args []any) error) error {
	for start := 0; start < len(hashes); start += 500 {
		part := hashes[start:min(start+500, len(hashes))]
		args := []any{model}
		for _, h := range part {
			args = append(args, h)
		}
		if err := fn(`model = ? AND hash IN (?`+strings.Repeat(", ?", len(part)-1)+`)`, args); err != nil {
			return err
		}
	}
	return nil
}

// Get returns the cached vectors of model for the given hashes.
func (c *Cache) Get(ctx context.Context, model string, hashes []string) (map[string][]float32, error) {
	out := map[string][]float32{}
	err := inBatches(model, hashes, func(cond string, args []any) error {
		rows, err := c.db.QueryContext(ctx, `SELECT hash, vector FROM vectors WHERE `+cond, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h string
			var b []byte
			if err := rows.Scan(&h, &b); err != nil {
				return err
			}
			out[h] = index.DecodeVector(b)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Count counts the hashes that have a cached vector of model.
func (c *Cache) Count(ctx context.Context, model string, hashes []string) (int, error) {
	n := 0
	err := inBatches(model, hashes, func(cond string, args []any) error {
		var k int
		err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM vectors WHERE `+cond, args...).Scan(&k)
		n += k
		return err
	})
	return n, err
}

// Put stores vectors of model by hash.
func (c *Cache) Put(ctx context.Context, model string, vecs map[string][]float32) error {
	if len(vecs) == 0 {
		return nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO vectors(hash, model, vector) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for h, v := range vecs {
		if _, err := stmt.ExecContext(ctx, h, model, index.EncodeVector(v)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Len counts the cached vectors of model.
func (c *Cache) Len(ctx context.Context, model string) (int, error) {
	var n int
	err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM vectors WHERE model = ?`, model).Scan(&n)
	return n, err
}
