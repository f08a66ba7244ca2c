package lint

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideRef is a reference to a document outside the repository: the
// issues and the specification documents the project was built from
// ("issue 27", "seed 004 §6.2"), which a reader of the code does not have.
// A random seed given as a flag ("--seed 7") is not one.
var outsideRef = regexp.MustCompile(`(?i)(^|[^-\w])(issues? #?[0-9]+|seeds? #?[0-9]+)`)

// TestNoOutsideReferences: the code's comments and the docs name the
// repository's own docs, never an issue or a specification document.
func TestNoOutsideReferences(t *testing.T) {
	root := filepath.Join("..", "..")
	check := func(rel string, data []byte) {
		for i, line := range strings.Split(string(data), "\n") {
			if m := outsideRef.FindStringSubmatch(line); m != nil {
				t.Errorf("%s:%d: %q refers to a document outside the repository: name the repository's docs instead", rel, i+1, strings.TrimSpace(m[2]))
			}
		}
	}
	goSources(t, func(rel, path string) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		check(rel, data)
	})
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	guide, _ := filepath.Glob(filepath.Join(root, "docs", "guide", "*.md"))
	for _, f := range append(append([]string{filepath.Join(root, "README.md")}, docs...), guide...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		check(filepath.ToSlash(rel), data)
	}
	if len(docs) < 3 {
		t.Fatalf("found %d docs under docs/", len(docs))
	}
}
