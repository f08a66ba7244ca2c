package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// VectorModel names the embeddings the vectors in the index come from.
// Vectors of two models are never mixed: setting another model drops the
// old vectors and puts every chunk back in the queue.
type VectorModel struct {
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	Dimensions int    `json:"dimensions"`
}

// VectorModel returns the model of the index's vectors; zero when none.
func (d *DB) VectorModel(ctx context.Context) (VectorModel, error) {
	var m VectorModel
	rows, err := d.handle().QueryContext(ctx, `SELECT key, value FROM meta WHERE key IN ('embeddings_plugin', 'embeddings_model', 'dimensions')`)
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

// SetVectorModel makes m the model of the index's vectors. When it differs
// from the current one, the vector table is recreated for m's dimensions
// and every chunk becomes pending; changed reports that.
func (d *DB) SetVectorModel(ctx context.Context, m VectorModel) (changed bool, err error) {
	if m.Model == "" || m.Dimensions <= 0 {
		return false, fmt.Errorf("vector model %+v: need a model id and dimensions", m)
	}
	err = d.write(ctx, func(tx *sql.Tx) error {
		var model, dims string
		tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'embeddings_model'`).Scan(&model)
		tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'dimensions'`).Scan(&dims)
		has, err := hasTable(ctx, tx, "chunks_vec")
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
			// Vectors are stored at unit length, where L2 ranks exactly as
			// cosine does, and sqlite-vec has SIMD code for L2 only. The
			// source is a partition key: each source's vectors lie in
			// their own vec0 chunks, so a search limited to sources reads
			// only theirs and finds their k nearest however many closer
			// vectors other sources hold.
			fmt.Sprintf(`CREATE VIRTUAL TABLE chunks_vec USING vec0(chunk_id INTEGER PRIMARY KEY, embedding float[%d], source TEXT PARTITION KEY)`, m.Dimensions),
			`UPDATE chunks SET embedded = 0 WHERE embedded != 0`,
		}
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		if err := createBitTable(ctx, tx, m.Dimensions); err != nil {
			return err
		}
		if err := touchVectors(ctx, tx); err != nil {
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
	rows, err := d.handle().QueryContext(ctx, `SELECT id, text, coalesce(context, ''), hash FROM chunks WHERE embedded = 0 ORDER BY id LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PendingChunk
	for rows.Next() {
		var p PendingChunk
		var c Chunk
		if err := rows.Scan(&p.ID, &c.Text, &c.Context, &p.Hash); err != nil {
			return nil, err
		}
		p.Text = c.EmbedText()
		out = append(out, p)
	}
	return out, rows.Err()
}

// HasPending reports whether any chunk waits for a vector; unlike
// VectorCounts it costs one index probe.
func (d *DB) HasPending(ctx context.Context) (bool, error) {
	var b bool
	err := d.handle().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM chunks WHERE embedded = 0)`).Scan(&b)
	return b, err
}

// VectorCounts returns how many chunks have a vector and how many wait.
func (d *DB) VectorCounts(ctx context.Context) (embedded, pending int, err error) {
	err = d.handle().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM chunks WHERE embedded = 1), (SELECT count(*) FROM chunks WHERE embedded = 0)`).Scan(&embedded, &pending)
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

// PutVectors stores vectors of model for their chunks, in one transaction.
// Chunks deleted meanwhile are skipped; storing a vector twice is harmless.
// It returns how many were stored.
func (d *DB) PutVectors(ctx context.Context, model string, vecs []ChunkVector) (int, error) {
	stored := 0
	err := d.write(ctx, func(tx *sql.Tx) error {
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
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_vec(chunk_id, embedding, source) VALUES (?, ?, ?)`, v.ID, EncodeVector(unit(v.Vector)), source); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_bit(chunk_id, bits, source) VALUES (?, vec_bit(?), ?)`, v.ID, bitVector(v.Vector), source); err != nil {
				return err
			}
			stored++
		}
		if stored == 0 {
			return nil
		}
		return touchVectors(ctx, tx)
	})
	return stored, err
}

// pointSearchMax is the most chunks a file may have for SearchVectors to
// compare the query with each of its vectors, a vec0 point query each
// (~6 µs), rather than run the KNN over its source's partition with the
// file's chunk ids (~0.15 µs a vector: vec0 reads every vector of the
// partition whatever the filter). A session of 200 turns among 60k session
// chunks takes 1.2 ms instead of 9; the most lost, where the partition is
// small, is ~3 ms.
const pointSearchMax = 500

// SearchVectors returns the k chunks nearest to q (cosine), nearest first,
// limited to sources and to one file (path) when given. Hit.Distance is 1 - cosine similarity.
// The limits apply inside the nearest-neighbour search, so the hits are
// the k nearest of the chunks they allow, however many closer chunks
// other sources or files hold. A search over many vectors (see
// coarseRatio) ranks them by their sign bits first and re-scores the best
// exactly (quantized.go); others compare q with every vector.
func (d *DB) SearchVectors(ctx context.Context, q []float32, k int, sources []string, path string) ([]Hit, error) {
	var parts []string // the sources searched, one KNN each; nil: all in one
	for _, s := range sources {
		if !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	q = unit(q)
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "?" + strconv.Itoa(len(args))
	}
	qv, kv := arg(EncodeVector(q)), arg(k)
	knn := `SELECT chunk_id, distance FROM chunks_vec WHERE embedding MATCH ` + qv + ` AND k = ` + kv
	if path != "" {
		// Only the partitions holding the file's chunks are searched.
		in, n, err := d.fileSources(ctx, path, parts)
		if err != nil {
			return nil, fmt.Errorf("vector search: %w", err)
		}
		if len(in) == 0 {
			return nil, nil
		}
		parts = in
		pv := arg(path)
		if n <= pointSearchMax {
			list := make([]string, len(in))
			for i, s := range in {
				list[i] = arg(s)
			}
			return d.knnHits(ctx, `SELECT v.chunk_id, vec_distance_l2(v.embedding, `+qv+`) AS distance
				FROM chunks f CROSS JOIN chunks_vec v ON v.chunk_id = f.id
				WHERE f.file_path = `+pv+` AND f.source IN (`+strings.Join(list, ", ")+`)`, args, kv)
		}
		// vec0 applies chunk_id IN (...) within the KNN.
		knn += ` AND chunk_id IN (SELECT id FROM chunks WHERE file_path = ` + pv + `)`
	}
	if hits, ok, err := d.searchBits(ctx, q, k, parts, path); ok || err != nil {
		return hits, err
	}
	// One KNN per source, each confined to its partition: the k nearest of
	// the sources are among their k nearest each.
	arms := []string{knn}
	if parts != nil {
		arms = arms[:0]
		for _, s := range parts {
			arms = append(arms, knn+` AND source = `+arg(s))
		}
	}
	return d.knnHits(ctx, strings.Join(arms, `
		UNION ALL `), args, kv)
}

// searchBits runs the two-stage search (quantized.go) over the sources
// (all when nil), limited to the file at path when given, if they hold
// d.coarseRatio times its candidates or more; ok reports whether it ran.
func (d *DB) searchBits(ctx context.Context, q []float32, k int, sources []string, path string) (hits []Hit, ok bool, err error) {
	s, err := d.bits(ctx)
	if errors.Is(err, errBitLayout) {
		return nil, false, nil // the exact search still works
	}
	if err != nil {
		return nil, false, fmt.Errorf("vector search: %w", err)
	}
	n := max(oversample*k, minCandidates)
	if s == nil || s.count(sources) < d.coarseRatio*n {
		return nil, false, nil
	}
	var allow map[int64]bool
	if path != "" {
		if allow, err = d.fileChunks(ctx, path); err != nil {
			return nil, false, fmt.Errorf("vector search: %w", err)
		}
	}
	ids, err := s.candidates(q, n, sources, allow)
	if err != nil {
		return nil, false, fmt.Errorf("vector search: %w", err)
	}
	hits, err = d.rescore(ctx, q, ids, k)
	return hits, true, err
}

// knnHits returns the chunks of the (chunk_id, distance) rows of the query
// knn, ordered by distance, at most limit (an argument of knn's).
func (d *DB) knnHits(ctx context.Context, knn string, args []any, limit string) ([]Hit, error) {
	// Distances are rounded before ordering: SIMD and scalar builds differ
	// in the last bits, and ties must be broken by path and line, not by
	// float noise.
	rows, err := d.handle().QueryContext(ctx, `
		WITH knn AS (`+knn+`)
		SELECT c.id, c.file_path, c.source, coalesce(c.heading, ''), c.start_line, c.end_line, c.text, knn.distance, coalesce(c.meta, ''), coalesce(c.context, '')
		FROM knn JOIN chunks c ON c.id = knn.chunk_id
		ORDER BY round(knn.distance, 5), c.file_path, c.start_line
		LIMIT `+limit, args...)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.ChunkID, &h.Path, &h.Source, &h.Heading, &h.StartLine, &h.EndLine, &h.Text, &h.Distance, &h.Meta, &h.Context); err != nil {
			return nil, err
		}
		h.Distance = h.Distance * h.Distance / 2 // unit vectors: |a-b|² = 2(1 - cos)
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

// fileChunks returns the ids of the chunks of the file at path.
func (d *DB) fileChunks(ctx context.Context, path string) (map[int64]bool, error) {
	rows, err := d.handle().QueryContext(ctx, `SELECT id FROM chunks WHERE file_path = ?`, path)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids[id] = true
	}
	return ids, rows.Err()
}

// fileSources returns the sources of the chunks of the file at path that
// are among sources (all when nil), and how many chunks those hold.
func (d *DB) fileSources(ctx context.Context, path string, sources []string) (in []string, chunks int, err error) {
	rows, err := d.handle().QueryContext(ctx, `SELECT source, count(*) FROM chunks WHERE file_path = ? GROUP BY source`, path)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, 0, err
		}
		if sources == nil || slices.Contains(sources, s) {
			in, chunks = append(in, s), chunks+n
		}
	}
	return in, chunks, rows.Err()
}

// unit returns v scaled to length 1 (v itself when it is zero).
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.Abs(n-1) < 1e-6 {
		return v
	}
	s := 1 / math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * s)
	}
	return out
}

// EncodeVector is the little-endian float32 blob sqlite-vec reads.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector reverses EncodeVector.
func DecodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// VectorRows counts the rows of chunks_vec (0 without the table); with
// VectorCounts it shows that every embedded chunk has exactly one vector.
func (d *DB) VectorRows(ctx context.Context) (int, error) {
	var n int
	err := d.handle().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'chunks_vec'`).Scan(&n)
	if err != nil || n == 0 {
		return 0, err
	}
	err = d.handle().QueryRowContext(ctx, `SELECT count(*) FROM chunks_vec`).Scan(&n)
	return n, err
}

// Similarities returns the cosine similarity of q to the stored vectors of
// the chunks ids (those without a vector are left out): the vector side of
// keyword hits the nearest-neighbour search did not reach. The ids drive a
// point query each (vec0 answers "chunk_id IN (...)" by reading every
// vector).
func (d *DB) Similarities(ctx context.Context, q []float32, ids []int64) (map[int64]float64, error) {
	out := make(map[int64]float64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	list, _ := json.Marshal(ids)
	rows, err := d.handle().QueryContext(ctx, `SELECT v.chunk_id, vec_distance_l2(v.embedding, ?)
		FROM json_each(?) AS j CROSS JOIN chunks_vec AS v ON v.chunk_id = j.value`, EncodeVector(unit(q)), string(list))
	if err != nil {
		return nil, fmt.Errorf("vector similarities: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var dist float64
		if err := rows.Scan(&id, &dist); err != nil {
			return nil, err
		}
		out[id] = 1 - dist*dist/2 // unit vectors: |a-b|² = 2(1 - cos)
	}
	return out, rows.Err()
}
