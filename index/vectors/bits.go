package vectors

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"sync"

	"github.com/memhost/memhost/index"
)

// A search over many vectors runs in two stages. The coarse stage ranks
// every vector it may return by its sign bits, one bit a dimension (bit i
// is set when component i is positive, as sqlite-vec's
// vec_quantize_binary), 32 times smaller than the float32 vector: first by
// Hamming distance to the query's bits, then the best of those by the dot
// product of the float32 query with their ±1 bits. The exact stage
// re-scores the candidates with their float32 vectors, so the hits, their
// distances and their order are those of the exact search whenever the
// coarse stage kept the true neighbours among its candidates.
//
// The bits live in chunks_bit, a vec0 table partitioned by source like
// chunks_vec and kept in step with it, and the coarse stage reads them from
// memory (bitSnapshot), loaded again only when the vectors change. vec0's
// own KNN over them is no faster than the float32 scan at the k of a
// re-scored search: it keeps its top k with a selection that costs k ×
// 1024 comparisons per 1024 vectors (110k vectors: 5 ms at k = 60, 23 at
// 240, 55 at 480, against 17 for the float32 scan at k = 60); int8
// vectors, 41 ms at k = 60. Reading the bits from SQLite for every search
// takes 4-8 ms at 110k, scanning them in memory about 1 ms.

// coarseRatio decides where the two stages pay: Search takes them
// when the vectors it searches number at least coarseRatio times the
// candidates it would re-score. A candidate's re-scoring (a vec0 point
// query, ~7 µs) costs about as much as comparing the query with 50 to 85
// vectors in vec0's float32 scan (~0.1-0.15 µs each with AVX). Measured by
// BenchmarkKNNCrossover on 2 cores, p50 exact / two-stage: k = 60 (240
// candidates) 0.83 / 1.58 ms at 6k vectors, 1.6 / 1.7 at 12k, 4.0 / 1.85
// at 24k; k = 10 (80 candidates) 0.40 / 0.62 at 4k, 0.53 / 0.61 at 6k,
// 1.14 / 0.65 at 12k. 60 puts the switch at 14,400 vectors for k = 60 and
// 4,800 for k = 10, within 0.2 ms of the better of the two either side.
const coarseRatio = 60

// The coarse stage hands oversample × k candidates, and at least
// minCandidates, to the exact stage; the Hamming ranking keeps hammingPool
// times as many for the dot products to choose from. Measured on 15,597
// real MiniLM vectors (LoCoMo turns and sentences, Go doc comments) with
// 994 queries (LoCoMo questions and held-out texts), recall of the exact
// search's top 10: k = 10 (80 candidates) 0.994-0.997; k = 60 (240)
// 0.9998-1.0, and of its whole top 60, 0.984-0.995. Ranking by Hamming
// distance alone needs twice the candidates for the same recall, and
// re-scoring costs ~8 µs a candidate (a vec0 point query).
const (
	oversample    = 4
	minCandidates = 80
	hammingPool   = 4
)

// bitSnapshot is chunks_bit in memory, as of one vectors generation (see
// touchVectors). It is never changed once loaded, so searches share it
// without a lock.
type bitSnapshot struct {
	generation string
	words      int // uint64 words a vector
	parts      map[string]*bitPart
}

// bitPart is the bits of one source: the vector of ids[i] is
// bits[i*words : (i+1)*words].
type bitPart struct {
	ids  []int64
	bits []uint64
}

// bitCache holds the snapshot of the last search. mu is held while a
// snapshot loads, so that concurrent searches load it once.
type bitCache struct {
	mu   sync.Mutex
	snap *bitSnapshot
}

// errBitLayout means chunks_bit's shadow tables are not laid out as this
// package reads them (another sqlite-vec version): searches stay exact.
var errBitLayout = errors.New("unexpected layout of chunks_bit")

// bits returns the snapshot of chunks_bit, loading it when the vectors
// changed since the last one; nil when the index has no vectors.
func (d *DB) bits(ctx context.Context) (*bitSnapshot, error) {
	// The generation is read before the bits: a change committed in
	// between leaves a snapshot newer than its generation, which the next
	// search reloads, never an older one that would be kept. One handle
	// for both reads: a database file put in place of the index's (a
	// rebuild) has vectors of a generation of its own, a random value
	// (index.TouchVectors), so a snapshot of the old file is never taken
	// for the new one.
	db := d.idx.SQL()
	var gen string
	err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'vectors_generation'`).Scan(&gen)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	d.cache.mu.Lock()
	defer d.cache.mu.Unlock()
	if s := d.cache.snap; s != nil && s.generation == gen {
		return s, nil
	}
	s, err := loadBits(ctx, db, gen)
	if err != nil {
		return nil, err
	}
	d.cache.snap = s
	return s, nil
}

// loadBits reads chunks_bit from vec0's shadow tables: a row of
// chunks_bit_chunks holds, for up to chunk-size vectors of one partition,
// a validity bitmap and their ids, and the row of the same id in
// chunks_bit_vector_chunks00 their bits, one after the other. Read so, the
// bits of 110k vectors take ~5 ms of SQLite; through vec0, one row at a
// time, 100.
func loadBits(ctx context.Context, db *sql.DB, gen string) (*bitSnapshot, error) {
	// Each part is allocated once, at its size: fresh memory costs a page
	// fault a page, and growing the slices as they fill would take five
	// times as much (on the 2-core VMs of docs/benchmarks.md, 11 µs a
	// page: 15 ms for 110k vectors, 140 grown).
	sizes := map[string]int{}
	rows, err := db.QueryContext(ctx, `SELECT partition00, validity FROM chunks_bit_chunks`)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBitLayout, err)
	}
	for rows.Next() {
		var source string
		var validity sql.RawBytes
		if err := rows.Scan(&source, &validity); err != nil {
			rows.Close()
			return nil, err
		}
		for _, b := range validity {
			sizes[source] += bits.OnesCount8(b)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}

	rows, err = db.QueryContext(ctx, `SELECT c.partition00, c.validity, c.rowids, v.vectors
		FROM chunks_bit_chunks c JOIN chunks_bit_vector_chunks00 v ON v.rowid = c.chunk_id`)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBitLayout, err)
	}
	defer rows.Close()
	s := &bitSnapshot{generation: gen, parts: map[string]*bitPart{}}
	var buf []byte
	for rows.Next() {
		var source string
		var validity, ids, vectors sql.RawBytes
		if err := rows.Scan(&source, &validity, &ids, &vectors); err != nil {
			return nil, err
		}
		size := 8 * len(validity)
		if size == 0 || len(ids) != 8*size || len(vectors)%size != 0 {
			return nil, fmt.Errorf("%w: %d-bit validity, %d bytes of ids, %d of vectors", errBitLayout, size, len(ids), len(vectors))
		}
		width := len(vectors) / size // bytes a vector
		words := (width + 7) / 8
		if s.words == 0 {
			s.words = words
			buf = make([]byte, 8*words)
		}
		if words != s.words {
			return nil, fmt.Errorf("%w: vectors of %d and %d words", errBitLayout, s.words, words)
		}
		p := s.parts[source]
		if p == nil {
			// The sizes are a capacity only: a write since may have
			// changed them.
			p = &bitPart{ids: make([]int64, 0, sizes[source]), bits: make([]uint64, 0, sizes[source]*words)}
			s.parts[source] = p
		}
		for i := range size {
			if validity[i/8]>>(i%8)&1 == 0 {
				continue
			}
			p.ids = append(p.ids, int64(binary.LittleEndian.Uint64(ids[8*i:])))
			copy(buf, vectors[i*width:(i+1)*width]) // the padding stays zero
			for w := range words {
				p.bits = append(p.bits, binary.LittleEndian.Uint64(buf[8*w:]))
			}
		}
	}
	return s, rows.Err()
}

// count is how many vectors the sources hold (all when nil).
func (s *bitSnapshot) count(sources []string) int {
	n := 0
	for source, p := range s.parts {
		if sources == nil || slices.Contains(sources, source) {
			n += len(p.ids)
		}
	}
	return n
}

// candidates returns the ids of up to n chunks nearest to the unit vector
// q by their bits, among the sources (all when nil) and, when allow is not
// nil, the ids it holds.
func (s *bitSnapshot) candidates(q []float32, n int, sources []string, allow map[int64]bool) ([]int64, error) {
	if s.words == 0 {
		return nil, nil // no vectors
	}
	qb := index.BitVector(q)
	if (len(qb)+7)/8 != s.words {
		return nil, fmt.Errorf("a query of %d dimensions for vectors of %d bits", len(q), 64*s.words)
	}
	var qw [8]uint64 // up to 512 dimensions without allocating
	query := qw[:0]
	if s.words > len(qw) {
		query = make([]uint64, 0, s.words)
	}
	buf := make([]byte, 8*s.words)
	copy(buf, qb)
	for w := range s.words {
		query = append(query, binary.LittleEndian.Uint64(buf[8*w:]))
	}

	// Hamming distances of every vector searched, then the pool of the
	// nearest: all under the distance at which the pool fills, and those
	// at it in scan order.
	var parts []*bitPart
	total := 0
	for _, source := range slices.Sorted(maps.Keys(s.parts)) {
		if sources == nil || slices.Contains(sources, source) {
			parts = append(parts, s.parts[source])
			total += len(s.parts[source].ids)
		}
	}
	dist := make([]uint16, total)
	hist := make([]int, 64*s.words+1)
	k := 0
	for _, p := range parts {
		hamming(dist[k:k+len(p.ids)], p, query, allow, hist)
		k += len(p.ids)
	}
	allowed := 0
	for _, n := range hist {
		allowed += n
	}
	pool := min(allowed, hammingPool*n)
	cutoff, below := 0, 0 // the pool takes every distance < cutoff, and some = cutoff
	for below+hist[cutoff] < pool {
		below += hist[cutoff]
		cutoff++
	}
	atCutoff := pool - below

	// The pool ranked by the dot product of q with their ±1 bits: table[j]
	// holds, for each value of byte j of a vector, the sum of q's
	// components over its 8 bits, + where the bit is set, - where not.
	table := make([][256]float32, 8*s.words)
	for j := range table {
		var base float32
		for b := range 8 {
			if i := 8*j + b; i < len(q) {
				base -= q[i]
			}
		}
		table[j][0] = base
		for v := 1; v < 256; v++ {
			low := bits.TrailingZeros8(uint8(v))
			var x float32
			if i := 8*j + low; i < len(q) {
				x = 2 * q[i]
			}
			table[j][v] = table[j][v&(v-1)] + x
		}
	}
	type scored struct {
		id  int64
		dot float32
	}
	ranked := make([]scored, 0, pool)
	top := uint16(cutoff) // skippedDist is above any cutoff
	k = 0
	for _, p := range parts {
		for i, h := range dist[k : k+len(p.ids)] {
			if h > top {
				continue
			}
			if h == top {
				if atCutoff == 0 {
					continue
				}
				atCutoff--
			}
			var dot float32
			for w, x := range p.bits[i*s.words : (i+1)*s.words] {
				for b := range 8 {
					dot += table[8*w+b][uint8(x>>(8*b))]
				}
			}
			ranked = append(ranked, scored{p.ids[i], dot})
		}
		k += len(p.ids)
	}
	slices.SortFunc(ranked, func(a, b scored) int {
		if a.dot != b.dot {
			return cmp.Compare(b.dot, a.dot)
		}
		return cmp.Compare(a.id, b.id)
	})
	ids := make([]int64, min(n, len(ranked)))
	for i := range ids {
		ids[i] = ranked[i].id
	}
	return ids, nil
}

// skippedDist is the Hamming distance hamming gives a vector it skips.
const skippedDist = 0xffff

// hamming sets dist[i] to the Hamming distance of p's vector i to query
// (skippedDist when allow, if not nil, does not hold its id) and counts
// each distance in hist.
func hamming(dist []uint16, p *bitPart, query []uint64, allow map[int64]bool, hist []int) {
	if len(query) == 6 && allow == nil {
		// 384 dimensions (MiniLM, the default model's) unrolled: two
		// to three times the generic loop's speed.
		q0, q1, q2, q3, q4, q5 := query[0], query[1], query[2], query[3], query[4], query[5]
		v := p.bits[:6*len(dist)]
		for i := range dist {
			w := v[6*i : 6*i+6 : 6*i+6]
			h := bits.OnesCount64(w[0]^q0) + bits.OnesCount64(w[1]^q1) + bits.OnesCount64(w[2]^q2) +
				bits.OnesCount64(w[3]^q3) + bits.OnesCount64(w[4]^q4) + bits.OnesCount64(w[5]^q5)
			dist[i] = uint16(h)
			hist[h]++
		}
		return
	}
	words := p.bits
	for i, id := range p.ids {
		v := words[:len(query):len(query)]
		words = words[len(query):]
		if allow != nil && !allow[id] {
			dist[i] = skippedDist
			continue
		}
		h := 0
		for w, x := range v {
			h += bits.OnesCount64(x ^ query[w])
		}
		dist[i] = uint16(h)
		hist[h]++
	}
}

// rescore returns the k of the chunks ids nearest to the unit vector q by
// their float32 vectors, ordered as Search orders.
func (d *DB) rescore(ctx context.Context, q []float32, ids []int64, k int) ([]index.Hit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	// A point query each: vec0 answers "chunk_id IN (...)" by reading
	// every vector.
	return d.knnHits(ctx, `SELECT v.chunk_id, vec_distance_l2(v.embedding, ?1) AS distance
		FROM json_each(?2) AS j CROSS JOIN chunks_vec AS v ON v.chunk_id = j.value`,
		[]any{index.EncodeVector(q), string(list), k}, "?3")
}
