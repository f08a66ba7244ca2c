package index

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memhost/memhost/index/vaultrows"
)

func TestVaultTables(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	a := page("knowledge/a.md", "alpha text")
	a.Vault = &vaultrows.Meta{Title: "A", Aliases: []string{"Alpha", "First"}, Tags: []string{"person", "team/design"},
		Links: []vaultrows.Link{{Target: "b", Line: 3}, {Target: "Project", Heading: "Goals", Alias: "goals", Line: 4}, {Target: "pic.png", Embed: true, Line: 5}}}
	b := page("knowledge/b.md", "beta text")
	b.Vault = &vaultrows.Meta{}
	s := page("sessions/s.jsonl", "a turn")
	s.File.Source = "sessions"
	if err := db.Apply(ctx, Batch{Upserts: []Update{a, b, s}}); err != nil {
		t.Fatal(err)
	}
	pages, err := db.Vault().Pages(ctx)
	want := []vaultrows.Page{{Path: "knowledge/a.md", Title: "A", Aliases: []string{"Alpha", "First"}}, {Path: "knowledge/b.md", Aliases: []string{}}}
	if err != nil || !reflect.DeepEqual(pages, want) {
		t.Fatalf("VaultPages = %+v, %v; want %+v", pages, err, want)
	}
	links, err := db.Vault().Links(ctx, "")
	if err != nil || len(links) != 3 || links[1].From != "knowledge/a.md" || links[1].Link != a.Vault.Links[1] || !links[2].Embed {
		t.Fatalf("VaultLinks = %+v, %v", links, err)
	}
	if tags, err := db.Vault().Tags(ctx, "knowledge/a.md"); err != nil || !reflect.DeepEqual(tags, []string{"person", "team/design"}) {
		t.Fatalf("PageTags = %v, %v", tags, err)
	}
	// Indexing the page again replaces its rows; removing it drops them.
	a.Vault = &vaultrows.Meta{Tags: []string{"person"}}
	if err := db.Apply(ctx, Batch{Upserts: []Update{a}}); err != nil {
		t.Fatal(err)
	}
	if links, _ := db.Vault().Links(ctx, "knowledge/a.md"); len(links) != 0 {
		t.Fatalf("old links kept: %+v", links)
	}
	if tags, _ := db.Vault().Tags(ctx, "knowledge/a.md"); !reflect.DeepEqual(tags, []string{"person"}) {
		t.Fatalf("tags after re-indexing: %v", tags)
	}
	if err := db.Apply(ctx, Batch{Removes: []string{"knowledge/a.md"}}); err != nil {
		t.Fatal(err)
	}
	var n int
	for _, tb := range vaultrows.Tables {
		var c int
		db.db.QueryRow(`SELECT count(*) FROM ` + tb + ` WHERE file_path = 'knowledge/a.md'`).Scan(&c)
		n += c
	}
	if n != 0 {
		t.Fatalf("%d vault rows left for a removed page", n)
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
	if v, _ := db.Meta(ctx, "schema_version"); v != SchemaVersion {
		t.Fatalf("schema_version = %q", v)
	}
	if _, err := db.Vault().Pages(ctx); err != nil {
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
