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
// each a leaf: TestRootImportsNothingOfOurs checks that they import
// nothing of ours but each other (origin returns fault's errors).
var rootMayImport = map[string]string{
	"github.com/memhost/memhost/fault":              "the error kinds the requests' Check methods return",
	"github.com/memhost/memhost/internal/jsoncheck": "the JSON checks those Check methods share with the server",
	"github.com/memhost/memhost/internal/origin":    "a turn's channel and source id, which Check methods check",
	"github.com/memhost/memhost/knowledge":          "the semantic tier's types (facts, consolidation), which recall, status and sessions carry",
}

// TestRootImportsNothingOfOurs: the root package (memhost's domain types)
// imports no package of the module but leaves, so that every package may
// import it. (A cycle among the leaves would not compile.)
func TestRootImportsNothingOfOurs(t *testing.T) {
	for leaf := range rootMayImport {
		dir := filepath.Join("..", "..", strings.TrimPrefix(leaf, "github.com/memhost/memhost/"))
		for f, ps := range ourImports(t, dir) {
			for _, p := range ps {
				if rootMayImport[p] == "" {
					t.Errorf("%s, which the root package imports, imports %s", f, p)
				}
			}
		}
	}
	for f, ps := range ourImports(t, filepath.Join("..", "..")) {
		for _, p := range ps {
			if rootMayImport[p] == "" {
				t.Errorf("%s imports %s", filepath.Base(f), p)
			}
		}
	}
	// knowledge, the semantic tier's part of the domain, imports nothing
	// of ours at all (its doc says so).
	for f, ps := range ourImports(t, filepath.Join("..", "..", "knowledge")) {
		t.Errorf("%s imports %v", f, ps)
	}
}

// ourImports lists, by file, the packages of the module that the
// non-test .go files in dir import.
func ourImports(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	out := map[string][]string{}
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
				out[f] = append(out[f], p)
			}
		}
	}
	return out
}
