package federation

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestCommitAfterAKilledGit: a git killed while it wrote memhost's
// private index leaves its index.lock behind; the next commit through git
// (a page in a new folder, which the fast path leaves to git) still
// works. With the index at a fixed name it failed with "Unable to create
// ...commit-index.lock: File exists" (TestSyncKilledMidway, once).
func TestCommitAfterAKilledGit(t *testing.T) {
	t.Parallel()
	r := newHome(t, "a", map[string]string{"notebook/top.md": "# Top\n"})
	tmp := filepath.Join(r.Dir, ".git", "memhost", "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"commit-index.lock", "merge-index.lock"} {
		if err := os.WriteFile(filepath.Join(tmp, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(t, r.Dir, "notebook/newfolder/page.md", "# New\n")
	if ok, err := r.Commit(context.Background(), "a page in a new folder", "notebook/newfolder/page.md"); err != nil || !ok {
		t.Fatalf("commit after a killed git: %v, %v", ok, err)
	}
	if got := tree(t, r)["notebook/newfolder/page.md"]; got != "# New\n" {
		t.Fatalf("committed %q", got)
	}
	left, _ := os.ReadDir(tmp)
	if len(left) != 2 {
		t.Errorf("memhost's tmp folder holds %d entries after the commit, want the 2 stale locks only", len(left))
	}
}
