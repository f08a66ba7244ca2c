package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeTextRelativeTemp: the merge's folder may be given relative to
// this process's working folder (a home given as --home b), though git
// runs in the repository's.
func TestMergeTextRelativeTemp(t *testing.T) {
	r, _ := testRepo(t, "memhost <memhost@localhost>")
	work := t.TempDir()
	t.Chdir(work)
	if err := os.Mkdir("stage", 0o700); err != nil {
		t.Fatal(err)
	}
	merged, ok, err := r.MergeText(context.Background(), "stage", []byte("# P\n\n- a\n"), []byte("# P\n\n- a\n- ours\n"), []byte("# P\n\n- theirs\n- a\n"))
	if err != nil || !ok || !strings.Contains(string(merged), "- ours") || !strings.Contains(string(merged), "- theirs") {
		t.Fatalf("MergeText in a relative folder = %q %v %v", merged, ok, err)
	}
	if left, _ := filepath.Glob(filepath.Join(work, "stage", "*")); len(left) != 0 {
		t.Errorf("the merge left %v", left)
	}
}
