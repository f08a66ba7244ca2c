package lint

import (
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// archived are modules whose repositories their maintainers archived,
// each with the maintained module that replaces it.
var archived = map[string]string{
	"gopkg.in/yaml.v3": "go.yaml.in/yaml/v3 (the YAML organisation's fork, the same API)",
}

// TestNoArchivedModules: no source imports a module that is no longer
// maintained.
func TestNoArchivedModules(t *testing.T) {
	goSources(t, func(rel, path string) {
		af, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if by, ok := archived[p]; ok {
				t.Errorf("%s imports %s, which is archived: use %s", rel, p, by)
			}
		}
	})
}
