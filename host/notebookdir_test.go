package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
)

// folders lists the folder names in dir.
func folders(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestExistingNotebookKeepsItsFolders: memhost pointed at a folder of the
// user's notes adds no empty folders to it; a folder appears when memhost
// writes a page into it.
func TestExistingNotebookKeepsItsFolders(t *testing.T) {
	t.Parallel()
	notes := t.TempDir()
	if err := os.WriteFile(filepath.Join(notes, "ideas.md"), []byte("# Ideas\nlanterns on the river\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := openHost(t, t.TempDir(), func(c *config.Config) { c.Memory.NotebookDir = notes })
	ctx := context.Background()
	if _, err := h.Init(ctx, memhost.InitRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := folders(t, notes); len(got) != 0 {
		t.Errorf("opening an existing notebook created %v in it", got)
	}
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "Buy oat milk", Category: "lists", File: "shopping"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "Walked by the river"}); err != nil {
		t.Fatal(err)
	}
	if got := folders(t, notes); !slices.Equal(got, []string{"daily", "lists"}) {
		t.Errorf("after writing a list and a daily log the notebook holds folders %v, want [daily lists]", got)
	}
}

// TestNewNotebookHasStandardFolders: a notebook memhost creates (a fresh
// home's) starts with the standard folders, as memhost init shows.
func TestNewNotebookHasStandardFolders(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	if got := folders(t, h.NotebookDir()); !slices.Equal(got, []string{"daily", "knowledge", "lists", "reference"}) {
		t.Errorf("a new notebook holds folders %v", got)
	}
}
