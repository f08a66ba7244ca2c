// Package vectors is the vector side of the index: the embeddings model
// of its vectors, the chunks waiting for one and the texts that failed,
// storing vectors, and the nearest-neighbour searches over them, exact or
// in two stages with an in-memory copy of their sign bits (bits.go). It
// reads and writes through index.DB, whose transaction for a file removes
// that file's vectors (index.Apply).
package vectors

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/memhost/memhost/index"
)

// DB is the vector side of an index database. Make one for each
// index.DB and keep it: it holds the bits of the last search.
type DB struct {
	idx *index.DB
	// coarseRatio is the package's coarseRatio; tests set it to 0 (every
	// search ranks by bits first) or math.MaxInt32 (none does).
	coarseRatio int
	cache       bitCache // the bits of the last search (bits.go)
}

// New returns the vector side of idx.
func New(idx *index.DB) *DB { return &DB{idx: idx, coarseRatio: coarseRatio} }

// Model names the embeddings the vectors in the index come from.
// Vectors of two models are never mixed: setting another model drops the
// old vectors and puts every chunk back in the queue.
type Model struct {
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	Dimensions int    `json:"dimensions"`
}

// Model returns the model of the index's vectors; zero when none.
func (d *DB) Model(ctx context.Context) (Model, error) {
	var m Model
	rows, err := d.idx.SQL().QueryContext(ctx, `SELECT key, value FROM meta WHERE key IN ('embeddings_plugin', 'embeddings_model', 'dimensions')`)
	if err != nil {
		return m, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return m, err
		}
		switch k {
		case "embeddings_plugin":
			m.Provider = v
		case "embeddings_model":
			m.Model = v
		case "dimensions":
			m.Dimensions, _ = strconv.Atoi(v)
		}
	}
	return m, rows.Err()
}

// SetModel makes m the model of the index's vectors. When it differs
// from the current one, the vector table is recreated for m's dimensions
// and every chunk becomes pending; changed reports that.
func (d *DB) SetModel(ctx context.Context, m Model) (changed bool, err error) {
	if m.Model == "" || m.Dimensions <= 0 {
		return false, fmt.Errorf("vector model %+v: need a model id and dimensions", m)
	}
	err = d.idx.Write(ctx, func(tx *sql.Tx) error {
		var model, dims string
		tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'embeddings_model'`).Scan(&model)
		tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'dimensions'`).Scan(&dims)
		has, err := index.HasTable(ctx, tx, "chunks_vec")
		if err != nil {
			return err
		}
		if has && model == m.Model && dims == strconv.Itoa(m.Dimensions) {
			_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES ('embeddings_plugin', ?)`, m.Provider)
			return err
		}
		changed = true
		stmts := []string{
			`DROP TABLE IF EXISTS chunks_vec`,
			`DROP TABLE IF EXISTS chunks_bit`,
			index.VecTable(m.Dimensions),
			`UPDATE chunks SET embedded = 0 WHERE embedded != 0`,
		}
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		if err := index.CreateBitTable(ctx, tx, m.Dimensions); err != nil {
			return err
		}
		if err := index.TouchVectors(ctx, tx); err != nil {
			return err
		}
		for k, v := range map[string]string{"embeddings_plugin": m.Provider, "embeddings_model": m.Model, "dimensions": strconv.Itoa(m.Dimensions)} {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, k, v); err != nil {
				return err
			}
		}
		return nil
	})
	return changed, err
}

// PendingChunk is a chunk waiting for its vector.
type PendingChunk struct {
	ID   int64
	Text string // what to embed: the chunk's EmbedText
	Hash string
}

// Pending returns up to limit chunks without a vector, oldest first.
func (d *DB) Pending(ctx context.Context, limit int) ([]PendingChunk, error) {
	rows, err := d.idx.SQL().QueryContext(ctx, `SELECT id, text, coalesce(context, ''), hash FROM chunks WHERE embedded = 0 ORDER BY id LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PendingChunk
	for rows.Next() {
		var p PendingChunk
		var c index.Chunk
		if err := rows.Scan(&p.ID, &c.Text, &c.Context, &p.Hash); err != nil {
			return nil, err
		}
		p.Text = c.EmbedText()
		out = append(out, p)
	}
	return out, rows.Err()
}

// HasPending reports whether any chunk waits for a vector; unlike
// Counts it costs one index probe.
func (d *DB) HasPending(ctx context.Context) (bool, error) {
	var b bool
	err := d.idx.SQL().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM chunks WHERE embedded = 0)`).Scan(&b)
	return b, err
}

// Counts returns how many chunks have a vector and how many wait.
func (d *DB) Counts(ctx context.Context) (embedded, pending int, err error) {
	err = d.idx.SQL().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM chunks WHERE embedded = 1), (SELECT count(*) FROM chunks WHERE embedded = 0)`).Scan(&embedded, &pending)
	return embedded, pending, err
}

// ChunkVector is a chunk's vector.
type ChunkVector struct {
	ID     int64
	Vector []float32
}

// ErrModelChanged means vectors were offered for a model that is no longer
// the index's: they are dropped, never mixed in.
var ErrModelChanged = errors.New("the index's embedding model changed")

// Put stores vectors of model for their chunks, in one transaction.
// Chunks deleted meanwhile are skipped; storing a vector twice is harmless.
// It returns how many were stored.
func (d *DB) Put(ctx context.Context, model string, vecs []ChunkVector) (int, error) {
	stored := 0
	err := d.idx.Write(ctx, func(tx *sql.Tx) error {
		stored = 0
		var current, dims string
		tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'embeddings_model'`).Scan(&current)
		tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'dimensions'`).Scan(&dims)
		if current != model {
			return fmt.Errorf("%w: vectors of %q offered, index holds %q", ErrModelChanged, model, current)
		}
		n, _ := strconv.Atoi(dims)
		for _, v := range vecs {
			if len(v.Vector) != n {
				return fmt.Errorf("vector for chunk %d has %d dimensions, the index takes %d", v.ID, len(v.Vector), n)
			}
			var source string
			err := tx.QueryRowContext(ctx, `UPDATE chunks SET embedded = 1 WHERE id = ? RETURNING source`, v.ID).Scan(&source)
			if errors.Is(err, sql.ErrNoRows) {
				continue // the chunk was removed while it was embedded
			}
			if err != nil {
				return err
			}
			for _, s := range []string{`DELETE FROM chunks_vec WHERE chunk_id = ?`, `DELETE FROM chunks_bit WHERE chunk_id = ?`} {
				if _, err := tx.ExecContext(ctx, s, v.ID); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_vec(chunk_id, embedding, source) VALUES (?, ?, ?)`, v.ID, index.EncodeVector(unit(v.Vector)), source); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_bit(chunk_id, bits, source) VALUES (?, vec_bit(?), ?)`, v.ID, index.BitVector(v.Vector), source); err != nil {
				return err
			}
			stored++
		}
		if stored == 0 {
			return nil
		}
		return index.TouchVectors(ctx, tx)
	})
	return stored, err
}
