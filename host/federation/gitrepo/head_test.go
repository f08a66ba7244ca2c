package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHead: HEAD's commit in 12 digits, read from .git on a branch and
// from git when HEAD is detached; "" before the first commit. (A rename
// once turned the flag into --Short=12, which git echoes back.)
func TestHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@test"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	r := &Repo{Dir: dir}
	if h := r.Head(ctx); h != "" {
		t.Errorf("Head before the first commit = %q, want \"\"", h)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.md")
	git("commit", "-q", "-m", "a")
	full := git("rev-parse", "HEAD")
	if h := r.Head(ctx); h != full[:12] {
		t.Errorf("Head on a branch = %q, want %q", h, full[:12])
	}
	git("checkout", "-q", "--detach")
	if h := r.Head(ctx); h != full[:12] || !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(h) {
		t.Errorf("Head detached = %q, want %q", h, full[:12])
	}
}
