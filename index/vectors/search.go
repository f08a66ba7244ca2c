package vectors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/index/vaultrows"
)

// pointSearchMax is the most chunks a file may have for Search to
// compare the query with each of its vectors, a vec0 point query each
// (~6 µs), rather than run the KNN over its source's partition with the
// file's chunk ids (~0.15 µs a vector: vec0 reads every vector of the
// partition whatever the filter). A session of 200 turns among 60k session
// chunks takes 1.2 ms instead of 9; the most lost, where the partition is
// small, is ~3 ms.
const pointSearchMax = 500

// Search returns the k chunks nearest to q (cosine), nearest first,
// limited to sources and to one file (path) when given. Hit.Distance is 1 - cosine similarity.
// The limits apply inside the nearest-neighbour search, so the hits are
// the k nearest of the chunks they allow, however many closer chunks
// other sources or files hold. A search over many vectors (see
// coarseRatio) ranks them by their sign bits first and re-scores the best
// exactly (bits.go); others compare q with every vector.
func (d *DB) Search(ctx context.Context, q []float32, k int, sources []string, path string) ([]index.Hit, error) {
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
	qv, kv := arg(index.EncodeVector(q)), arg(k)
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

// searchBits runs the two-stage search (bits.go) over the sources
// (all when nil), limited to the file at path when given, if they hold
// d.coarseRatio times its candidates or more; ok reports whether it ran.
func (d *DB) searchBits(ctx context.Context, q []float32, k int, sources []string, path string) (hits []index.Hit, ok bool, err error) {
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
func (d *DB) knnHits(ctx context.Context, knn string, args []any, limit string) ([]index.Hit, error) {
	// Distances are rounded before ordering: SIMD and scalar builds differ
	// in the last bits, and ties must be broken by path and line, not by
	// float noise.
	rows, err := d.idx.SQL().QueryContext(ctx, `
		WITH knn AS (`+knn+`)
		SELECT c.id, c.file_path, c.source, coalesce(c.heading, ''), c.start_line, c.end_line, c.text, knn.distance, coalesce(c.meta, ''), coalesce(c.context, '')
		FROM knn JOIN chunks c ON c.id = knn.chunk_id
		ORDER BY round(knn.distance, 5), c.file_path, c.start_line
		LIMIT `+limit, args...)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	defer rows.Close()
	var hits []index.Hit
	for rows.Next() {
		var h index.Hit
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
	rows, err := d.idx.SQL().QueryContext(ctx, `SELECT id FROM chunks WHERE file_path = ?`, path)
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
	rows, err := d.idx.SQL().QueryContext(ctx, `SELECT source, count(*) FROM chunks WHERE file_path = ? GROUP BY source`, path)
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

// Rows counts the rows of chunks_vec (0 without the table); with
// Counts it shows that every embedded chunk has exactly one vector.
func (d *DB) Rows(ctx context.Context) (int, error) {
	var n int
	err := d.idx.SQL().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'chunks_vec'`).Scan(&n)
	if err != nil || n == 0 {
		return 0, err
	}
	err = d.idx.SQL().QueryRowContext(ctx, `SELECT count(*) FROM chunks_vec`).Scan(&n)
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
	rows, err := d.idx.SQL().QueryContext(ctx, `SELECT v.chunk_id, vec_distance_l2(v.embedding, ?)
		FROM json_each(?) AS j CROSS JOIN chunks_vec AS v ON v.chunk_id = j.value`, index.EncodeVector(unit(q)), string(list))
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

// SearchIn is Search limited to a scope, inside the nearest
// neighbour search as Search limits to a file: the hits are the k
// nearest of the chunks the scope allows. A scope of a few chunks
// (pointSearchMax) compares q with each of their vectors; a larger one runs
// the KNN (or the two-stage search over bits) with the allowed chunk ids.
func (d *DB) SearchIn(ctx context.Context, q []float32, k int, sources []string, sc vaultrows.Scope) ([]index.Hit, error) {
	if !sc.Filters() {
		return d.Search(ctx, q, k, sources, sc.Path)
	}
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "?" + strconv.Itoa(len(args))
	}
	where := sc.Cond("file_path", arg)
	var parts []string
	for _, s := range sources {
		if !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	if len(parts) > 0 {
		list := make([]string, len(parts))
		for i, s := range parts {
			list[i] = arg(s)
		}
		where += ` AND source IN (` + strings.Join(list, ", ") + `)`
	}
	rows, err := d.idx.SQL().QueryContext(ctx, `SELECT id, source FROM chunks WHERE embedded = 1 AND `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	allow := map[int64]bool{}
	var ids []int64
	var in []string
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			rows.Close()
			return nil, err
		}
		allow[id] = true
		ids = append(ids, id)
		if !slices.Contains(in, s) {
			in = append(in, s)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	q = unit(q)
	idJSON, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	args = nil
	qv, kv, iv := arg(index.EncodeVector(q)), arg(k), arg(string(idJSON))
	if len(ids) <= pointSearchMax {
		return d.knnHits(ctx, `SELECT v.chunk_id, vec_distance_l2(v.embedding, `+qv+`) AS distance
			FROM json_each(`+iv+`) j CROSS JOIN chunks_vec v ON v.chunk_id = j.value`, args, kv)
	}
	s, err := d.bits(ctx)
	if err != nil && !errors.Is(err, errBitLayout) {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	if s != nil && err == nil {
		if n := max(oversample*k, minCandidates); s.count(in) >= d.coarseRatio*n {
			cand, err := s.candidates(q, n, in, allow)
			if err != nil {
				return nil, fmt.Errorf("vector search: %w", err)
			}
			return d.rescore(ctx, q, cand, k)
		}
	}
	// vec0 applies chunk_id IN (...) within the KNN; one KNN per partition.
	knn := `SELECT chunk_id, distance FROM chunks_vec WHERE embedding MATCH ` + qv + ` AND k = ` + kv +
		` AND chunk_id IN (SELECT value FROM json_each(` + iv + `))`
	arms := make([]string, len(in))
	for i, s := range in {
		arms[i] = knn + ` AND source = ` + arg(s)
	}
	return d.knnHits(ctx, strings.Join(arms, `
		UNION ALL `), args, kv)
}
