package index

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost/index/ftstext"
)

func open(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// page makes an update with one chunk per text.
func page(path string, texts ...string) Update {
	u := Update{File: File{Path: path, Source: "notebook", Hash: "h-" + path, Mtime: time.Unix(1, 0), Size: 1, IndexedAt: time.Unix(2, 0)}}
	for i, t := range texts {
		u.Chunks = append(u.Chunks, Chunk{Heading: "## " + path, StartLine: i + 1, EndLine: i + 1, Text: t, Hash: t})
	}
	return u
}

func paths(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Path)
	}
	return out
}

func TestSearch(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	err := db.Apply(ctx, Batch{Upserts: []Update{
		page("en.md", "Weekly meeting with the design team on Tuesdays"),
		page("contacts.md", "Sarah Chen - Phone: 555-1234"),
		page("zh.md", "我喜欢喝咖啡，每天早上一杯。"),
		page("ja.md", "明日は東京で会議があります。"),
		page("ko.md", "내일 서울에서 회의가 있습니다."),
		page("accent.md", "Coffee at the café by the station"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"meetings", []string{"en.md"}}, // porter: meetings -> meet
		{"what is Sarah's phone?", []string{"contacts.md"}},
		{"555-1234", []string{"contacts.md"}},
		{"咖啡", []string{"zh.md"}},    // a word inside a sentence
		{"喜欢喝咖啡", []string{"zh.md"}}, // a longer phrase
		{"茶", nil},                   // a character that is not there
		{"杯", []string{"zh.md"}},     // one character, last of its run
		{"東京", []string{"ja.md"}},
		{"会議", []string{"ja.md"}},
		{"서울", []string{"ko.md"}},
		{"회의", []string{"ko.md"}},       // stem of 회의가
		{"cafe", []string{"accent.md"}}, // diacritics removed
		{`"unbalanced AND (quote`, nil}, // no FTS5 syntax error
		{"NEAR( OR NOT*", nil},
	}
	for _, tt := range tests {
		hits, err := db.Search(ctx, Query{Text: tt.query})
		if err != nil {
			t.Fatalf("Search(%q): %v", tt.query, err)
		}
		if got := paths(hits); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
	if _, err := db.Search(ctx, Query{Text: "?! ..."}); !errors.Is(err, ftstext.ErrNoTerms) {
		t.Errorf("Search of punctuation: err = %v, want ftstext.ErrNoTerms", err)
	}
}

func TestSearchRanksAndFilters(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	daily := page("daily/2026-01-01.md", "Called Sarah about the project timeline")
	daily.File.Source = "daily"
	err := db.Apply(ctx, Batch{Upserts: []Update{
		page("a.md", "Sarah Chen phone 555-1234, Sarah's mobile"),
		page("b.md", "the phone is broken"),
		daily,
	}})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := db.Search(ctx, Query{Text: "sarah phone"})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(hits); len(got) != 3 || got[0] != "a.md" {
		t.Fatalf("Search = %v, want a.md first of 3", got)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].BM25 < hits[i-1].BM25 {
			t.Errorf("hits not ordered best first: %v", hits)
		}
	}
	hits, err = db.Search(ctx, Query{Text: "sarah phone", Sources: []string{"daily"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(hits); !reflect.DeepEqual(got, []string{"daily/2026-01-01.md"}) {
		t.Errorf("daily-only search = %v", got)
	}
}

func TestApplyReplacesAndRemoves(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if err := db.Apply(ctx, Batch{Upserts: []Update{page("a.md", "alpha one", "alpha two"), page("b.md", "beta")}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Apply(ctx, Batch{Upserts: []Update{page("a.md", "gamma")}, Removes: []string{"b.md"}}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]string{"alpha": nil, "beta": nil, "gamma": {"a.md"}} {
		hits, err := db.Search(ctx, Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		if got := paths(hits); !reflect.DeepEqual(got, want) {
			t.Errorf("after replace, Search(%q) = %v, want %v", q, got, want)
		}
	}
	st, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 1 || st.Chunks != 1 {
		t.Errorf("Stats = %+v, want 1 file, 1 chunk", st)
	}
	files, err := db.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f := files["a.md"]; f.Chunks != 1 || f.Hash != "h-a.md" || !f.Mtime.Equal(time.Unix(1, 0)) {
		t.Errorf("Files[a.md] = %+v", f)
	}
}

func TestReopenKeepsDataAndSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Apply(ctx, Batch{Upserts: []Update{page("a.md", "kept")}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hits, err := db.Search(ctx, Query{Text: "kept"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("after reopen: hits %v, err %v", hits, err)
	}
}

func TestSchemaVersionChangeStartsAfresh(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if err := db.Apply(ctx, Batch{Upserts: []Update{page("a.md", "old")}}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetMeta(ctx, "schema_version", "0"); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	st, err := db2.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 0 {
		t.Errorf("old-version index kept %d files; want it dropped", st.Files)
	}
}

func TestCopyFrom(t *testing.T) {
	ctx := context.Background()
	live := open(t)
	if err := live.Apply(ctx, Batch{Upserts: []Update{page("old.md", "old content")}}); err != nil {
		t.Fatal(err)
	}
	// A second connection, as another process would hold.
	other, err := Open(ctx, live.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	freshPath := filepath.Join(t.TempDir(), "fresh.db")
	fresh, err := Open(ctx, freshPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Apply(ctx, Batch{Upserts: []Update{page("new.md", "new content")}}); err != nil {
		t.Fatal(err)
	}
	fresh.Close()

	if err := live.CopyFrom(ctx, freshPath); err != nil {
		t.Fatal(err)
	}
	for _, db := range []*DB{live, other} {
		hits, err := db.Search(ctx, Query{Text: "content"})
		if err != nil {
			t.Fatal(err)
		}
		if got := paths(hits); !reflect.DeepEqual(got, []string{"new.md"}) {
			t.Errorf("after CopyFrom, Search = %v, want [new.md]", got)
		}
	}
	if err := live.CopyFrom(ctx, filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Error("CopyFrom a missing file succeeded")
	}
	hits, _ := live.Search(ctx, Query{Text: "content"})
	if len(hits) != 1 {
		t.Errorf("failed CopyFrom changed the index: %v", paths(hits))
	}
}

// TestSourceRanges: chunk ids lie in their source's range and are never
// reused; a search limited to sources finds exactly their chunks, whether
// they form one id range or not.
func TestSourceRanges(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	in := func(path, source, text string) Update {
		u := page(path, text)
		u.File.Source = source
		return u
	}
	if err := db.Apply(ctx, Batch{Upserts: []Update{
		in("a.md", "notebook", "kiwi one"), in("daily/d.md", "daily", "kiwi two"), in("sessions/s.jsonl", "sessions", "kiwi three"),
	}}); err != nil {
		t.Fatal(err)
	}
	hits, err := db.Search(ctx, Query{Text: "kiwi"})
	if err != nil || len(hits) != 3 {
		t.Fatalf("all sources: %v, %v", hits, err)
	}
	first := map[string]int64{}
	for _, h := range hits {
		lo, hi, _ := IDRange(h.Source)
		if h.ChunkID < max(lo, 1) || h.ChunkID >= hi {
			t.Errorf("%s chunk id %d outside [%d, %d)", h.Source, h.ChunkID, lo, hi)
		}
		first[h.Path] = h.ChunkID
	}
	for _, c := range []struct {
		sources []string
		want    string
	}{
		{[]string{"notebook"}, "a.md"},
		{[]string{"daily"}, "daily/d.md"},
		{[]string{"sessions"}, "sessions/s.jsonl"},
		{[]string{"notebook", "daily"}, "a.md daily/d.md"},
		{[]string{"daily", "sessions"}, "daily/d.md sessions/s.jsonl"},
		{[]string{"sessions", "notebook"}, "a.md sessions/s.jsonl"}, // not one range
		{[]string{"sessions", "notebook", "daily"}, "a.md daily/d.md sessions/s.jsonl"},
	} {
		hits, err := db.Search(ctx, Query{Text: "kiwi", Sources: c.sources})
		got := paths(hits)
		sort.Strings(got)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("sources %v: %v, %v", c.sources, got, err)
		}
	}
	// Replaced and removed chunks' ids are not given out again.
	if err := db.Apply(ctx, Batch{Removes: []string{"a.md"}, Upserts: []Update{in("daily/d.md", "daily", "kiwi again")}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Apply(ctx, Batch{Upserts: []Update{in("b.md", "notebook", "kiwi new")}}); err != nil {
		t.Fatal(err)
	}
	hits, _ = db.Search(ctx, Query{Text: "kiwi"})
	for _, h := range hits {
		if (h.Path == "b.md" && h.ChunkID <= first["a.md"]) || (h.Path == "daily/d.md" && h.ChunkID <= first["daily/d.md"]) {
			t.Errorf("%s got id %d again", h.Path, h.ChunkID)
		}
	}
	if err := db.Apply(ctx, Batch{Upserts: []Update{in("x.md", "elsewhere", "kiwi")}}); err == nil || !strings.Contains(err.Error(), `unknown source "elsewhere"`) {
		t.Errorf("unknown source: %v", err)
	}
}

func TestSourceRange(t *testing.T) {
	for _, c := range []struct {
		sources []string
		ok      bool
	}{
		{nil, false}, {[]string{"notebook"}, true}, {[]string{"daily", "notebook", "daily"}, true},
		{[]string{"notebook", "sessions"}, false}, {[]string{"notebook", "other"}, false},
	} {
		if _, _, ok := sourceRange(c.sources); ok != c.ok {
			t.Errorf("sourceRange(%v) ok = %v", c.sources, ok)
		}
	}
	if lo, hi, _ := sourceRange([]string{"daily", "sessions"}); lo != 1<<40 || hi != 3<<40 {
		t.Errorf("daily+sessions = [%d, %d)", lo, hi)
	}
}

// TestApplyStaleAppend: an append computed from a file row another
// process has changed since is refused (ErrStale), not added twice; one
// that another process already applied is skipped.
func TestApplyStaleAppend(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	first := page("sessions/s.jsonl", "turn one")
	first.File.Source = "sessions"
	if err := db.Apply(ctx, Batch{Upserts: []Update{first}}); err != nil {
		t.Fatal(err)
	}
	grown := page("sessions/s.jsonl", "turn two")
	grown.File.Source, grown.File.Hash, grown.Base = "sessions", "h2", first.File.Hash
	for range 2 { // the second is the same append from another process: skipped
		if err := db.Apply(ctx, Batch{Appends: []Update{grown}}); err != nil {
			t.Fatal(err)
		}
	}
	stale := page("sessions/s.jsonl", "turn two again")
	stale.File.Source, stale.File.Hash, stale.Base = "sessions", "h3", first.File.Hash
	if err := db.Apply(ctx, Batch{Appends: []Update{stale}}); !errors.Is(err, ErrStale) {
		t.Fatalf("stale append: %v", err)
	}
	files, err := db.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f := files["sessions/s.jsonl"]; f.Chunks != 2 || f.Hash != "h2" {
		t.Fatalf("file row = %+v", f)
	}
}

// TestSearchSessionsIgnoresOtherSources holds that a crowd of pages does
// not change a search of the transcripts: BM25's statistics (how rare a
// word is, how long rows are) are those of the turns alone, so the same
// turns come back in the same order with the same scores.
func TestSearchSessionsIgnoresOtherSources(t *testing.T) {
	ctx := context.Background()
	turns := Update{File: File{Path: "sessions/s1.jsonl", Source: "sessions", Hash: "s1", Mtime: time.Unix(1, 0), Size: 1, IndexedAt: time.Unix(2, 0)}}
	for i, text := range []string{
		"Caroline: I went to a support group yesterday and it was powerful",
		"Melanie: that sounds great, how did the group make you feel",
		"Caroline: I felt accepted, and I am thinking about counseling as a career",
		"Melanie: counseling would suit you, you listen so well",
		"Caroline: I also painted a sunrise over the lake last week",
		"Melanie: I love painting too, my kids and I painted pottery at the camp by the lake",
		"Caroline: the camp sounds fun, did the kids enjoy the lake",
	} {
		turns.Chunks = append(turns.Chunks, Chunk{StartLine: i + 1, EndLine: i + 1, Text: text, Context: "", Hash: text})
	}
	queries := []string{"sunrise counseling", "support group", "what career is Caroline thinking about", "painted lake", "camp kids pottery", "how did the group feel"}
	search := func(db *DB) [][]Hit {
		var out [][]Hit
		for _, q := range queries {
			hits, err := db.Search(ctx, Query{Text: q, Sources: []string{"sessions"}})
			if err != nil {
				t.Fatalf("Search(%q): %v", q, err)
			}
			out = append(out, hits)
		}
		return out
	}
	clean := open(t)
	if err := clean.Apply(ctx, Batch{Upserts: []Update{turns}}); err != nil {
		t.Fatal(err)
	}
	want := search(clean)
	if len(want[0]) == 0 {
		t.Fatal("the clean home finds nothing")
	}

	// The same turns in a home whose notebook and daily log are full of
	// other talk, some of it with the queries' words, of other lengths.
	crowded := open(t)
	var pages []Update
	for i := range 40 {
		p := page(fmt.Sprintf("daily/2024-01-%02d.md", i+1),
			"Jon: the group went to the lake at sunrise again and the support was great",
			strings.Repeat("Gina: my dance studio is busy and the career move paid off, ", 1+i%5),
			"Jon: kids, camp and pottery all week")
		p.File.Source = "daily"
		pages = append(pages, p)
	}
	pages = append(pages, page("knowledge/notes.md", "painting lessons on Tuesdays", strings.Repeat("counseling notes ", 30)))
	if err := crowded.Apply(ctx, Batch{Upserts: append(pages, turns)}); err != nil {
		t.Fatal(err)
	}
	got := search(crowded)
	for i, q := range queries {
		if len(got[i]) != len(want[i]) {
			t.Errorf("%q: %d hits in the crowded home, %d alone", q, len(got[i]), len(want[i]))
			continue
		}
		for j := range want[i] {
			g, w := got[i][j], want[i][j]
			if g.StartLine != w.StartLine || g.BM25 != w.BM25 {
				t.Errorf("%q, hit %d: turn %d (bm25 %.6f) in the crowded home, turn %d (bm25 %.6f) alone", q, j+1, g.StartLine, g.BM25, w.StartLine, w.BM25)
			}
		}
	}
}
