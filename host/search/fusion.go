package search

import "sort"

// Fused is one result of rank fusion.
type Fused struct {
	ID    int64
	Score float64 // 0..1
	Ranks []int   // 1-based rank in each list, 0 where absent
}

// Fuse merges ranked lists of chunk ids with Reciprocal Rank Fusion:
// score(d) = Σ 1/(k + rank(d)) over the lists that hold d, divided by the
// most any id can get (len(lists)/(k+1)), so an id first in every list
// scores 1. Ties are broken by the best single rank, then by id order of
// the first list that holds them, so equal inputs give equal outputs.
func Fuse(k int, lists ...[]int64) []Fused {
	return FuseWeighted(k, nil, lists...)
}

// FuseWeighted is Fuse with a weight per list (nil: all 1): list i adds
// weights[i]/(k + rank). Scores are divided by the sum of the weights over
// k+1, so an id first in every list still scores 1.
func FuseWeighted(k int, weights []float64, lists ...[]int64) []Fused {
	if k < 1 {
		k = 60
	}
	w := func(i int) float64 {
		if weights == nil {
			return 1
		}
		return weights[i]
	}
	byID := map[int64]*Fused{}
	var order []int64
	for li, list := range lists {
		for r, id := range list {
			f, ok := byID[id]
			if !ok {
				f = &Fused{ID: id, Ranks: make([]int, len(lists))}
				byID[id] = f
				order = append(order, id)
			}
			if f.Ranks[li] == 0 { // an id twice in one list counts once
				f.Ranks[li] = r + 1
				f.Score += w(li) / float64(k+r+1)
			}
		}
	}
	total := 0.0
	for i := range lists {
		total += w(i)
	}
	best := total / float64(k+1)
	out := make([]Fused, 0, len(order))
	for _, id := range order {
		f := byID[id]
		f.Score /= best
		out = append(out, *f)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return bestRank(out[i].Ranks) < bestRank(out[j].Ranks)
	})
	return out
}

func bestRank(ranks []int) int {
	b := int(^uint(0) >> 1)
	for _, r := range ranks {
		if r > 0 && r < b {
			b = r
		}
	}
	return b
}
