package indexer

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memhost/memhost/index"
)

// writePage writes a page under the notebook and gives it mtime, so that
// an edit is seen as one whatever the file system's time granularity.
func writePage(t *testing.T, x *Indexer, rel, text string, mtime time.Time) {
	t.Helper()
	p := filepath.Join(x.opts.Notebook.Root(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// searchPaths is the pages whose chunks hold word.
func searchPaths(t *testing.T, x *Indexer, word string) []string {
	t.Helper()
	hits, err := x.opts.Index.Search(context.Background(), index.Query{Text: word, Limit: 10})
	if err != nil {
		t.Fatalf("search %q: %v", word, err)
	}
	var paths []string
	for _, h := range hits {
		if !slices.Contains(paths, h.Path) {
			paths = append(paths, h.Path)
		}
	}
	slices.Sort(paths)
	return paths
}

// TestSyncNewEditedDeleted: a sync indexes new pages, re-indexes an edited
// one (its old words gone from the index), drops a deleted one, and leaves
// the rest alone; a second sync with nothing changed indexes nothing.
func TestSyncNewEditedDeleted(t *testing.T) {
	t.Parallel()
	x := newIndexer(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	writePage(t, x, "knowledge/a.md", "# A\napricot\n", t0)
	writePage(t, x, "knowledge/b.md", "# B\nbanana\n", t0)
	writePage(t, x, "knowledge/c.md", "# C\ncherry\n", t0)

	res, err := x.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(res.Paths)
	if res.Indexed != 3 || !slices.Equal(res.Paths, []string{"knowledge/a.md", "knowledge/b.md", "knowledge/c.md"}) || res.Removed != 0 {
		t.Fatalf("first sync = %+v, want the three pages indexed", res)
	}
	if got := searchPaths(t, x, "banana"); !slices.Equal(got, []string{"knowledge/b.md"}) {
		t.Fatalf("banana found in %v after the first sync", got)
	}

	// Edit b, delete c, add d; a stays as it was.
	writePage(t, x, "knowledge/b.md", "# B\nblueberry only now\n", t0.Add(time.Minute))
	if err := os.Remove(filepath.Join(x.opts.Notebook.Root(), "knowledge", "c.md")); err != nil {
		t.Fatal(err)
	}
	writePage(t, x, "knowledge/d.md", "# D\ndamson\n", t0)
	res, err = x.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(res.Paths)
	if !slices.Equal(res.Paths, []string{"knowledge/b.md", "knowledge/d.md"}) || res.Indexed != 2 {
		t.Errorf("second sync indexed %v (%d), want b (edited) and d (new)", res.Paths, res.Indexed)
	}
	if !slices.Equal(res.RemovedPaths, []string{"knowledge/c.md"}) || res.Removed != 1 {
		t.Errorf("second sync removed %v (%d), want c", res.RemovedPaths, res.Removed)
	}
	if res.Unchanged != 1 || res.Scanned != 3 {
		t.Errorf("second sync scanned %d, unchanged %d; want 3 and 1 (a)", res.Scanned, res.Unchanged)
	}
	for word, want := range map[string][]string{
		"banana": nil, "blueberry": {"knowledge/b.md"}, "cherry": nil,
		"damson": {"knowledge/d.md"}, "apricot": {"knowledge/a.md"},
	} {
		if got := searchPaths(t, x, word); !slices.Equal(got, want) {
			t.Errorf("%s found in %v, want %v", word, got, want)
		}
	}
	files, err := x.opts.Index.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files["knowledge/c.md"]; ok || len(files) != 3 {
		t.Errorf("index files = %v, want a, b and d", keys(files))
	}

	res, err = x.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Indexed != 0 || res.Removed != 0 || res.Unchanged != 3 {
		t.Errorf("sync with nothing changed = %+v, want three unchanged", res)
	}
}

// TestFreshAfterEdit: without a watcher, Fresh is a full sync: an edit
// made after the last sync is in the index when Fresh returns.
func TestFreshAfterEdit(t *testing.T) {
	t.Parallel()
	x := newIndexer(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	writePage(t, x, "knowledge/page.md", "# Page\nfirst words\n", t0)
	if _, err := x.Fresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := searchPaths(t, x, "first"); !slices.Equal(got, []string{"knowledge/page.md"}) {
		t.Fatalf("first found in %v, want the page", got)
	}
	writePage(t, x, "knowledge/page.md", "# Page\nsecond words\n", t0.Add(time.Second))
	res, err := x.Fresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Paths, []string{"knowledge/page.md"}) {
		t.Errorf("Fresh after the edit indexed %v, want the page", res.Paths)
	}
	if got := searchPaths(t, x, "first"); len(got) != 0 {
		t.Errorf("first still found in %v after the edit", got)
	}
	if got := searchPaths(t, x, "second"); !slices.Equal(got, []string{"knowledge/page.md"}) {
		t.Errorf("second found in %v, want the page", got)
	}
}

// TestSyncPathsOnlyThose: SyncPaths looks at the pages it is given and no
// others: an unnamed new page waits for the next full sync, a named
// deleted page leaves the index.
func TestSyncPathsOnlyThose(t *testing.T) {
	t.Parallel()
	x := newIndexer(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	writePage(t, x, "knowledge/kept.md", "# Kept\nkiwi\n", t0)
	if _, err := x.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	writePage(t, x, "knowledge/named.md", "# Named\nnectarine\n", t0)
	writePage(t, x, "knowledge/other.md", "# Other\norange\n", t0)
	if err := os.Remove(filepath.Join(x.opts.Notebook.Root(), "knowledge", "kept.md")); err != nil {
		t.Fatal(err)
	}
	if err := x.SyncPaths(ctx, "knowledge/named.md", "knowledge/kept.md"); err != nil {
		t.Fatal(err)
	}
	files, err := x.opts.Index.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(files); !slices.Equal(got, []string{"knowledge/named.md"}) {
		t.Errorf("index files after SyncPaths = %v, want only the named new page", got)
	}
}
