package index

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestVaultTables(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	a := page("knowledge/a.md", "alpha text")
	a.Vault = &Vault{Title: "A", Aliases: []string{"Alpha", "First"}, Tags: []string{"person", "team/design"},
		Links: []Link{{Target: "b", Line: 3}, {Target: "Project", Heading: "Goals", Alias: "goals", Line: 4}, {Target: "pic.png", Embed: true, Line: 5}}}
	b := page("knowledge/b.md", "beta text")
	b.Vault = &Vault{}
	s := page("sessions/s.jsonl", "a turn")
	s.File.Source = "sessions"
	if err := db.Apply(ctx, Batch{Upserts: []Update{a, b, s}}); err != nil {
		t.Fatal(err)
	}
	pages, err := db.VaultPages(ctx)
	want := []VaultPage{{Path: "knowledge/a.md", Title: "A", Aliases: []string{"Alpha", "First"}}, {Path: "knowledge/b.md", Aliases: []string{}}}
	if err != nil || !reflect.DeepEqual(pages, want) {
		t.Fatalf("VaultPages = %+v, %v; want %+v", pages, err, want)
	}
	links, err := db.VaultLinks(ctx, "")
	if err != nil || len(links) != 3 || links[1].From != "knowledge/a.md" || links[1].Link != a.Vault.Links[1] || !links[2].Embed {
		t.Fatalf("VaultLinks = %+v, %v", links, err)
	}
	if tags, err := db.PageTags(ctx, "knowledge/a.md"); err != nil || !reflect.DeepEqual(tags, []string{"person", "team/design"}) {
		t.Fatalf("PageTags = %v, %v", tags, err)
	}
	// Indexing the page again replaces its rows; removing it drops them.
	a.Vault = &Vault{Tags: []string{"person"}}
	if err := db.Apply(ctx, Batch{Upserts: []Update{a}}); err != nil {
		t.Fatal(err)
	}
	if links, _ := db.VaultLinks(ctx, "knowledge/a.md"); len(links) != 0 {
		t.Fatalf("old links kept: %+v", links)
	}
	if tags, _ := db.PageTags(ctx, "knowledge/a.md"); !reflect.DeepEqual(tags, []string{"person"}) {
		t.Fatalf("tags after re-indexing: %v", tags)
	}
	if err := db.Apply(ctx, Batch{Removes: []string{"knowledge/a.md"}}); err != nil {
		t.Fatal(err)
	}
	var n int
	for _, tb := range vaultTables {
		var c int
		db.db.QueryRow(`SELECT count(*) FROM ` + tb + ` WHERE file_path = 'knowledge/a.md'`).Scan(&c)
		n += c
	}
	if n != 0 {
		t.Fatalf("%d vault rows left for a removed page", n)
	}
}

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
			if _, err := h.db.db.Exec(`INSERT INTO page_tags(tag, file_path) VALUES (?, ?)`, tag, path); err != nil {
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
	inScope := func(path string, sc Scope) bool {
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
	scopes := []Scope{
		{Prefix: "knowledge/"}, {Prefix: "knowledge"}, {Prefix: "knowledge/people/p03.md"}, {Prefix: "knowledge/people/p03"},
		{Tags: []string{"person"}}, {Tags: []string{"team"}}, {Tags: []string{"team/design", "person"}}, {Tags: []string{"tea"}},
		{Prefix: "knowledge", Tags: []string{"project"}}, {Tags: []string{"old"}}, {Prefix: "archive/"}, {Tags: []string{"meeting"}},
		{Prefix: "sessions/"}, {Prefix: "nowhere/"}, {Tags: []string{"old"}, Path: "archive/a007.md"},
	}
	for _, mode := range []func(*DB){exact, quantized} {
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
					hits, err := h.db.SearchVectorsIn(ctx, qq, k, sources, sc)
					if err != nil {
						t.Fatalf("SearchVectorsIn(%v, %+v): %v", sources, sc, err)
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
		hits, err := h.db.Search(ctx, Query{Text: "md", Scope: sc, Limit: 5000})
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

// TestUpgradeFromSchema9: an index of schema 9 (before the vault tables)
// gains them, keeps its chunks and vectors, and has its pages (not its
// transcripts) marked changed, so the next sync reads each page again and
// fills them.
func TestUpgradeFromSchema9(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s := page("sessions/s.jsonl", "a turn")
	s.File.Source = "sessions"
	if err := db.Apply(ctx, Batch{Upserts: []Update{page("knowledge/a.md", "alpha"), s}}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`DROP TABLE page_meta`, `DROP TABLE page_tags`, `DROP TABLE page_links`, `UPDATE meta SET value = '9' WHERE key = 'schema_version'`} {
		if _, err := db.db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, _ := db.Meta(ctx, "schema_version"); v != schemaVersion {
		t.Fatalf("schema_version = %q", v)
	}
	if _, err := db.VaultPages(ctx); err != nil {
		t.Fatalf("the vault tables after the upgrade: %v", err)
	}
	st, err := db.Stamps(ctx)
	if err != nil || st["knowledge/a.md"].Hash != "" || st["knowledge/a.md"].Size != -1 || st["sessions/s.jsonl"].Hash != "h-sessions/s.jsonl" {
		t.Fatalf("stamps after the upgrade: %+v, %v", st, err)
	}
	if stats, _ := db.Stats(ctx); stats.Chunks != 2 {
		t.Fatalf("%d chunks after the upgrade, want 2 kept", stats.Chunks)
	}
}
