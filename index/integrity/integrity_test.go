package integrity

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/index/factrows"
	"github.com/memhost/memhost/index/vectors"
	"github.com/memhost/memhost/internal/damage"
)

func TestDrift(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if err := db.Apply(ctx, index.Batch{Upserts: []index.Update{page("a.md", "alpha one", "alpha two", "alpha three"), page("b.md", "beta")}}); err != nil {
		t.Fatal(err)
	}
	check := func(want Drift) {
		t.Helper()
		got, err := DriftOf(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("Drift() = %+v, want %+v", got, want)
		}
	}
	check(Drift{})
	if problems, err := Quick(ctx, db, 10); err != nil || problems != nil {
		t.Fatalf("Quick of a sound index = %q, %v", problems, err)
	}
	// No model yet: a chunk marked embedded has no vector.
	exec(t, db, `UPDATE chunks SET embedded = 1 WHERE text = 'beta'`)
	check(Drift{EmbeddedWithoutVector: 1})
	exec(t, db, `UPDATE chunks SET embedded = 0`)

	if _, err := vectors.New(db).SetModel(ctx, vectors.Model{Provider: "p", Model: "m", Dimensions: 4}); err != nil {
		t.Fatal(err)
	}
	ids := chunkIDs(t, db)
	vecs := []vectors.ChunkVector{}
	for _, id := range ids {
		vecs = append(vecs, vectors.ChunkVector{ID: id, Vector: []float32{1, 0, 0, float32(id % 7)}})
	}
	if _, err := vectors.New(db).Put(ctx, "m", vecs); err != nil {
		t.Fatal(err)
	}
	check(Drift{})

	exec(t, db, `DELETE FROM chunks_fts WHERE rowid = ?`, ids[0])
	exec(t, db, `DELETE FROM chunks_vec WHERE chunk_id = ?`, ids[1])                      // embedded, no vector
	exec(t, db, `DELETE FROM chunks WHERE id = ?`, ids[2])                                // FTS row, vector and bits left
	exec(t, db, `INSERT INTO chunks_fts(rowid, text) VALUES (?, 'orphan')`, int64(1)<<39) // FTS row of no chunk
	check(Drift{ChunksWithoutFTS: 1, FTSWithoutChunk: 2, VectorsWithoutChunk: 2, EmbeddedWithoutVector: 1})
}

func exec(t *testing.T, db *index.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.SQL().Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func chunkIDs(t *testing.T, db *index.DB) []int64 {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT id FROM chunks ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		ids = append(ids, id)
	}
	return ids
}

// TestQuickCheckFindsCorruption writes garbage into the middle of a real
// index file, as a failing disk would, one larger than index.Open checks
// (4 MiB), so that it opens.
func TestQuickCheckFindsCorruption(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := index.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var pages []index.Update
	filler := strings.Repeat("some words to fill the pages of the database with ", 40)
	for i := range 2500 {
		pages = append(pages, page(fmt.Sprintf("p/%04d.md", i), filler+strconv.Itoa(i), "and more words, different ones, number "+strconv.Itoa(i)))
	}
	if err := db.Apply(ctx, index.Batch{Upserts: pages}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() <= 4<<20 {
		t.Fatalf("the index is %d bytes: too small to open unchecked", fi.Size())
	}
	damage.MiddleHalf(t, path)
	db, err = index.Open(ctx, path)
	if err != nil {
		t.Fatalf("the header is intact, so index.Open works: %v", err)
	}
	defer db.Close()
	problems, err := Quick(ctx, db, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) == 0 {
		t.Fatal("Quick found nothing in a corrupt index")
	}
}

// An index of schema 11 (every chunk in chunks_fts, which keeps a copy of
// the text) is upgraded in place: the turns' full-text rows move to
// turns_fts (12), both tables become contentless (13), nothing is
// re-indexed (entity pages keep their rows too), and searches find the
// same.
func TestUpgradeSplitsTurnsFTS(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := index.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	turns := page("sessions/s1.jsonl", "Caroline: the support group was powerful", "Melanie: pottery at the camp")
	turns.File.Source = "sessions"
	if err := db.Apply(ctx, index.Batch{Upserts: []index.Update{page("reference/a.md", "the support desk"), page(factrows.EntityDir+"sarah.md", "## works at", "- acme"), turns}}); err != nil {
		t.Fatal(err)
	}
	// Make it a schema 11 index: the turns' rows back in chunks_fts.
	err = db.Write(ctx, func(tx *sql.Tx) error {
		for _, s := range []string{
			`DROP TABLE chunks_fts`,
			`DROP TABLE turns_fts`,
			`CREATE VIRTUAL TABLE chunks_fts USING fts5(text, heading, context, file_path UNINDEXED, source UNINDEXED,
				tokenize = 'porter unicode61 remove_diacritics 2')`,
			`INSERT INTO chunks_fts(rowid, text, heading, context, file_path, source)
				SELECT id, text, coalesce(heading, ''), coalesce(context, ''), file_path, source FROM chunks`,
			`UPDATE meta SET value = '11' WHERE key = 'schema_version'`} {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = index.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, _ := db.Meta(ctx, "schema_version"); v != index.SchemaVersion {
		t.Fatalf("schema version %q, want %q", v, index.SchemaVersion)
	}
	if files, err := db.Files(ctx); err != nil || len(files) != 3 {
		t.Fatalf("files after the upgrade: %v, %v; want all three kept", files, err)
	}
	if dr, err := DriftOf(ctx, db); err != nil || dr.Total() != 0 {
		t.Fatalf("drift after the upgrade: %+v, %v", dr, err)
	}
	for _, table := range []string{"chunks_fts", "turns_fts"} {
		var text sql.NullString
		if err := db.SQL().QueryRowContext(ctx, `SELECT text FROM `+table+` LIMIT 1`).Scan(&text); err != nil || text.Valid {
			t.Errorf("%s after the upgrade keeps text %q (%v): want contentless", table, text.String, err)
		}
	}
	for _, tt := range []struct {
		sources []string
		want    []string
	}{
		{[]string{"sessions"}, []string{"sessions/s1.jsonl"}},
		{[]string{"notebook"}, []string{"reference/a.md"}},
		{nil, []string{"reference/a.md", "sessions/s1.jsonl"}},
	} {
		hits, err := db.Search(ctx, index.Query{Text: "support", Sources: tt.sources})
		if err != nil {
			t.Fatal(err)
		}
		got := paths(hits)
		sort.Strings(got)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("search %v after the upgrade: %v, want %v", tt.sources, got, tt.want)
		}
	}
}
