package federation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCommitWhileGitHoldsTheIndex: a person's (or the test's, or an
// editor's) git status holds index.lock for a moment just as a commit made
// without the index brings the index to the new HEAD. The commit must
// wait for it, not leave an index behind HEAD — which reads as staged
// changes ("MM") that no later commit ever cleared.
func TestCommitWhileGitHoldsTheIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newHome(t, "a", map[string]string{"notebook/knowledge/plan.md": "# Plan\n\n- one\n"})
	write(t, r.Dir, "notebook/knowledge/plan.md", "# Plan\n\n- one\n- two\n")
	lock := filepath.Join(r.Dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.Remove(lock)
	}()
	home, err := r.g().OpenHome()
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	if ok, err := r.g().Commit(ctx, home, "edit", []string{"notebook/knowledge/plan.md"}, nil, false); err != nil || !ok {
		t.Fatalf("commit while index.lock was held: %v %v", ok, err)
	}
	if st, err := r.Git(ctx, "status", "--porcelain"); err != nil || strings.TrimSpace(st) != "" {
		t.Fatalf("after the commit, git status: %q %v", st, err)
	}

	// An index left behind HEAD (as by a commit before this fix) is
	// brought to HEAD by the next commit, even one with nothing to commit.
	if _, err := r.Git(ctx, "read-tree", "HEAD~1"); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.g().Commit(ctx, home, "nothing", []string{"notebook/knowledge/plan.md"}, nil, false); err != nil || ok {
		t.Fatalf("a commit with nothing to commit: %v %v", ok, err)
	}
	if st, err := r.Git(ctx, "status", "--porcelain"); err != nil || strings.TrimSpace(st) != "" {
		t.Fatalf("after a commit with nothing to commit, git status: %q %v", st, err)
	}
}
