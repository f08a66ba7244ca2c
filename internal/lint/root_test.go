package lint

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rootMayImport are the packages of ours the root package may import,
// each a leaf (TestRootImportsNothingOfOurs checks that they import
// nothing of ours either).
var rootMayImport = map[string]string{
	"github.com/memhost/memhost/host/fault":         "the error kinds the requests' Check methods return",
	"github.com/memhost/memhost/internal/jsoncheck": "the JSON checks those Check methods share with the server",
}

// TestRootImportsNothingOfOurs: the root package (memhost's domain types)
// imports no package of the module but leaves, so that every package may
// import it.
func TestRootImportsNothingOfOurs(t *testing.T) {
	for leaf := range rootMayImport {
		dir := filepath.Join("..", "..", strings.TrimPrefix(leaf, "github.com/memhost/memhost/"))
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
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
					t.Errorf("%s, which the root package imports, imports %s", f, p)
				}
			}
		}
	}
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
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, "github.com/memhost/memhost") && rootMayImport[p] == "" {
				t.Errorf("%s imports %s", filepath.Base(f), p)
			}
		}
	}
}
