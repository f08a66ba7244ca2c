package lint

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRootImportsNothingOfOurs: the root package (memhost's domain types)
// imports no package of the module, so that every package may import it.
func TestRootImportsNothingOfOurs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no root package files: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, "github.com/memhost/memhost") {
				t.Errorf("%s imports %s", filepath.Base(f), p)
			}
		}
	}
}
