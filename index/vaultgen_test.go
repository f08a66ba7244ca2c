package index

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memhost/memhost/index/vaultrows"
)

// TestVaultGeneration: the vault generation changes with every write or
// removal of a page, by this handle or another process's (another DB on
// the same file), and not with a transcript's; markdown links keep their
// kind.
func TestVaultGeneration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	gen := func() string {
		t.Helper()
		g, err := db.VaultGeneration(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g0 := gen()
	if gen() != g0 {
		t.Fatal("the generation changed without a write")
	}
	a := page("a.md", "alpha")
	a.Vault = &vaultrows.Meta{Links: []vaultrows.Link{{Target: "Some Page.md", Alias: "some", Line: 1, Markdown: true}, {Target: "b", Line: 2}}}
	if err := db.Apply(ctx, Batch{Upserts: []Update{a}}); err != nil {
		t.Fatal(err)
	}
	g1 := gen()
	if g1 == g0 {
		t.Fatal("writing a page left the generation")
	}
	links, err := db.Vault().Links(ctx, "a.md")
	if err != nil || len(links) != 2 || !links[0].Markdown || links[1].Markdown || links[0].Target != "Some Page.md" {
		t.Fatalf("links = %+v, %v", links, err)
	}
	s := page("sessions/s.jsonl", "a turn")
	s.File.Source = "sessions"
	if err := other.Apply(ctx, Batch{Upserts: []Update{s}}); err != nil {
		t.Fatal(err)
	}
	if err := other.Apply(ctx, Batch{Removes: []string{"sessions/s.jsonl"}}); err != nil {
		t.Fatal(err)
	}
	if gen() != g1 {
		t.Fatal("a transcript changed the vault generation")
	}
	if err := other.Apply(ctx, Batch{Removes: []string{"a.md"}}); err != nil {
		t.Fatal(err)
	}
	if g2 := gen(); g2 == g1 || g2 == g0 {
		t.Fatalf("another process's removal of a page: generation %q after %q", g2, g1)
	}
}

// TestUpgradeFromSchema10: page_links gains its markdown column, and the
// pages whose text may hold a markdown link are read again at the next
// sync; the others, and their links, are kept.
func TestUpgradeFromSchema10(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a, b := page("a.md", "see [the page](b.md)"), page("b.md", "see [[a]]")
	b.Vault = &vaultrows.Meta{Links: []vaultrows.Link{{Target: "a", Line: 1}}}
	if err := db.Apply(ctx, Batch{Upserts: []Update{a, b}}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`ALTER TABLE page_links DROP COLUMN markdown`, `UPDATE meta SET value = '10' WHERE key = 'schema_version'`} {
		if _, err := db.db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if db, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, _ := db.Meta(ctx, "schema_version"); v != SchemaVersion {
		t.Fatalf("schema_version = %q", v)
	}
	st, err := db.Stamps(ctx)
	if err != nil || st["a.md"].Hash != "" || st["b.md"].Hash != "h-b.md" {
		t.Fatalf("stamps after the upgrade: %+v, %v", st, err)
	}
	if links, err := db.Vault().Links(ctx, "b.md"); err != nil || len(links) != 1 || links[0].Markdown {
		t.Fatalf("links after the upgrade: %+v, %v", links, err)
	}
}
