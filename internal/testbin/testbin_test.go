package testbin

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// TestBuildCachesAcrossProcesses: a package is built once; a process that
// finds it in the cache (here: this one with its memory cleared) runs the
// same file without building again, and the binary works.
func TestBuildCachesAcrossProcesses(t *testing.T) {
	const pkg = "../../registry/testdata/faulty"
	first, err := Build(pkg, "")
	if err != nil {
		t.Fatal(err)
	}
	again, err := Build(pkg, "")
	if err != nil || again != first {
		t.Fatalf("second Build in a process = %q, %v; want %q", again, err, first)
	}
	before, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	builds = sync.Map{} // as a new test process would start
	later, err := Build(pkg, "")
	if err != nil || later != first {
		t.Fatalf("Build after the memory is cleared = %q, %v; want the cached %q", later, err, first)
	}
	after, err := os.Stat(later)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Error("the cached binary was built again")
	}
	// Run without the plugin handshake, it says so and exits.
	out, _ := exec.Command(first).CombinedOutput()
	if !strings.Contains(string(out), "plugin") {
		t.Errorf("the built binary printed %q", out)
	}
}

// TestKeyFollowsSources: the key changes with the build tags and names
// the package's import path.
func TestKeyFollowsSources(t *testing.T) {
	t.Parallel()
	ip, plain, err := sourceKey("../../registry/testdata/faulty", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ip != "github.com/memhost/memhost/registry/testdata/faulty" {
		t.Errorf("import path %q", ip)
	}
	_, tagged, err := sourceKey("../../registry/testdata/faulty", "sqlite_fts5", nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain == tagged {
		t.Error("the key does not change with the build tags")
	}
}
