package vectors

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost/index"
)

func TestVectors(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if err := db.Apply(ctx, index.Batch{Upserts: []index.Update{page("a.md", "alpha", "beta"), page("b.md", "gamma")}}); err != nil {
		t.Fatal(err)
	}
	_, pending, _ := db.Counts(ctx)
	if pending != 3 {
		t.Fatalf("pending = %d, want 3", pending)
	}
	m := Model{Provider: "hello", Model: "m1", Dimensions: 3}
	if changed, err := db.SetModel(ctx, m); err != nil || !changed {
		t.Fatalf("SetModel: %v %v", changed, err)
	}
	if changed, _ := db.SetModel(ctx, m); changed {
		t.Error("setting the same model again changed it")
	}
	chunks, err := db.Pending(ctx, 10)
	if err != nil || len(chunks) != 3 {
		t.Fatalf("Pending = %v, %v", chunks, err)
	}
	vecs := map[string][]float32{"alpha": {1, 0, 0}, "beta": {0, 1, 0}, "gamma": {0.9, 0.1, 0}}
	var cv []ChunkVector
	for _, c := range chunks {
		cv = append(cv, ChunkVector{c.ID, vecs[c.Text]})
	}
	if n, err := db.Put(ctx, "m1", cv); err != nil || n != 3 {
		t.Fatalf("Put = %d, %v", n, err)
	}
	if n, err := db.Put(ctx, "m1", cv); err != nil || n != 3 {
		t.Fatalf("Put again = %d, %v (must be harmless)", n, err)
	}
	if _, err := db.Put(ctx, "other", cv); !errors.Is(err, ErrModelChanged) {
		t.Errorf("vectors of another model: %v", err)
	}
	emb, pending, _ := db.Counts(ctx)
	if emb != 3 || pending != 0 {
		t.Errorf("counts %d/%d", emb, pending)
	}
	hits, err := db.vdb.Search(ctx, []float32{1, 0, 0}, 3, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, h := range hits {
		texts = append(texts, h.Text)
	}
	if !reflect.DeepEqual(texts, []string{"alpha", "gamma", "beta"}) || math.Abs(hits[0].Distance) > 1e-6 {
		t.Errorf("KNN = %v (d0 %v)", texts, hits[0].Distance)
	}
	idOf := map[string]int64{}
	for _, h := range hits {
		idOf[h.Text] = h.ChunkID
	}
	sims, err := db.Similarities(ctx, []float32{2, 0, 0}, []int64{idOf["gamma"], idOf["beta"], 999})
	if err != nil {
		t.Fatal(err)
	}
	if len(sims) != 2 || math.Abs(sims[idOf["beta"]]) > 1e-6 || math.Abs(sims[idOf["gamma"]]-0.9/math.Hypot(0.9, 0.1)) > 1e-5 {
		t.Errorf("Similarities = %v", sims)
	}
	// Replacing a page drops its vectors and queues its new chunks.
	if err := db.Apply(ctx, index.Batch{Upserts: []index.Update{page("b.md", "delta")}}); err != nil {
		t.Fatal(err)
	}
	emb, pending, _ = db.Counts(ctx)
	if emb != 2 || pending != 1 {
		t.Errorf("after replacing b.md: %d embedded, %d pending", emb, pending)
	}
	hits, _ = db.vdb.Search(ctx, []float32{1, 0, 0}, 5, nil, "")
	if len(hits) != 2 {
		t.Errorf("vectors of removed chunks still found: %d hits", len(hits))
	}
	// Another model: every chunk pending again, old vectors gone.
	if changed, err := db.SetModel(ctx, Model{Provider: "x", Model: "m2", Dimensions: 5}); err != nil || !changed {
		t.Fatal(err)
	}
	emb, pending, _ = db.Counts(ctx)
	if emb != 0 || pending != 3 {
		t.Errorf("after switching model: %d embedded, %d pending", emb, pending)
	}
}

// TestChunkContext: a chunk's context is embedded before its text, and
// searched by keyword below a chunk holding the words itself.
func TestChunkContext(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	u := index.Update{File: index.File{Path: "sessions/s.jsonl", Source: "sessions", Hash: "h", Mtime: time.Unix(1, 0), Size: 1, IndexedAt: time.Unix(2, 0)}}
	c := index.Chunk{Heading: "Mel", StartLine: 2, EndLine: 2, Text: "Mel: yes, last Tuesday", Context: "Caro: did you go hiking?"}
	c.Hash = c.EmbedText()
	u.Chunks = []index.Chunk{{Heading: "Caro", StartLine: 1, EndLine: 1, Text: "Caro: did you go hiking?", Hash: "1"}, c}
	if err := db.Apply(ctx, index.Batch{Upserts: []index.Update{u}}); err != nil {
		t.Fatal(err)
	}
	pend, err := db.Pending(ctx, 10)
	if err != nil || len(pend) != 2 {
		t.Fatalf("Pending = %v, %v", pend, err)
	}
	if pend[0].Text != "Caro: did you go hiking?" || pend[1].Text != "Caro: did you go hiking?\nMel: yes, last Tuesday" || pend[1].Hash != pend[1].Text {
		t.Errorf("Pending texts = %q, %q", pend[0].Text, pend[1].Text)
	}
	hits, err := db.DB.Search(ctx, index.Query{Text: "hiking", Limit: 10})
	if err != nil || len(hits) != 2 || hits[0].StartLine != 1 || hits[1].StartLine != 2 || hits[1].BM25 <= hits[0].BM25 {
		t.Errorf("keyword search for a word of the context: %+v, %v", hits, err)
	}
	if hits, _ := db.DB.Search(ctx, index.Query{Text: "tuesday", Limit: 10}); len(hits) != 1 || hits[0].StartLine != 2 {
		t.Errorf("keyword search for a word of the text: %+v", hits)
	}
}

// vecHome is an index with a vector for every chunk, and what a brute-force
// search needs to know of each chunk.
type vecHome struct {
	db     testDB
	chunks map[int64]vecChunk
}

type vecChunk struct {
	path, source string
	line         int
	vec          []float32
}

// newVecHome indexes files (path → source) with one chunk per vector of
// vecs[path], and stores those vectors.
func newVecHome(t *testing.T, dims int, files map[string]string, vecs map[string][][]float32) vecHome {
	t.Helper()
	ctx := context.Background()
	h := vecHome{db: open(t), chunks: map[int64]vecChunk{}}
	var b index.Batch
	for path, source := range files {
		u := page(path)
		u.File.Source = source
		for i := range vecs[path] {
			text := fmt.Sprintf("%s#%d", path, i)
			u.Chunks = append(u.Chunks, index.Chunk{StartLine: i + 1, EndLine: i + 1, Text: text, Hash: text})
		}
		b.Upserts = append(b.Upserts, u)
	}
	if err := h.db.Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := h.db.SetModel(ctx, Model{Provider: "t", Model: "t", Dimensions: dims}); err != nil {
		t.Fatal(err)
	}
	pending, err := h.db.Pending(ctx, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var cv []ChunkVector
	for _, p := range pending {
		path, n, _ := strings.Cut(p.Text, "#")
		i, _ := strconv.Atoi(n)
		h.chunks[p.ID] = vecChunk{path, files[path], i + 1, vecs[path][i]}
		cv = append(cv, ChunkVector{p.ID, vecs[path][i]})
	}
	if n, err := h.db.Put(ctx, "t", cv); err != nil || n != len(cv) {
		t.Fatalf("Put = %d, %v", n, err)
	}
	return h
}

// bruteForce is Search computed over every chunk: cosine, rounded
// as Search rounds, ties by path and line.
func (h vecHome) bruteForce(q []float32, k int, sources []string, path string) []index.Hit {
	var hits []index.Hit
	for id, c := range h.chunks {
		if !c.in(sources, path) {
			continue
		}
		var dot, nq, nc float64
		for i := range q {
			dot += float64(q[i]) * float64(c.vec[i])
			nq += float64(q[i]) * float64(q[i])
			nc += float64(c.vec[i]) * float64(c.vec[i])
		}
		hits = append(hits, index.Hit{ChunkID: id, Path: c.path, Source: c.source, StartLine: c.line, Distance: 1 - dot/math.Sqrt(nq*nc)})
	}
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if da, db := math.Round(a.Distance*1e5), math.Round(b.Distance*1e5); da != db {
			return da < db
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.StartLine < b.StartLine
	})
	return hits[:min(k, len(hits))]
}

// check runs Search and fails t unless it returns what bruteForce
// does.
func (h vecHome) check(t *testing.T, q []float32, k int, sources []string, path string) []index.Hit {
	t.Helper()
	got, err := h.db.vdb.Search(context.Background(), q, k, sources, path)
	if err != nil {
		t.Fatalf("Search(%v, %q): %v", sources, path, err)
	}
	want := h.bruteForce(q, k, sources, path)
	if len(got) != len(want) {
		t.Fatalf("Search(k=%d, %v, %q): %d hits, want %d", k, sources, path, len(got), len(want))
	}
	seen := map[int64]bool{}
	for i, g := range got {
		w := want[i]
		c, ok := h.chunks[g.ChunkID]
		// Two chunks within float noise of each other may come in
		// either order: the distances must agree rank by rank, and
		// each hit be an allowed chunk, found once.
		if seen[g.ChunkID] || !ok || !c.in(sources, path) || c.path != g.Path || c.source != g.Source || c.line != g.StartLine ||
			math.Abs(g.Distance-w.Distance) > 1e-5 {
			t.Fatalf("Search(k=%d, %v, %q) hit %d = %d %s:%d %.6f, want %d %s:%d %.6f", k, sources, path, i,
				g.ChunkID, g.Path, g.StartLine, g.Distance, w.ChunkID, w.Path, w.StartLine, w.Distance)
		}
		seen[g.ChunkID] = true
	}
	return got
}

// in reports whether a search limited to sources and path may return c.
func (c vecChunk) in(sources []string, path string) bool {
	return (len(sources) == 0 || slices.Contains(sources, c.source)) && (path == "" || c.path == path)
}

// near returns a unit vector at cosine cos to the unit vector q, in the
// direction of noise away from it.
func near(r *rand.Rand, q []float32, cos float64) []float32 {
	n := randomUnit(r, len(q))
	var dot float64
	for i := range q {
		dot += float64(q[i]) * float64(n[i])
	}
	var norm float64
	o := make([]float64, len(q))
	for i := range q {
		o[i] = float64(n[i]) - dot*float64(q[i])
		norm += o[i] * o[i]
	}
	sin := math.Sqrt(1 - cos*cos)
	out := make([]float32, len(q))
	for i := range q {
		out[i] = float32(cos*float64(q[i]) + sin*o[i]/math.Sqrt(norm))
	}
	return out
}

// TestSearchVectorsFiltered: a search limited to sources or to one file is
// exact however many closer chunks other sources hold: the filter runs
// inside the nearest-neighbour search, not after it.
func TestSearchVectorsFiltered(t *testing.T) {
	ctx := context.Background()
	const dims = 16
	r := rand.New(rand.NewSource(7))
	q := randomUnit(r, dims)
	files := map[string]string{"sessions/a.jsonl": "sessions", "sessions/b.jsonl": "sessions"}
	vecs := map[string][][]float32{
		// The one close session turn, behind 200 closer notebook chunks.
		"sessions/a.jsonl": {near(r, q, 0.2), near(r, q, 0.89), near(r, q, 0.1)},
		"sessions/b.jsonl": {near(r, q, 0.5), near(r, q, 0.3)},
	}
	for i := range 40 {
		path := fmt.Sprintf("notes/n%02d.md", i)
		files[path] = "notebook"
		for range 5 {
			vecs[path] = append(vecs[path], near(r, q, 0.9+0.09*r.Float64()))
		}
	}
	// A session too long to compare the query with each of its turns: its
	// vectors are searched by KNN.
	files["sessions/long.jsonl"] = "sessions"
	for range pointSearchMax + 50 {
		vecs["sessions/long.jsonl"] = append(vecs["sessions/long.jsonl"], near(r, q, 0.7*r.Float64()))
	}
	for i := range 10 {
		path := fmt.Sprintf("daily/d%02d.md", i)
		files[path] = "daily"
		vecs[path] = [][]float32{near(r, q, 0.8+0.19*r.Float64()), randomUnit(r, dims)}
	}
	h := newVecHome(t, dims, files, vecs)

	hits := h.check(t, q, 10, []string{"sessions"}, "")
	if len(hits) != 10 || hits[0].Path != "sessions/a.jsonl" || hits[0].StartLine != 2 || math.Abs(hits[0].Distance-0.11) > 1e-4 {
		t.Errorf("sessions: %d hits, first %+v", len(hits), hits[0])
	}
	hits = h.check(t, q, 10, nil, "sessions/a.jsonl")
	if len(hits) != 3 || hits[0].StartLine != 2 {
		t.Errorf("one session: %+v", hits)
	}
	h.check(t, q, 10, []string{"sessions"}, "sessions/a.jsonl")
	h.check(t, q, 2, []string{"sessions"}, "sessions/b.jsonl")
	if hits := h.check(t, q, 10, []string{"notebook", "daily"}, "sessions/a.jsonl"); len(hits) != 0 {
		t.Errorf("a session's file outside the sources: %d hits", len(hits))
	}
	hits = h.check(t, q, 10, []string{"notebook", "daily"}, "")
	if len(hits) != 10 {
		t.Errorf("notebook+daily: %d hits", len(hits))
	}
	for _, h := range hits {
		if h.Source == "sessions" {
			t.Errorf("notebook+daily returned %s", h.Path)
		}
	}
	h.check(t, q, 10, []string{"daily", "sessions", "daily"}, "")
	h.check(t, q, 10, []string{"sessions", "notebook"}, "")
	if hits := h.check(t, q, 10, []string{"elsewhere"}, ""); len(hits) != 0 {
		t.Errorf("an unknown source: %d hits", len(hits))
	}
	for range 20 {
		q := randomUnit(r, dims)
		for _, sources := range [][]string{nil, {"sessions"}, {"notebook"}, {"notebook", "daily"}, {"daily", "sessions"}} {
			h.check(t, q, 1+r.Intn(30), sources, "")
		}
		h.check(t, q, 1+r.Intn(5), nil, "notes/n07.md")
		h.check(t, q, 4, []string{"daily"}, "daily/d03.md")
		h.check(t, q, 1+r.Intn(30), []string{"sessions"}, "sessions/long.jsonl")
		h.check(t, q, 1+r.Intn(30), nil, "sessions/long.jsonl")
	}
	if hits := h.check(t, q, 10, []string{"notebook"}, "sessions/long.jsonl"); len(hits) != 0 {
		t.Errorf("a long session's file outside the sources: %d hits", len(hits))
	}
	h.check(t, q, 500, nil, "")

	// A chunk still without its vector is not found, by either way of
	// searching a file.
	grown := page("sessions/b.jsonl", "not embedded yet")
	grown.File.Source = "sessions"
	grown.Chunks[0].StartLine, grown.Chunks[0].EndLine = 3, 3
	long := page("sessions/long.jsonl", "not embedded yet either")
	long.File.Source = "sessions"
	long.Chunks[0].StartLine, long.Chunks[0].EndLine = pointSearchMax+51, pointSearchMax+51
	if err := h.db.Apply(ctx, index.Batch{Appends: []index.Update{grown, long}}); err != nil {
		t.Fatal(err)
	}
	h.check(t, q, 10, nil, "sessions/b.jsonl")
	h.check(t, q, 600, nil, "sessions/long.jsonl")
	h.check(t, q, 10, []string{"sessions"}, "")

	// Removing a file removes its vectors from filtered searches too.
	if err := h.db.Apply(ctx, index.Batch{Removes: []string{"sessions/a.jsonl"}}); err != nil {
		t.Fatal(err)
	}
	for id, c := range h.chunks {
		if c.path == "sessions/a.jsonl" {
			delete(h.chunks, id)
		}
	}
	h.check(t, q, 10, []string{"sessions"}, "")
	if hits := h.check(t, q, 10, nil, "sessions/a.jsonl"); len(hits) != 0 {
		t.Errorf("after removing a session: %d of its hits", len(hits))
	}
	if n, err := h.db.Rows(ctx); err != nil || n != len(h.chunks) {
		t.Errorf("Rows = %d, %v; want %d", n, err, len(h.chunks))
	}
}
