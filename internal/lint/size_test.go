package lint

import (
	"bytes"
	"os"
	"path"
	"sort"
	"testing"
)

// maxPackageLines is the most non-test lines a package of ours may hold
// (issue 27): past it, a package holds more than one thing a newcomer can
// name, and it is split along a seam. Generated code does not count.
const maxPackageLines = 1500

// oversize lists the packages allowed past maxPackageLines, each with why.
var oversize = map[string]string{}

// TestPackageSize fails when a package holds more than maxPackageLines
// non-test lines of code not generated.
func TestPackageSize(t *testing.T) {
	lines := map[string]int{}
	goSources(t, func(rel, p string) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data[:min(len(data), 512)], []byte("// Code generated ")) {
			return
		}
		lines[path.Dir(rel)] += bytes.Count(data, []byte("\n"))
	})
	var dirs []string
	for d := range lines {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if n := lines[d]; n > maxPackageLines {
			if _, ok := oversize[d]; !ok {
				t.Errorf("%s holds %d non-test lines, more than %d: split it along a seam", d, n, maxPackageLines)
			}
		}
	}
	for d := range oversize {
		if lines[d] <= maxPackageLines {
			t.Errorf("%s holds %d non-test lines: take it off the oversize list", d, lines[d])
		}
	}
}
