package vault

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/memhost/memhost/host/notebook"
)

// notebookOnly is a Kernel of a notebook alone: what the attachment list
// looks at (any other call panics).
type notebookOnly struct {
	Kernel
	nb *notebook.Notebook
}

func (k notebookOnly) Notebook() *notebook.Notebook { return k.nb }

// TestAttachmentsKept: the attachment list is kept while no folder
// changes, and a file added or removed in any folder, however deep, is
// seen at the next call.
func TestAttachmentsKept(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	nb, err := notebook.Open(root, filepath.Join(t.TempDir(), "notebook.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	h := New(notebookOnly{nb: nb})
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/b/c/chart.png", "png")
	write("a/page.md", "# page\n")
	write(".obsidian/app.json", "{}")
	old := time.Now().Add(-time.Hour)
	age := func() {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chtimes(p, old, old)
			}
			return nil
		})
	}
	age()
	if got := h.attachments(); !reflect.DeepEqual(got, []string{"a/b/c/chart.png"}) {
		t.Fatalf("attachments %q", got)
	}
	if h.attachmentsKept.racy {
		t.Fatal("a walk of folders unchanged for an hour is not kept")
	}
	h.attachments()
	write("a/b/c/d.pdf", "pdf")
	if got := h.attachments(); !reflect.DeepEqual(got, []string{"a/b/c/chart.png", "a/b/c/d.pdf"}) {
		t.Fatalf("after a file was added: %q", got)
	}
	age()
	h.attachments()
	os.Remove(filepath.Join(root, "a/b/c/chart.png"))
	if got := h.attachments(); !reflect.DeepEqual(got, []string{"a/b/c/d.pdf"}) {
		t.Fatalf("after a file was removed: %q", got)
	}
}
