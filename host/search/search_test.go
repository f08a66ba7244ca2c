package search

import (
	"math"
	"slices"
	"testing"

	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/sessions"
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

// TestBySession: a turn counts with the best three of its session; a
// session matching in several places lifts its turns over an equal turn
// alone in its session, the best still scores 1, and weight 0 changes
// nothing.
func TestBySession(t *testing.T) {
	turn := func(id int64, session string, score float64) Scored {
		return Scored{index.Hit{ChunkID: id, Path: session}, score}
	}
	ranked := []Scored{turn(1, "a", 1), turn(2, "b", 0.78), turn(3, "c", 0.7), turn(4, "c", 0.6), turn(5, "c", 0.5), turn(6, "c", 0.4)}
	got := BySession(ranked, 0.3)
	want := []struct {
		id    int64
		score float64
	}{
		{1, (1 + 0.3*1.0/3) / 1.3},
		{3, (0.7 + 0.3*1.8/3) / 1.3}, // c's best three: 0.7, 0.6, 0.5
		{2, (0.78 + 0.3*0.78/3) / 1.3},
		{4, (0.6 + 0.3*1.8/3) / 1.3},
		{5, (0.5 + 0.3*1.8/3) / 1.3},
		{6, (0.4 + 0.3*1.8/3) / 1.3},
	}
	for i, w := range want {
		if got[i].Hit.ChunkID != w.id || math.Abs(got[i].Score-w.score/want[0].score) > 0.0006 {
			t.Errorf("%d: chunk %d score %v, want chunk %d score %.4f", i, got[i].Hit.ChunkID, got[i].Score, w.id, w.score)
		}
	}
	if got := BySession(ranked, 0); &got[0] != &ranked[0] {
		t.Error("weight 0 made a new ranking")
	}
	if ranked[1].Hit.ChunkID != 2 {
		t.Error("BySession changed its input")
	}
}

// BenchmarkBySession: what the session step adds to a conversation
// search, at its usual 200 candidates (MaxResults 50) over 20 sessions.
func BenchmarkBySession(b *testing.B) {
	ranked := make([]Scored, 200)
	for i := range ranked {
		ranked[i] = Scored{index.Hit{ChunkID: int64(i), Path: "sessions/s" + string(rune('a'+i%20)) + ".jsonl"}, 1 - float64(i)/200}
	}
	for b.Loop() {
		BySession(ranked, SessionWeight)
	}
}

// TestBySpeaker: a question that names one of the speakers lifts that
// speaker's turns by the weight; one naming none, or both, changes nothing.
func TestBySpeaker(t *testing.T) {
	turn := func(id int64, speaker string, score float64) Scored {
		return Scored{index.Hit{ChunkID: id, Meta: speaker}, score}
	}
	speakerOf := func(h index.Hit) string { return h.Meta }
	ranked := []Scored{turn(1, "Ben", 1), turn(2, "Anna Lee", 0.95), turn(3, "Ben", 0.9), turn(4, "Anna Lee", 0.5)}
	ids := func(r []Scored) (out []int64) {
		for _, s := range r {
			out = append(out, s.Hit.ChunkID)
		}
		return out
	}
	got := BySpeaker(ranked, "What did Anna Lee's sister buy?", speakerOf, 0.1)
	if want := []int64{2, 1, 3, 4}; !slices.Equal(ids(got), want) {
		t.Errorf("named Anna Lee: order %v, want %v", ids(got), want)
	}
	if math.Abs(got[0].Score-1) > 1e-9 || math.Abs(got[1].Score-1/1.05) > 0.0006 {
		t.Errorf("scores %v, want the best 1 and the next 1/1.05", got)
	}
	for _, q := range []string{"What did Anna buy?", "What did Ben and Anna Lee buy?", "what did they buy?"} {
		if got := BySpeaker(ranked, q, speakerOf, 0.1); !slices.Equal(ids(got), []int64{1, 2, 3, 4}) {
			t.Errorf("%q: order %v, want it unchanged", q, ids(got))
		}
	}
	if got := BySpeaker(ranked, "did ben go?", speakerOf, 0.1); !slices.Equal(ids(got), []int64{1, 3, 2, 4}) {
		t.Errorf("named ben (any case): order %v", ids(got))
	}
	if ranked[1].Hit.ChunkID != 2 {
		t.Error("BySpeaker changed its input")
	}
}

// BenchmarkBySpeaker: what the speaker step adds to a conversation
// search, at its usual 200 candidates of two speakers, the speaker read
// from each hit's JSON meta as the host does (sessions.MetaSpeaker).
func BenchmarkBySpeaker(b *testing.B) {
	ranked := make([]Scored, 200)
	for i := range ranked {
		who := []string{"Caroline", "Melanie"}[i%2]
		meta := `{"session":"session_01","turns":["D1:3"],"role":"user","speaker":"` + who + `","timestamp":"2023-05-08T13:56:00"}`
		ranked[i] = Scored{index.Hit{ChunkID: int64(i), Meta: meta}, 1 - float64(i)/200}
	}
	speakerOf := func(h index.Hit) string { return sessions.MetaSpeaker(h.Meta) }
	for b.Loop() {
		BySpeaker(ranked, "What did Melanie paint recently?", speakerOf, SpeakerWeight)
	}
}
