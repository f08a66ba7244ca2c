package vectors

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/index/vaultrows"
)

// TestSearchScoped: recall's filters (a folder, tags) are exact on both
// halves of hybrid search: BM25 returns every match in scope and nothing
// else, and the vector search the k nearest of the chunks in scope however
// many closer chunks lie outside it, small scopes (compared one by one),
// large ones (KNN with the allowed ids) and the two-stage search alike.
func TestSearchScoped(t *testing.T) {
	ctx := context.Background()
	const dims = 16
	r := rand.New(rand.NewSource(11))
	q := randomUnit(r, dims)
	files := map[string]string{}
	vecs := map[string][][]float32{}
	tags := map[string][]string{}
	add := func(path, source string, n int, cos func() float64, t ...string) {
		files[path], tags[path] = source, t
		for range n {
			vecs[path] = append(vecs[path], near(r, q, cos()))
		}
	}
	for i := range 40 { // close, untagged, outside knowledge/
		add(fmt.Sprintf("notes/n%02d.md", i), "notebook", 5, func() float64 { return 0.9 + 0.09*r.Float64() })
	}
	for i := range 12 {
		tg := []string{"person"}
		if i%3 == 0 {
			tg = append(tg, "team/design")
		}
		add(fmt.Sprintf("knowledge/people/p%02d.md", i), "notebook", 3, func() float64 { return 0.6 * r.Float64() }, tg...)
	}
	add("knowledge.md", "notebook", 2, func() float64 { return 0.5 }, "project")
	add("knowledgebase/x.md", "notebook", 2, func() float64 { return 0.95 }, "person") // not under knowledge/
	for i := range 130 {                                                               // a scope larger than pointSearchMax
		add(fmt.Sprintf("archive/a%03d.md", i), "notebook", 5, func() float64 { return 0.7 * r.Float64() }, "old")
	}
	for i := range 10 {
		add(fmt.Sprintf("daily/2026-11-%02d.md", i+1), "daily", 2, func() float64 { return 0.8 + 0.19*r.Float64() }, "meeting")
	}
	add("sessions/s.jsonl", "sessions", 4, func() float64 { return 0.99 })
	h := newVecHome(t, dims, files, vecs)
	for path, tg := range tags {
		for _, tag := range tg {
			if _, err := h.db.SQL().Exec(`INSERT INTO page_tags(tag, file_path) VALUES (?, ?)`, tag, path); err != nil {
				t.Fatal(err)
			}
		}
	}
	hasTag := func(path, tag string) bool {
		for _, t := range tags[path] {
			if t == tag || strings.HasPrefix(t, tag+"/") {
				return true
			}
		}
		return false
	}
	inScope := func(path string, sc vaultrows.Scope) bool {
		if p := strings.TrimSuffix(sc.Prefix, "/"); p != "" && path != p && path != p+".md" && !strings.HasPrefix(path, p+"/") {
			return false
		}
		for _, tag := range sc.Tags {
			if !hasTag(path, tag) {
				return false
			}
		}
		return sc.Path == "" || path == sc.Path
	}
	scopes := []vaultrows.Scope{
		{Prefix: "knowledge/"}, {Prefix: "knowledge"}, {Prefix: "knowledge/people/p03.md"}, {Prefix: "knowledge/people/p03"},
		{Tags: []string{"person"}}, {Tags: []string{"team"}}, {Tags: []string{"team/design", "person"}}, {Tags: []string{"tea"}},
		{Prefix: "knowledge", Tags: []string{"project"}}, {Tags: []string{"old"}}, {Prefix: "archive/"}, {Tags: []string{"meeting"}},
		{Prefix: "sessions/"}, {Prefix: "nowhere/"}, {Tags: []string{"old"}, Path: "archive/a007.md"},
	}
	for _, mode := range []func(testDB){exact, quantized} {
		mode(h.db)
		for _, sc := range scopes {
			sub := vecHome{db: h.db, chunks: map[int64]vecChunk{}}
			for id, c := range h.chunks {
				if inScope(c.path, sc) {
					sub.chunks[id] = c
				}
			}
			for _, sources := range [][]string{nil, {"notebook"}, {"daily"}, {"notebook", "daily"}} {
				for _, k := range []int{1, 7, 40} {
					qq := q
					if k == 40 {
						qq = randomUnit(r, dims)
					}
					hits, err := h.db.SearchIn(ctx, qq, k, sources, sc)
					if err != nil {
						t.Fatalf("SearchIn(%v, %+v): %v", sources, sc, err)
					}
					sub.checkRanked(t, hits, qq, k, sources, "")
					if h.db.coarseRatio == math.MaxInt32 {
						for i, w := range sub.bruteForce(qq, k, sources, "") {
							if math.Abs(hits[i].Distance-w.Distance) > 1e-5 {
								t.Fatalf("scope %+v %v k=%d: hit %d at %.6f, the %d-th nearest in scope is at %.6f", sc, sources, k, i, hits[i].Distance, i, w.Distance)
							}
						}
					}
				}
			}
		}
	}

	// The keyword half: every chunk's text holds its path, so a query for
	// a word all share ("md") finds each chunk in scope, and only those.
	for _, sc := range scopes {
		hits, err := h.db.DB.Search(ctx, index.Query{Text: "md", Scope: sc, Limit: 5000})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, c := range h.chunks {
			if inScope(c.path, sc) && strings.Contains(c.path, ".md") {
				want = append(want, fmt.Sprintf("%s:%d", c.path, c.line))
			}
		}
		var got []string
		for _, hit := range hits {
			got = append(got, fmt.Sprintf("%s:%d", hit.Path, hit.StartLine))
		}
		slices.Sort(got)
		slices.Sort(want)
		if len(want) == 0 && sc.Prefix != "nowhere/" && sc.Prefix != "sessions/" && sc.Tags[0] != "tea" {
			t.Fatalf("Search in %+v: the test expects nothing", sc)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Search in %+v: %d hits %v, want %d %v", sc, len(got), got, len(want), want)
		}
	}
}
