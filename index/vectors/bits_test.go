package vectors

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memhost/memhost/index"
)

// TestBitVector: the bits are those sqlite-vec's vec_quantize_binary makes,
// padded with zeros to a whole byte.
func TestBitVector(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	r := rand.New(rand.NewSource(3))
	for _, dims := range []int{8, 16, 384} {
		v := randomUnit(r, dims)
		var want []byte
		if err := db.SQL().QueryRowContext(ctx, `SELECT vec_quantize_binary(?)`, index.EncodeVector(v)).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if got := index.BitVector(v); !slices.Equal(got, want) {
			t.Errorf("index.BitVector(%d dims) = %x, vec_quantize_binary = %x", dims, got, want)
		}
	}
	if got := index.BitVector([]float32{1, -1, 0, 2, 3}); !slices.Equal(got, []byte{0b11001}) {
		t.Errorf("bitVector of 5 dims = %08b", got)
	}
}

// quantized makes db rank every search by its bits first.
func quantized(db testDB) { db.coarseRatio = 0 }

// exact makes db compare the query with every vector.
func exact(db testDB) { db.coarseRatio = math.MaxInt32 }

// checkRanked fails t unless hits are chunks of h allowed by sources and
// path, each once, with its exact distance, ordered as Search
// orders, and as many as bruteForce finds: what the two-stage search
// promises whichever neighbours its coarse stage kept.
func (h vecHome) checkRanked(t *testing.T, hits []index.Hit, q []float32, k int, sources []string, path string) {
	t.Helper()
	if want := len(h.bruteForce(q, k, sources, path)); len(hits) != want {
		t.Fatalf("Search(k=%d, %v, %q): %d hits, want %d", k, sources, path, len(hits), want)
	}
	seen := map[int64]bool{}
	for i, g := range hits {
		c, ok := h.chunks[g.ChunkID]
		if seen[g.ChunkID] || !ok || !c.in(sources, path) || c.path != g.Path || c.line != g.StartLine {
			t.Fatalf("Search(k=%d, %v, %q) hit %d = %d %s:%d: not an allowed chunk, or twice", k, sources, path, i, g.ChunkID, g.Path, g.StartLine)
		}
		seen[g.ChunkID] = true
		var dot, nq, nc float64
		for j := range q {
			dot += float64(q[j]) * float64(c.vec[j])
			nq += float64(q[j]) * float64(q[j])
			nc += float64(c.vec[j]) * float64(c.vec[j])
		}
		if d := 1 - dot/math.Sqrt(nq*nc); math.Abs(g.Distance-d) > 1e-5 {
			t.Fatalf("hit %d at distance %.6f, its vector's is %.6f", i, g.Distance, d)
		}
		// Ties within float noise may come in either order.
		if i > 0 && hits[i-1].Distance > g.Distance+1e-5 {
			p := hits[i-1]
			t.Fatalf("hit %d (%s:%d %.6f) ranked after %s:%d %.6f", i, g.Path, g.StartLine, g.Distance, p.Path, p.StartLine, p.Distance)
		}
	}
}

// TestSearchVectorsQuantized: the two-stage search honours sources and
// files as the exact one does, returns exact distances in the same order,
// and is exact when its candidates cover every vector allowed; it follows
// removed, added and replaced vectors.
func TestSearchVectorsQuantized(t *testing.T) {
	ctx := context.Background()
	const dims = 64
	r := rand.New(rand.NewSource(11))
	files, vecs := map[string]string{}, map[string][][]float32{}
	add := func(path, source string, n int) {
		files[path] = source
		for range n {
			vecs[path] = append(vecs[path], randomUnit(r, dims))
		}
	}
	for i := range 20 {
		add(fmt.Sprintf("notes/n%02d.md", i), "notebook", 5)
	}
	for i := range 10 {
		add(fmt.Sprintf("daily/d%02d.md", i), "daily", 2)
	}
	add("sessions/a.jsonl", "sessions", 3)
	add("sessions/long.jsonl", "sessions", pointSearchMax+50) // searched by its bits, not point by point
	h := newVecHome(t, dims, files, vecs)
	quantized(h.db)
	const all = 100 + 20 + 3 + pointSearchMax + 50

	for range 10 {
		q := randomUnit(r, dims)
		// Candidates (4k) for every allowed vector: exact.
		h.check(t, q, all/4+1, nil, "")
		h.check(t, q, 30, []string{"notebook", "daily"}, "")
		h.check(t, q, 5, []string{"daily"}, "")
		h.check(t, q, (pointSearchMax+53)/4+1, []string{"sessions"}, "")
		h.check(t, q, (pointSearchMax+50)/4+1, nil, "sessions/long.jsonl")
		h.check(t, q, 3, nil, "sessions/a.jsonl") // point by point
		// Fewer: the neighbours the coarse stage kept, exactly ranked.
		for _, k := range []int{1, 10, 60} {
			for _, sources := range [][]string{nil, {"sessions"}, {"notebook", "sessions"}} {
				hits, err := h.db.vdb.Search(ctx, q, k, sources, "")
				if err != nil {
					t.Fatal(err)
				}
				h.checkRanked(t, hits, q, k, sources, "")
			}
			hits, err := h.db.vdb.Search(ctx, q, k, []string{"sessions"}, "sessions/long.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			h.checkRanked(t, hits, q, k, []string{"sessions"}, "sessions/long.jsonl")
		}
	}
	if hits := h.check(t, randomUnit(r, dims), 10, []string{"notebook"}, "sessions/long.jsonl"); len(hits) != 0 {
		t.Errorf("a file outside the sources: %d hits", len(hits))
	}
	if h.db.cache.snap == nil || h.db.cache.snap.count(nil) != all {
		t.Fatalf("the searches did not go through the bits: %+v", h.db.cache.snap)
	}

	// Removing a file removes its vectors from the next search.
	if err := h.db.Apply(ctx, index.Batch{Removes: []string{"sessions/long.jsonl"}}); err != nil {
		t.Fatal(err)
	}
	for id, c := range h.chunks {
		if c.path == "sessions/long.jsonl" {
			delete(h.chunks, id)
		}
	}
	q := randomUnit(r, dims)
	h.check(t, q, 40, nil, "")
	// A new chunk's vector is found once stored, a replaced page's new one
	// instead of its old.
	grown := page("sessions/a.jsonl", "turn 4")
	grown.File.Source = "sessions"
	grown.Chunks[0].StartLine, grown.Chunks[0].EndLine = 4, 4
	grown.File.Hash, grown.Base = "h-grown", grown.File.Hash
	if err := h.db.Apply(ctx, index.Batch{Appends: []index.Update{grown}, Upserts: []index.Update{page("notes/n00.md", "new")}}); err != nil {
		t.Fatal(err)
	}
	for id, c := range h.chunks {
		if c.path == "notes/n00.md" {
			delete(h.chunks, id)
		}
	}
	pending, err := h.db.Pending(ctx, 10)
	if err != nil || len(pending) != 2 {
		t.Fatalf("Pending = %v, %v", pending, err)
	}
	var cv []ChunkVector
	for _, p := range pending {
		v := near(r, q, 0.95)
		cv = append(cv, ChunkVector{p.ID, v})
		c := vecChunk{"sessions/a.jsonl", "sessions", 4, v}
		if p.Text == "new" {
			c = vecChunk{"notes/n00.md", "notebook", 1, v}
		}
		h.chunks[p.ID] = c
	}
	if _, err := h.db.Put(ctx, "t", cv); err != nil {
		t.Fatal(err)
	}
	hits := h.check(t, q, 40, nil, "")
	if len(hits) < 2 || hits[0].Distance > 0.06 || hits[1].Distance > 0.06 {
		t.Errorf("new vectors not found first: %+v", hits[:2])
	}
	h.check(t, q, 25, []string{"notebook", "sessions"}, "")
}

// TestQuantizedRecall holds the recall claim of bits.go on real
// MiniLM vectors (testdata/README.md): the two-stage search must find at
// least 98% of the exact search's top 10. Ranking by Hamming distance
// alone with k candidates, on the same vectors, finds too few: the
// fixture can tell a good coarse stage from a bad one.
func TestQuantizedRecall(t *testing.T) {
	ctx := context.Background()
	all := readF16(t, "testdata/minilm-384.f16", 384)
	queries, corpus := all[:100], all[100:]
	files, vecs := map[string]string{}, map[string][][]float32{}
	for i, v := range corpus {
		path, source := fmt.Sprintf("notes/n%03d.md", i/10), "notebook"
		if i >= 600 {
			path, source = fmt.Sprintf("sessions/s%d.jsonl", i/100), "sessions"
		}
		files[path] = source
		vecs[path] = append(vecs[path], v)
	}
	h := newVecHome(t, 384, files, vecs)

	search := func(q []float32, k int, sources []string) []index.Hit {
		hits, err := h.db.vdb.Search(ctx, q, k, sources, "")
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	for _, c := range []struct {
		k       int
		sources []string
	}{{10, nil}, {60, nil}, {10, []string{"sessions"}}} {
		var recall, starved float64
		for _, q := range queries {
			exact(h.db)
			want := search(q, c.k, c.sources)
			quantized(h.db)
			got := search(q, c.k, c.sources)
			h.checkRanked(t, got, q, c.k, c.sources, "")
			recall += recallAt10(got, want)

			// The control: k candidates by Hamming distance alone.
			s, err := h.db.bits(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids, err := s.hammingOnly(unit(q), c.k, c.sources)
			if err != nil {
				t.Fatal(err)
			}
			hits, err := h.db.rescore(ctx, unit(q), ids, c.k)
			if err != nil {
				t.Fatal(err)
			}
			starved += recallAt10(hits, want)
		}
		recall, starved = recall/float64(len(queries)), starved/float64(len(queries))
		t.Logf("k=%d sources=%v: recall@10 %.4f (Hamming alone, k candidates: %.4f)", c.k, c.sources, recall, starved)
		if recall < 0.98 {
			t.Errorf("k=%d sources=%v: recall@10 %.4f, want >= 0.98", c.k, c.sources, recall)
		}
		if starved >= 0.98 {
			t.Errorf("k=%d sources=%v: Hamming alone with k candidates reaches recall@10 %.4f: the fixture is too easy to test recall", c.k, c.sources, starved)
		}
	}
}

// hammingOnly is the coarse stage without its dot products: the n chunks
// nearest by Hamming distance.
func (s *bitSnapshot) hammingOnly(q []float32, n int, sources []string) ([]int64, error) {
	qb := index.BitVector(q)
	type scored struct {
		id int64
		d  int
	}
	var all []scored
	for source, p := range s.parts {
		if sources != nil && !slices.Contains(sources, source) {
			continue
		}
		for i, id := range p.ids {
			d := 0
			for w, x := range p.bits[i*s.words : (i+1)*s.words] {
				var qw [8]byte
				copy(qw[:], qb[min(8*w, len(qb)):])
				d += bits.OnesCount64(x ^ binary.LittleEndian.Uint64(qw[:]))
			}
			all = append(all, scored{id, d})
		}
	}
	slices.SortStableFunc(all, func(a, b scored) int { return a.d - b.d })
	ids := make([]int64, min(n, len(all)))
	for i := range ids {
		ids[i] = all[i].id
	}
	return ids, nil
}

// recallAt10 is the share of want's first 10 hits that got's first 10 hold.
func recallAt10(got, want []index.Hit) float64 {
	want = want[:min(10, len(want))]
	if len(want) == 0 {
		return 1
	}
	in := map[int64]bool{}
	for _, h := range got[:min(10, len(got))] {
		in[h.ChunkID] = true
	}
	n := 0
	for _, h := range want {
		if in[h.ChunkID] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// readF16 reads little-endian IEEE half-precision vectors of dims
// dimensions.
func readF16(t *testing.T, path string, dims int) [][]float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b)%(2*dims) != 0 {
		t.Fatalf("%s: %d bytes is no whole number of %d-dimension vectors", path, len(b), dims)
	}
	out := make([][]float32, len(b)/(2*dims))
	for i := range out {
		v := make([]float32, dims)
		for j := range v {
			v[j] = half(binary.LittleEndian.Uint16(b[2*(i*dims+j):]))
		}
		out[i] = v
	}
	return out
}

// half converts an IEEE 754 half-precision number.
func half(h uint16) float32 {
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0: // subnormal
		return sign * float32(math.Ldexp(frac/1024, -14))
	case 0x1f:
		if frac != 0 {
			return float32(math.NaN())
		}
		return sign * float32(math.Inf(1))
	}
	return sign * float32(math.Ldexp(1+frac/1024, exp-15))
}

// TestUpgradeFromSchema8: an index made by schema 8, before chunks_bit,
// opens with its vectors and pending chunks as they were, its bits derived
// from its vectors, and searches as before.
func TestUpgradeFromSchema8(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	copyFile(t, "testdata/schema8.db", path)
	db, err := openAt(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.Meta(ctx, "schema_version"); err != nil || v != index.SchemaVersion {
		t.Fatalf("schema_version = %q, %v", v, err)
	}
	if m, err := db.Model(ctx); err != nil || m != (Model{Provider: "t", Model: "t", Dimensions: 16}) {
		t.Fatalf("Model = %+v, %v", m, err)
	}
	var schema string
	if err := db.SQL().QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE name = 'chunks_vec'`).Scan(&schema); err != nil || !strings.Contains(schema, "chunk_size=256") {
		t.Fatalf("chunks_vec after the upgrade: %q, %v", schema, err)
	}
	embedded, pending, err := db.Counts(ctx)
	if err != nil || embedded != 289 || pending != 1 {
		t.Fatalf("Counts = %d, %d, %v; want 289, 1 (as schema 8 left them)", embedded, pending, err)
	}
	if n, err := db.Rows(ctx); err != nil || n != embedded {
		t.Fatalf("Rows = %d, %v", n, err)
	}

	// What a brute-force search needs: the vectors as schema 8 stored them.
	h := vecHome{db: db, chunks: map[int64]vecChunk{}}
	rows, err := db.SQL().QueryContext(ctx, `SELECT c.id, c.file_path, c.source, c.start_line, v.embedding FROM chunks c JOIN chunks_vec v ON v.chunk_id = c.id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var c vecChunk
		var emb []byte
		if err := rows.Scan(&id, &c.path, &c.source, &c.line, &emb); err != nil {
			t.Fatal(err)
		}
		c.vec = index.DecodeVector(emb)
		h.chunks[id] = c
	}
	rows.Close()
	if len(h.chunks) != embedded {
		t.Fatalf("%d vectors read", len(h.chunks))
	}
	quantized(db)
	r := rand.New(rand.NewSource(9))
	for range 20 {
		q := randomUnit(r, 16)
		h.check(t, q, embedded/4+1, nil, "")
		h.check(t, q, 30, []string{"notebook"}, "")
		h.check(t, q, 60, []string{"sessions"}, "sessions/b.jsonl")
		hits, err := db.vdb.Search(ctx, q, 10, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		h.checkRanked(t, hits, q, 10, nil, "")
	}
	if s := db.cache.snap; s == nil || s.count(nil) != embedded {
		t.Fatalf("bits after the upgrade: %+v", s)
	}

	// The last pending chunk takes its vector, bits and all.
	p, err := db.Pending(ctx, 10)
	if err != nil || len(p) != 1 {
		t.Fatalf("Pending = %v, %v", p, err)
	}
	v := randomUnit(r, 16)
	if n, err := db.Put(ctx, "t", []ChunkVector{{p[0].ID, v}}); err != nil || n != 1 {
		t.Fatalf("Put = %d, %v", n, err)
	}
	hits, err := db.vdb.Search(ctx, v, 1, nil, "")
	if err != nil || len(hits) != 1 || hits[0].ChunkID != p[0].ID {
		t.Fatalf("the new vector's own search: %+v, %v", hits, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBitsFollowOtherConnections: a search through one DB sees the
// vectors another (another process) stored, removed, dropped or copied in
// since its last search, not its snapshot of the bits.
func TestBitsFollowOtherConnections(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewSource(5))
	q := randomUnit(r, 8)
	h := newVecHome(t, 8, map[string]string{"a.md": "notebook", "b.md": "notebook"},
		map[string][][]float32{"a.md": {near(r, q, 0.99)}, "b.md": {near(r, q, 0.5)}})
	other, err := openAt(ctx, h.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	quantized(h.db)
	nearest := func(want ...string) {
		t.Helper()
		hits, err := h.db.vdb.Search(ctx, q, 1, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := paths(hits); !slices.Equal(got, want) {
			t.Fatalf("nearest = %v, want %v", got, want)
		}
	}
	nearest("a.md")
	if err := other.Apply(ctx, index.Batch{Removes: []string{"a.md"}}); err != nil {
		t.Fatal(err)
	}
	nearest("b.md")
	if err := other.Apply(ctx, index.Batch{Upserts: []index.Update{page("c.md", "c")}}); err != nil {
		t.Fatal(err)
	}
	p, err := other.Pending(ctx, 1)
	if err != nil || len(p) != 1 {
		t.Fatalf("Pending = %v, %v", p, err)
	}
	if _, err := other.Put(ctx, "t", []ChunkVector{{p[0].ID, q}}); err != nil {
		t.Fatal(err)
	}
	nearest("c.md")

	// CopyFrom an index holding other vectors.
	fresh := newVecHome(t, 8, map[string]string{"d.md": "notebook"}, map[string][][]float32{"d.md": {q}})
	fresh.db.Close()
	if err := other.CopyFrom(ctx, fresh.db.Path()); err != nil {
		t.Fatal(err)
	}
	nearest("d.md")

	// Another model: no vectors until they are made again.
	if _, err := other.SetModel(ctx, Model{Provider: "t", Model: "t2", Dimensions: 8}); err != nil {
		t.Fatal(err)
	}
	nearest()
}

// TestSearchVectorsConcurrent: searches through the bits run in parallel
// with each other and with writes to the vectors (run with -race).
func TestSearchVectorsConcurrent(t *testing.T) {
	ctx := context.Background()
	const dims = 32
	r := rand.New(rand.NewSource(13))
	files, vecs := map[string]string{}, map[string][][]float32{}
	for i := range 30 {
		path := fmt.Sprintf("notes/n%02d.md", i)
		files[path] = "notebook"
		for range 10 {
			vecs[path] = append(vecs[path], randomUnit(r, dims))
		}
	}
	h := newVecHome(t, dims, files, vecs)
	quantized(h.db)
	queries := make([][]float32, 20)
	for i := range queries {
		queries[i] = randomUnit(r, dims)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				hits, err := h.db.vdb.Search(ctx, queries[(g+i)%len(queries)], 10, nil, "")
				if err == nil && len(hits) > 10 {
					err = fmt.Errorf("%d hits", len(hits))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := rand.New(rand.NewSource(14))
		for i := range 15 {
			path := fmt.Sprintf("notes/n%02d.md", i)
			if err := h.db.Apply(ctx, index.Batch{Upserts: []index.Update{page(path, "again", "and again")}}); err != nil {
				errs <- err
				return
			}
			p, err := h.db.Pending(ctx, 10)
			if err != nil {
				errs <- err
				return
			}
			var cv []ChunkVector
			for _, c := range p {
				cv = append(cv, ChunkVector{c.ID, randomUnit(w, dims)})
			}
			if _, err := h.db.Put(ctx, "t", cv); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestHammingUnrolled: the unrolled loop for 384 dimensions gives the
// distances and counts of the generic one.
func TestHammingUnrolled(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	p := &bitPart{}
	all := map[int64]bool{}
	for i := range 1000 {
		p.ids = append(p.ids, int64(i))
		all[int64(i)] = true
		for range 6 {
			p.bits = append(p.bits, r.Uint64())
		}
	}
	query := []uint64{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
	fast, slow := make([]uint16, 1000), make([]uint16, 1000)
	fastHist, slowHist := make([]int, 385), make([]int, 385)
	hamming(fast, p, query, nil, fastHist)
	hamming(slow, p, query, all, slowHist) // allow forces the generic loop
	if !slices.Equal(fast, slow) || !slices.Equal(fastHist, slowHist) {
		t.Fatalf("unrolled distances differ from the generic loop's")
	}
	if fastHist[0] == 1000 {
		t.Fatal("every distance is 0")
	}
}
