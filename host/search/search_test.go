package search

import (
	"math"
	"testing"

	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/index"
)

// TestLinearRank: each side is scaled by its best candidate and the two
// are averaged with the vector weight; a hit found by vectors alone has no
// keyword part, a keyword hit the neighbour search missed keeps its cosine.
func TestLinearRank(t *testing.T) {
	hit := func(id int64, bm25, dist float64) index.Hit {
		return index.Hit{ChunkID: id, BM25: bm25, Distance: dist}
	}
	bm25 := []index.Hit{hit(1, -8, 0), hit(2, -4, 0), hit(3, -2, 0)}
	vhits := []index.Hit{hit(4, 0, 0.2), hit(2, 0, 0.4)} // cosine 0.8, 0.6
	sims := map[int64]float64{4: 0.8, 2: 0.6, 1: 0.1, 3: -0.3}
	got := linearRank(1, bm25, vhits, sims)
	want := map[int64]float64{
		1: (1 + 0.1/0.8) / 2,   // best keyword hit, far from the query
		2: (0.5 + 0.6/0.8) / 2, // half the best BM25, near the query
		3: (0.25 + 0) / 2,      // negative similarity counts as none
		4: (0 + 1.0) / 2,       // nearest, no keyword match
	}
	order := []int64{2, 1, 4, 3}
	for i, s := range got {
		if s.Hit.ChunkID != order[i] || math.Abs(s.Score-want[s.Hit.ChunkID]) > 0.001 {
			t.Errorf("%d: chunk %d score %v, want chunk %d score %.3f", i, s.Hit.ChunkID, s.Score, order[i], want[order[i]])
		}
	}
	// Weight 0 is keyword order; FTS5's clamped IDF (BM25 0) ties at 1.
	got = linearRank(0, []index.Hit{hit(5, 0, 0), hit(6, 0, 0)}, nil, map[int64]float64{5: 0.2, 6: 0.9})
	if len(got) != 2 || got[0].Score != 1 || got[1].Score != 1 || got[0].Hit.ChunkID != 5 {
		t.Errorf("weight 0: %+v", got)
	}
}

// TestRRFRank: with fusion: rrf only ranks count; a chunk first in both
// lists scores 1.
func TestRRFRank(t *testing.T) {
	hit := func(id int64) index.Hit { return index.Hit{ChunkID: id} }
	search := config.Default().Memory.Search
	search.Fusion, search.FusionK, search.VectorWeight = config.FusionRRF, 60, 1
	got := rrfRank(search, []index.Hit{hit(1), hit(2)}, []index.Hit{hit(1), hit(3)})
	if len(got) != 3 || got[0].Hit.ChunkID != 1 || got[0].Score != 1 {
		t.Fatalf("rrfRank = %+v", got)
	}
	// 2 and 3 are each second in one list: equal scores, keyword first.
	if got[1].Hit.ChunkID != 2 || got[2].Hit.ChunkID != 3 || got[1].Score != got[2].Score || math.Abs(got[1].Score-0.5*61/62) > 0.001 {
		t.Errorf("rrfRank = %+v", got)
	}
}
