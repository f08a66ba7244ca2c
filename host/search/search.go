// Package search ranks the index's chunks for a query: BM25 through FTS5,
// and, given the query's vector, the nearest chunks through sqlite-vec,
// fused into one 0..1 score (memory.search.fusion). It also cuts snippets.
// It holds no state; every function may be called from many goroutines.
package search

import (
	"context"
	"errors"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/index/ftstext"
	"github.com/memhost/memhost/index/vaultrows"
	"github.com/memhost/memhost/index/vectors"
)

// Query is one search: text, the groups searched, optionally one file,
// and how many candidates each of BM25 and KNN contributes.
type Query struct {
	Text    string
	Sources []string
	Path    string
	Scope   vaultrows.Scope // pages by folder and tags (the filters of recall)
	N       int
}

// Scored is a hit with its 0..1 score, best first in a ranking.
type Scored struct {
	Hit   index.Hit
	Score float64
}

// Keyword returns the BM25 hits of q, best first, and their keyword-mode
// ranking (see relativeScore). A query with no searchable word is a
// bad-input error.
func Keyword(ctx context.Context, idx *index.DB, q Query) ([]index.Hit, []Scored, error) {
	hits, err := idx.Search(ctx, index.Query{Text: q.Text, Sources: q.Sources, Path: q.Path, Scope: q.Scope, Limit: q.N})
	if errors.Is(err, ftstext.ErrNoTerms) {
		return nil, nil, fault.BadInputf("query", "the query %q has no searchable words", q.Text)
	}
	if err != nil {
		return nil, nil, err
	}
	ranked := make([]Scored, len(hits))
	for i, hit := range hits {
		ranked[i] = Scored{hit, relativeScore(hit.BM25, hits[0].BM25)}
	}
	return hits, ranked, nil
}

// Nearest is the vector half of a hybrid search: the q.N chunks nearest to qv
// that q allows, limited inside the KNN, nearest first, down to the
// similarity floor. It does not need the BM25 hits, so it may run beside
// the keyword search.
func Nearest(ctx context.Context, vec *vectors.DB, s config.Search, q Query, qv []float32) ([]index.Hit, error) {
	sc := q.Scope
	sc.Path = q.Path
	vhits, err := vec.SearchIn(ctx, qv, q.N, q.Sources, sc)
	if err != nil {
		return nil, err
	}
	// Vector hits under the similarity floor are no candidates: a query
	// related to nothing brings no neighbours.
	for i, hit := range vhits {
		if 1-hit.Distance < s.MinSimilarity {
			return vhits[:i], nil // nearest first: the rest are further still
		}
	}
	return vhits, nil
}

// Combine ranks the BM25 hits and the vector hits (Nearest's, for qv)
// together: the hybrid ranking.
func Combine(ctx context.Context, vec *vectors.DB, s config.Search, qv []float32, bm25, vhits []index.Hit) ([]Scored, error) {
	if s.Fusion == config.FusionRRF {
		return rrfRank(s, bm25, vhits), nil
	}
	// The vector side of keyword hits the neighbour search did not reach.
	sims := make(map[int64]float64, len(bm25)+len(vhits))
	for _, hit := range vhits {
		sims[hit.ChunkID] = 1 - hit.Distance
	}
	var missing []int64
	for _, hit := range bm25 {
		if _, ok := sims[hit.ChunkID]; !ok {
			missing = append(missing, hit.ChunkID)
		}
	}
	more, err := vec.Similarities(ctx, qv, missing)
	if err != nil {
		return nil, err
	}
	for id, sim := range more {
		sims[id] = sim
	}
	return linearRank(s.VectorWeight, bm25, vhits, sims), nil
}

// linearRank fuses by a weighted mean of the two scores, each scaled so
// the best candidate has 1: BM25 over the best BM25 (0 for a hit found by
// vectors alone) and cosine similarity over the highest one. Unlike rank
// fusion it keeps how far apart the scores are: a turn far ahead on one
// side is not pulled level with one barely ahead. On the LoCoMo dev split
// it beats Reciprocal Rank Fusion by 5-10 points of R@5 (docs/benchmarks.md).
func linearRank(weight float64, bm25, vhits []index.Hit, sims map[int64]float64) []Scored {
	best := 0.0
	for _, s := range sims {
		best = max(best, s)
	}
	out := make([]Scored, 0, len(bm25)+len(vhits))
	seen := make(map[int64]bool, len(bm25)+len(vhits))
	add := func(hit index.Hit, kw float64) {
		seen[hit.ChunkID] = true
		vec := 0.0
		if best > 0 {
			vec = max(0, sims[hit.ChunkID]) / best
		}
		out = append(out, Scored{hit, (kw + weight*vec) / (1 + weight)})
	}
	for _, hit := range bm25 {
		add(hit, bm25Ratio(hit.BM25, bm25[0].BM25))
	}
	for _, hit := range vhits {
		if !seen[hit.ChunkID] {
			add(hit, 0)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	for i := range out {
		out[i].Score = math.Round(out[i].Score*1000) / 1000
	}
	return out
}

// rrfRank fuses by weighted Reciprocal Rank Fusion (memory.search.fusionK,
// vectorWeight): only the order of each list counts.
func rrfRank(s config.Search, bm25, vhits []index.Hit) []Scored {
	byID := make(map[int64]index.Hit, len(bm25)+len(vhits))
	kw := make([]int64, len(bm25))
	for i, hit := range bm25 {
		kw[i] = hit.ChunkID
		byID[hit.ChunkID] = hit
	}
	vec := make([]int64, len(vhits))
	for i, hit := range vhits {
		vec[i] = hit.ChunkID
		if _, ok := byID[hit.ChunkID]; !ok {
			byID[hit.ChunkID] = hit
		}
	}
	fused := FuseWeighted(s.FusionK, []float64{1, s.VectorWeight}, kw, vec)
	out := make([]Scored, len(fused))
	for i, f := range fused {
		out[i] = Scored{byID[f.ID], math.Round(f.Score*1000) / 1000}
	}
	return out
}

// relativeScore maps a BM25 value (negative, lower is better) to 0..1: the
// square root of its ratio to the best one, rounded to three places. The
// root keeps a page that matches one of two query words in sight (BM25
// ratios fall off fast), while minScore 0.25 still drops pages scoring
// under 1/16 of the best.
func relativeScore(bm25, best float64) float64 {
	return math.Round(math.Sqrt(bm25Ratio(bm25, best))*1000) / 1000
}

// bm25Ratio is a BM25 value (negative, lower is better) over the best
// one: 1 for the best, towards 0 for the worst.
func bm25Ratio(bm25, best float64) float64 {
	if best >= 0 || bm25 >= 0 {
		return 1 // FTS5 clamps IDF for words in over half the rows: all tie
	}
	return bm25 / best
}

// SessionWeight is the share of a turn's score in a search of the
// transcripts that comes from its session: the mean of the best
// sessionTop scores among the session's candidates (the turn's own
// among them). A question's answer is often spread over a few turns of
// one talk, and a turn of a session that matches in several places is
// likelier the one meant than an equal turn alone in its session. Chosen
// on the LoCoMo dev split from 0, 0.1, 0.2, 0.3 and 0.5 keyword-only, and
// checked at 0.3 hybrid with MiniLM (docs/benchmarks.md).
const SessionWeight = 0.3

// sessionTop is how many of a session's best scores make its part
// (fewer count as 0): 3, the first value tried, not tuned.
const sessionTop = 3

// BySession adds to each candidate weight times the mean of the best
// sessionTop scores of its file's candidates (a transcript's file is one
// session), sorts again, best first, and scales the scores so the best
// has 1, as in either mode before. ranked must be best first.
func BySession(ranked []Scored, weight float64) []Scored {
	if weight <= 0 || len(ranked) < 2 {
		return ranked
	}
	sums := map[string]float64{}
	counts := map[string]int{}
	for _, r := range ranked {
		if counts[r.Hit.Path] < sessionTop {
			counts[r.Hit.Path]++
			sums[r.Hit.Path] += r.Score
		}
	}
	out := make([]Scored, len(ranked))
	for i, r := range ranked {
		out[i] = Scored{r.Hit, r.Score + weight*sums[r.Hit.Path]/sessionTop}
	}
	return rescore(out)
}

// SpeakerWeight is what a turn gains in a search of the transcripts when
// the query names its speaker and no other speaker among the candidates
// ("What did Melanie paint?"): who said a thing is most of what such a
// question asks, and a name said in half the turns weighs next to
// nothing in BM25 (FTS5 clamps the IDF of words in over half the rows)
// or in a sentence embedding. On the LoCoMo dev split the evidence of
// such questions is the named speaker's in 97-100% of the multi-hop,
// temporal, open-domain and single-hop ones, and in 24% of the
// adversarial ones, which name the wrong person on purpose. Chosen from
// 0, 0.05, 0.1, 0.15, 0.2 and 0.3 hybrid with MiniLM, after the session
// step (docs/benchmarks.md): 0.1 gave the best R@10 short of lowering any
// category's R@10; adversarial R@5 falls 4 points there (R@10 rises).
const SpeakerWeight = 0.1

// BySpeaker adds weight to the score of each candidate whose speaker
// (speakerOf) the query names, when it names exactly one of the
// candidates' speakers (as whole words, in any case; "Anna's" names
// Anna), sorts again, best first, and scales the scores so the best has
// 1. ranked must be best first; it is not changed.
func BySpeaker(ranked []Scored, query string, speakerOf func(index.Hit) string, weight float64) []Scored {
	if weight <= 0 || len(ranked) < 2 {
		return ranked
	}
	words := " " + strings.Join(nameWords(query), " ") + " "
	speakers := make([]string, len(ranked))
	named, seen := "", map[string]bool{}
	for i, r := range ranked {
		sp := speakerOf(r.Hit)
		speakers[i] = sp
		if sp == "" || seen[sp] {
			continue
		}
		seen[sp] = true
		w := nameWords(sp)
		if len(w) == 0 || !strings.Contains(words, " "+strings.Join(w, " ")+" ") {
			continue
		}
		if named != "" {
			return ranked // two speakers named: no one is lifted
		}
		named = sp
	}
	if named == "" {
		return ranked
	}
	out := make([]Scored, len(ranked))
	for i, r := range ranked {
		out[i] = r
		if speakers[i] == named {
			out[i].Score += weight
		}
	}
	return rescore(out)
}

// WindowWeight is what a turn gains in a conversation search when its
// time falls in the window the query's time words name ("what did I buy
// last Saturday?"): the words say when, and neither BM25 nor a sentence
// embedding reads a date off them. A lift rather than a filter, since
// people misplace days ("two weeks ago" that was three) and a strong
// match outside the window should still be found. Set equal to
// SpeakerWeight, the lift for the other thing a question says that the
// text of a turn does not, and not tuned (the one value tried): no
// question of the LongMemEval dev split names a window in words the
// resolver reads; on the LoCoMo dev split, whose questions name dates
// ("on October 13, 2023", "in July 2023"), it took keyword R@5 / R@10
// from 69.1 / 78.8 to 70.5 / 79.6, no category falling
// (docs/benchmarks.md).
const WindowWeight = 0.1

// ByWindow adds weight to the score of each candidate in (inWindow tells),
// sorts again, best first, and scales the scores so the best has 1.
// ranked must be best first; it is not changed.
func ByWindow(ranked []Scored, inWindow func(index.Hit) bool, weight float64) []Scored {
	if weight <= 0 || len(ranked) < 2 {
		return ranked
	}
	out := make([]Scored, len(ranked))
	lifted := false
	for i, r := range ranked {
		out[i] = r
		if inWindow(r.Hit) {
			out[i].Score += weight
			lifted = true
		}
	}
	if !lifted {
		return ranked
	}
	return rescore(out)
}

// rescore sorts out best first and scales its scores so the best has 1,
// rounded to three places, as a ranking of either mode has them.
func rescore(out []Scored) []Scored {
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	best := out[0].Score
	for i := range out {
		if best > 0 {
			out[i].Score /= best
		}
		out[i].Score = math.Round(out[i].Score*1000) / 1000
	}
	return out
}

// nameWords are the lower-case runs of letters and digits of s.
func nameWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
