package index

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestVectors(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if err := db.Apply(ctx, Batch{Upserts: []Update{page("a.md", "alpha", "beta"), page("b.md", "gamma")}}); err != nil {
		t.Fatal(err)
	}
	_, pending, _ := db.VectorCounts(ctx)
	if pending != 3 {
		t.Fatalf("pending = %d, want 3", pending)
	}
	m := VectorModel{Provider: "hello", Model: "m1", Dimensions: 3}
	if changed, err := db.SetVectorModel(ctx, m); err != nil || !changed {
		t.Fatalf("SetVectorModel: %v %v", changed, err)
	}
	if changed, _ := db.SetVectorModel(ctx, m); changed {
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
	if n, err := db.PutVectors(ctx, "m1", cv); err != nil || n != 3 {
		t.Fatalf("PutVectors = %d, %v", n, err)
	}
	if n, err := db.PutVectors(ctx, "m1", cv); err != nil || n != 3 {
		t.Fatalf("PutVectors again = %d, %v (must be harmless)", n, err)
	}
	if _, err := db.PutVectors(ctx, "other", cv); !errors.Is(err, ErrModelChanged) {
		t.Errorf("vectors of another model: %v", err)
	}
	emb, pending, _ := db.VectorCounts(ctx)
	if emb != 3 || pending != 0 {
		t.Errorf("counts %d/%d", emb, pending)
	}
	hits, err := db.SearchVectors(ctx, []float32{1, 0, 0}, 3, nil, "")
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
	if err := db.Apply(ctx, Batch{Upserts: []Update{page("b.md", "delta")}}); err != nil {
		t.Fatal(err)
	}
	emb, pending, _ = db.VectorCounts(ctx)
	if emb != 2 || pending != 1 {
		t.Errorf("after replacing b.md: %d embedded, %d pending", emb, pending)
	}
	hits, _ = db.SearchVectors(ctx, []float32{1, 0, 0}, 5, nil, "")
	if len(hits) != 2 {
		t.Errorf("vectors of removed chunks still found: %d hits", len(hits))
	}
	// Another model: every chunk pending again, old vectors gone.
	if changed, err := db.SetVectorModel(ctx, VectorModel{Provider: "x", Model: "m2", Dimensions: 5}); err != nil || !changed {
		t.Fatal(err)
	}
	emb, pending, _ = db.VectorCounts(ctx)
	if emb != 0 || pending != 3 {
		t.Errorf("after switching model: %d embedded, %d pending", emb, pending)
	}
}

func TestCache(t *testing.T) {
	ctx := context.Background()
	c, err := OpenCache(ctx, filepath.Join(t.TempDir(), "embeddings.db"))
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

func TestFuse(t *testing.T) {
	got := Fuse(60, []int64{1, 2, 3}, []int64{3, 1, 4})
	var ids []int64
	for _, f := range got {
		ids = append(ids, f.ID)
	}
	// 1: 1/61+1/62; 3: 1/63+1/61; 2: 1/62; 4: 1/63.
	if !reflect.DeepEqual(ids, []int64{1, 3, 2, 4}) {
		t.Errorf("order = %v", ids)
	}
	if s := Fuse(60, []int64{7}, []int64{7})[0].Score; math.Abs(s-1) > 1e-12 {
		t.Errorf("first in both lists scores %v, want 1", s)
	}
	if s := got[2].Score; math.Abs(s-(1.0/62)/(2.0/61)) > 1e-12 {
		t.Errorf("score of 2 = %v", s)
	}
	if len(Fuse(60)) != 0 || len(Fuse(60, nil, nil)) != 0 {
		t.Error("empty fusion")
	}
}

func TestFuseWeighted(t *testing.T) {
	// With the second list weighted low, an id first only there ranks
	// below one first only in the first list.
	got := FuseWeighted(60, []float64{1, 0.3}, []int64{1, 2}, []int64{2, 3})
	if got[0].ID != 2 || got[1].ID != 1 || got[2].ID != 3 {
		t.Errorf("order = %+v", got)
	}
	if s := FuseWeighted(60, []float64{1, 0.3}, []int64{7}, []int64{7})[0].Score; math.Abs(s-1) > 1e-12 {
		t.Errorf("first in both lists scores %v, want 1", s)
	}
	if a, b := Fuse(10, []int64{1}, []int64{2}), FuseWeighted(10, nil, []int64{1}, []int64{2}); a[0].ID != b[0].ID || a[0].Score != b[0].Score {
		t.Error("Fuse and FuseWeighted(nil) differ")
	}
}

// TestChunkContext: a chunk's context is embedded before its text, and
// searched by keyword below a chunk holding the words itself.
func TestChunkContext(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	u := Update{File: File{Path: "sessions/s.jsonl", Source: "sessions", Hash: "h", Mtime: time.Unix(1, 0), Size: 1, IndexedAt: time.Unix(2, 0)}}
	c := Chunk{Heading: "Mel", StartLine: 2, EndLine: 2, Text: "Mel: yes, last Tuesday", Context: "Caro: did you go hiking?"}
	c.Hash = c.EmbedText()
	u.Chunks = []Chunk{{Heading: "Caro", StartLine: 1, EndLine: 1, Text: "Caro: did you go hiking?", Hash: "1"}, c}
	if err := db.Apply(ctx, Batch{Upserts: []Update{u}}); err != nil {
		t.Fatal(err)
	}
	pend, err := db.Pending(ctx, 10)
	if err != nil || len(pend) != 2 {
		t.Fatalf("Pending = %v, %v", pend, err)
	}
	if pend[0].Text != "Caro: did you go hiking?" || pend[1].Text != "Caro: did you go hiking?\nMel: yes, last Tuesday" || pend[1].Hash != pend[1].Text {
		t.Errorf("Pending texts = %q, %q", pend[0].Text, pend[1].Text)
	}
	hits, err := db.Search(ctx, Query{Text: "hiking", Limit: 10})
	if err != nil || len(hits) != 2 || hits[0].StartLine != 1 || hits[1].StartLine != 2 || hits[1].BM25 <= hits[0].BM25 {
		t.Errorf("keyword search for a word of the context: %+v, %v", hits, err)
	}
	if hits, _ := db.Search(ctx, Query{Text: "tuesday", Limit: 10}); len(hits) != 1 || hits[0].StartLine != 2 {
		t.Errorf("keyword search for a word of the text: %+v", hits)
	}
}
