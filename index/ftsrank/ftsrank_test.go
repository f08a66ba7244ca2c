package ftsrank

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/memhost/memhost/internal/benchdata"
)

// weights are the index's (text, heading, context).
const weights = "1.0, 0.5, 0.3"

// corpus opens a database holding a contentless FTS5 table like the
// index's, of n rows of Zipf-distributed words of varied lengths (so that
// lengths, frequencies and columns all move the scores), some deleted.
func corpus(t *testing.T, n int) *sql.DB {
	t.Helper()
	Auto()
	db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "fts.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(text, heading, context, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2')`); err != nil {
		t.Fatal(err)
	}
	ws := benchdata.NewWords(1)
	r := rand.New(rand.NewSource(3))
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		ctx := ""
		if i%3 == 0 {
			ctx = ws.Sentence(5 + r.Intn(20))
		}
		if _, err := tx.Exec(`INSERT INTO t(rowid, text, heading, context) VALUES (?, ?, ?, ?)`,
			i+1, ws.Sentence(3+r.Intn(60)), ws.Sentence(1+r.Intn(4)), ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM t WHERE rowid % 17 = 0`); err != nil {
		t.Fatal(err)
	}
	return db
}

type scored struct {
	id    int64
	score float64
}

func top(t *testing.T, db *sql.DB, query, expr string, k int) []scored {
	t.Helper()
	rows, err := db.Query(query, expr, k)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []scored
	for rows.Next() {
		var s scored
		if err := rows.Scan(&s.id, &s.score); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSameAsBM25: for OR queries of 1 to 4 words, common and rare, the k
// best rows by bm25_topk are bm25's k best, with the same scores to the
// bit, whatever k; and the pruning happens (rows scored 0.0).
func TestSameAsBM25(t *testing.T) {
	db := corpus(t, 6000)
	ws := benchdata.NewWords(7)
	r := rand.New(rand.NewSource(5))
	var pruned, compared int
	for q := range 150 {
		var terms []string
		for range 1 + r.Intn(4) {
			terms = append(terms, `"`+ws.Word()+`"`)
		}
		if q%5 == 0 { // the commonest word with a rare one
			terms = append(terms, `"`+ws.Words[0]+`"`)
		}
		expr := strings.Join(terms, " OR ")
		for _, k := range []int{1, 5, 60} {
			want := top(t, db, `SELECT rowid, bm25(t, `+weights+`) AS s FROM t WHERE t MATCH ? ORDER BY s, rowid LIMIT ?`, expr, k)
			got := top(t, db, `SELECT rowid, bm25_topk(t, ?2, `+weights+`) AS s FROM t WHERE t MATCH ?1 ORDER BY s, rowid LIMIT ?2`, expr, k)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s, k=%d:\n got %v\nwant %v", expr, k, got, want)
			}
			compared += len(want)
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM (SELECT bm25_topk(t, ?2, `+weights+`) AS s FROM t WHERE t MATCH ?1) WHERE s = 0`, expr, k).Scan(&n); err != nil {
				t.Fatal(err)
			}
			pruned += n
		}
	}
	if compared < 3000 || pruned == 0 {
		t.Fatalf("%d rows compared, %d pruned: the test did not exercise the pruning", compared, pruned)
	}
	t.Logf("%d rows compared, %d rows pruned", compared, pruned)
}

// TestTwiceInOneQuery: the function written twice scores each row once
// (the heap would otherwise hold a row twice and prune too much).
func TestTwiceInOneQuery(t *testing.T) {
	db := corpus(t, 3000)
	expr := `"` + benchdata.NewWords(1).Words[0] + `" OR "` + benchdata.NewWords(1).Words[40] + `"`
	want := top(t, db, `SELECT rowid, bm25(t, `+weights+`) AS s FROM t WHERE t MATCH ? ORDER BY s, rowid LIMIT ?`, expr, 20)
	got := top(t, db, `SELECT rowid, bm25_topk(t, ?2, `+weights+`) + 0 * bm25_topk(t, ?2, `+weights+`) AS s FROM t WHERE t MATCH ?1 ORDER BY s, rowid LIMIT ?2`, expr, 20)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// TestZeroIsBM25: k = 0 scores every row as bm25 does.
func TestZeroIsBM25(t *testing.T) {
	db := corpus(t, 2000)
	expr := `"` + benchdata.NewWords(1).Words[0] + `"`
	want := top(t, db, `SELECT rowid, bm25(t, `+weights+`) FROM t WHERE t MATCH ? ORDER BY rowid LIMIT ?`, expr, 100000)
	got := top(t, db, `SELECT rowid, bm25_topk(t, 0, `+weights+`) FROM t WHERE t MATCH ? ORDER BY rowid LIMIT ?`, expr, 100000)
	if len(want) < 100 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%d rows: got %v\nwant %v", len(want), got, want)
	}
}

// TestBadK: a missing or negative k is an error naming the function.
func TestBadK(t *testing.T) {
	db := corpus(t, 10)
	if _, err := db.Exec(`INSERT INTO t(rowid, text) VALUES (100, 'x')`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT bm25_topk(t) FROM t WHERE t MATCH 'x'`,
		`SELECT bm25_topk(t, -1) FROM t WHERE t MATCH 'x'`,
	} {
		rows, err := db.Query(q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "bm25_topk") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// TestNoPruning: a k past maxTopk (a search's limit may be that large)
// and negative weights (with which BM25 no longer falls with a row's
// length) turn the pruning off: the k best are bm25's all the same.
func TestNoPruning(t *testing.T) {
	db := corpus(t, 3000)
	ws := benchdata.NewWords(1)
	expr := `"` + ws.Words[0] + `" OR "` + ws.Words[30] + `"`
	for _, c := range []struct {
		k int
		w string
	}{{200000, weights}, {20, "1.0, -0.5, 0.3"}, {20, "-1.0, 0.5, 0.3"}} {
		want := top(t, db, `SELECT rowid, bm25(t, `+c.w+`) AS s FROM t WHERE t MATCH ? ORDER BY s, rowid LIMIT ?`, expr, c.k)
		got := top(t, db, `SELECT rowid, bm25_topk(t, ?2, `+c.w+`) AS s FROM t WHERE t MATCH ?1 ORDER BY s, rowid LIMIT ?2`, expr, c.k)
		if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("k=%d, weights %s: got %v\nwant %v", c.k, c.w, got, want)
		}
	}
}

// TestTiesAtTheLimit: rows of equal score across the limit are kept as
// bm25 keeps them.
func TestTiesAtTheLimit(t *testing.T) {
	db := corpus(t, 0)
	for i := range 300 {
		text := "alpha beta gamma"
		if i%7 == 0 {
			text = "alpha alpha beta gamma delta"
		}
		if _, err := db.Exec(`INSERT INTO t(rowid, text, heading) VALUES (?, ?, 'h')`, i+1, text); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []int{1, 10, 43, 44, 45, 100} {
		want := top(t, db, `SELECT rowid, bm25(t, `+weights+`) AS s FROM t WHERE t MATCH ? ORDER BY s, rowid LIMIT ?`, "alpha OR delta", k)
		got := top(t, db, `SELECT rowid, bm25_topk(t, ?2, `+weights+`) AS s FROM t WHERE t MATCH ?1 ORDER BY s, rowid LIMIT ?2`, "alpha OR delta", k)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("k=%d: got %v\nwant %v", k, got, want)
		}
	}
}

// TestOpenWhileLocked: a connection opened while another holds the
// database's lock waits for it, as its statements would, instead of
// failing to open (registering reads the schema). Without the wait, a CLI
// falling back in-process after its server was killed failed to open the
// index (TestBinaryServeKilled).
func TestOpenWhileLocked(t *testing.T) {
	Auto()
	path := filepath.Join(t.TempDir(), "locked.db")
	a, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	conn, err := a.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE x(y); BEGIN EXCLUSIVE; INSERT INTO x VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	release := time.AfterFunc(300*time.Millisecond, func() { conn.ExecContext(ctx, `COMMIT`) })
	defer release.Stop()
	b, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var n int
	if err := b.QueryRow(`SELECT count(*) FROM x`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("open while locked: %d rows, %v", n, err)
	}
}
