package federated

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memhost/memhost/host/federation"
)

// The committer batches changes noted at once into few commits, whose
// messages name every change, from many goroutines (-race).
func TestCommitterConcurrent(t *testing.T) {
	r := newHome(t, "a")
	c := NewCommitter(r, 200*time.Millisecond, nil)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprintf("notebook/p%d.md", i)
			if err := os.WriteFile(filepath.Join(r.Dir, p), []byte("# p\n"), 0o644); err != nil {
				t.Error(err)
			}
			c.Note(Change{Message: "write: " + p, Paths: []string{p}})
		}()
	}
	wg.Wait()
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	log, err := r.Git(context.Background(), "log", "--format=%B%x00")
	if err != nil {
		t.Fatal(err)
	}
	commits := strings.Count(log, "\x00") - 1 // the init commit
	if commits < 1 || commits > 3 {
		t.Fatalf("%d commits for 20 changes noted at once, want 1 to 3", commits)
	}
	for i := 0; i < 20; i++ {
		if w := fmt.Sprintf("notebook/p%d.md\n", i); strings.Count(log, w) != 1 {
			t.Fatalf("want %q once in the log:\n%s", w, log)
		}
	}
	files, err := r.Git(context.Background(), "ls-files")
	if err != nil || len(strings.Fields(files)) != 21 {
		t.Fatalf("tree %v, %v", files, err)
	}
}

// newHome is a home initialised for federation.
func newHome(t *testing.T, name string) *federation.Repo {
	t.Helper()
	r := &federation.Repo{Dir: filepath.Join(t.TempDir(), name), Author: name + " <" + name + "@test>"}
	if err := os.MkdirAll(filepath.Join(r.Dir, "notebook"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Init(context.Background(), federation.InitOptions{}); err != nil {
		t.Fatalf("init %s: %v", name, err)
	}
	return r
}
