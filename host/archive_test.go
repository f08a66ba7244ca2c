package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost"
)

// An export imported into an empty home gives the same pages, transcripts
// and config, indexed; imported into a home with its own changes it
// merges (transcripts by turn, pages line by line) and loses nothing.
func TestExportImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newHost(t)
	if _, err := a.Remember(ctx, memhost.RememberRequest{Text: "Sarah Chen works at Acme", Category: "reference", File: "contacts", Section: "Sarah Chen"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "turn from a"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(a.Home(), "config.yaml"), []byte("memory:\n  search:\n    maxResults: 9\n"), 0o644)
	file := filepath.Join(t.TempDir(), "a.tar.gz")
	ex, err := a.Export(ctx, memhost.ExportRequest{Path: file})
	if err != nil || ex.Files != 3 {
		t.Fatalf("export: %+v %v", ex, err)
	}
	if _, err := a.Export(ctx, memhost.ExportRequest{Path: file}); err == nil {
		t.Fatal("export over an existing file")
	}

	empty := newHost(t)
	im, err := empty.Import(ctx, memhost.ImportRequest{Path: file, WithConfig: true})
	if err != nil || len(im.Added) != 2 || im.Config != "imported" || im.Indexed != 2 {
		t.Fatalf("import into an empty home: %+v %v", im, err)
	}
	if got := found(t, empty, "acme"); len(got) != 1 {
		t.Fatalf("imported page not found: %v", got)
	}
	if cfg, _ := os.ReadFile(filepath.Join(empty.Home(), "config.yaml")); !strings.Contains(string(cfg), "maxResults: 9") {
		t.Fatalf("config.yaml not imported: %q", cfg)
	}

	b := newHost(t)
	b.Remember(ctx, memhost.RememberRequest{Text: "phone 555-0100", Category: "reference", File: "contacts", Section: "Sarah Chen"})
	b.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "turn from b"})
	im, err = b.Import(ctx, memhost.ImportRequest{Path: file, WithConfig: true})
	if err != nil || len(im.Merged) != 2 || im.Config != "imported" && im.Config != "kept" {
		t.Fatalf("import into a used home: %+v %v", im, err)
	}
	page := readPage(t, b, "reference/contacts.md")
	for _, w := range []string{"works at Acme", "phone 555-0100", "## Sarah Chen"} {
		if strings.Count(page, w) != 1 {
			t.Fatalf("%q not once in:\n%s", w, page)
		}
	}
	tr, _ := os.ReadFile(filepath.Join(b.Home(), "sessions", "s1.jsonl"))
	if strings.Count(string(tr), "turn from a") != 1 || strings.Count(string(tr), "turn from b") != 1 {
		t.Fatalf("transcript:\n%s", tr)
	}
	// Again: nothing changes.
	im, err = b.Import(ctx, memhost.ImportRequest{Path: file})
	if err != nil || len(im.Merged)+len(im.Added) != 0 || im.Unchanged != 2 {
		t.Fatalf("second import: %+v %v", im, err)
	}

	// A damaged archive is refused whole, the home untouched.
	data, _ := os.ReadFile(file)
	bad := filepath.Join(t.TempDir(), "bad.tar.gz")
	os.WriteFile(bad, data[:len(data)/2], 0o644)
	c := newHost(t)
	if _, err := c.Import(ctx, memhost.ImportRequest{Path: bad}); err == nil {
		t.Fatal("a truncated archive was imported")
	}
	if entries, _ := os.ReadDir(c.NotebookDir()); len(entries) != 0 {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if strings.Contains(strings.Join(names, ","), ".md") {
			t.Fatalf("a refused import wrote %v", names)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(c.Home(), "brain")); len(entries) > 0 {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "import-") {
				t.Fatalf("staging folder %s left", e.Name())
			}
		}
	}
}

// An archive's config.yaml can run commands (health.alerts.command),
// name URLs a provider contacts and move the notebook: without the user's
// WithConfig it is left out, and the response says so, even when the home
// has none.
func TestImportLeavesConfigOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newHost(t)
	if _, err := a.Remember(ctx, memhost.RememberRequest{Text: "a page", Category: "reference", File: "p"}); err != nil {
		t.Fatal(err)
	}
	planted := "health:\n  alerts:\n    command: [touch, /tmp/planted]\n"
	os.WriteFile(filepath.Join(a.Home(), "config.yaml"), []byte(planted), 0o600)
	file := filepath.Join(t.TempDir(), "a.tar.gz")
	if _, err := a.Export(ctx, memhost.ExportRequest{Path: file}); err != nil {
		t.Fatal(err)
	}
	b := newHost(t)
	os.Remove(filepath.Join(b.Home(), "config.yaml"))
	im, err := b.Import(ctx, memhost.ImportRequest{Path: file})
	if err != nil || im.Config != "left out" || len(im.Added) != 1 {
		t.Fatalf("import: %+v %v", im, err)
	}
	if data, err := os.ReadFile(filepath.Join(b.Home(), "config.yaml")); err == nil {
		t.Fatalf("the archive's config.yaml was taken: %q", data)
	}
}
