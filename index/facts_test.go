package index

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/memhost/memhost/index/factrows"
)

// An index of schema 9 (before the facts tables) is upgraded in place: the
// tables are made, and its entity pages' file rows dropped so that the
// next sync reads them again and fills them; other pages keep their rows
// (and vectors).
func TestUpgradeAddsFactsTables(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Apply(ctx, Batch{Upserts: []Update{page("reference/a.md", "alpha"), page(factrows.EntityDir+"sarah.md", "## works at", "- acme")}}); err != nil {
		t.Fatal(err)
	}
	// Make it a schema 9 index.
	err = db.Write(ctx, func(tx *sql.Tx) error {
		for _, s := range []string{"DROP TABLE facts_fts", "DROP TABLE entity_relations", "DROP TABLE facts", "DROP TABLE entities",
			"UPDATE meta SET value = '9' WHERE key = 'schema_version'"} {
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
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	files, err := db.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files["reference/a.md"]; !ok || len(files) != 1 {
		t.Fatalf("files after the upgrade: %v; want reference/a.md only", files)
	}
	if st, err := db.Facts().Stats(ctx); err != nil || st != (factrows.Stats{}) {
		t.Fatalf("facts tables after the upgrade: %+v, %v", st, err)
	}
	if v, _ := db.Meta(ctx, "schema_version"); v != SchemaVersion {
		t.Fatalf("schema version %q, want %q", v, SchemaVersion)
	}
}
