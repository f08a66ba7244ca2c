package lint

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goSources calls fn with each non-test .go file of the repository: rel
// is its slash path from the root, path the file's. Hidden folders,
// testdata (fixtures, not memhost's code), vendor, bin and node_modules
// are not looked at. It fails the test when the walk finds fewer files
// than the repository holds.
func goSources(t *testing.T, fn func(rel, path string)) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository root %s has no go.mod: %v", root, err)
	}
	var checked int
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		if e.IsDir() {
			name := e.Name()
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		checked++
		fn(rel, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d .go files looked at under %s: the walk is wrong", checked, root)
	}
}
