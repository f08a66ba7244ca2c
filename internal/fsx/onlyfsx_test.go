package fsx

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// rawFileOps are the calls that lock a file or rename one into place
// without this package: every other package goes through fsx, so that
// each lock honours a context or says ErrLocked, and each rename flushes
// its folders.
var rawFileOps = regexp.MustCompile(`\b(?:(?:syscall|unix)\.(?:Fcntl)?Flock|(?:os|syscall|unix)\.Rename(?:at2?)?)\(`)

// rawAllowed lists the repository files (slash paths from its root) that
// may make such a call, each with why. Folders named testdata are not
// looked at: they hold fixtures, not memhost's code.
var rawAllowed = map[string]string{}

// TestOnlyFsxLocksAndRenames fails when a non-test .go file outside
// internal/fsx calls flock or renames a file itself.
func TestOnlyFsxLocksAndRenames(t *testing.T) {
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
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "bin" || name == "node_modules" || rel == "internal/fsx") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		checked++
		for _, hit := range rawCalls(t, p) {
			if _, ok := rawAllowed[rel]; !ok {
				t.Errorf("%s:%s\n\tlocks or renames a file itself: use internal/fsx (Lock, TryLock, LockFile, WriteFileAtomic, Rename)", rel, hit)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d .go files looked at under %s: the walk is wrong", checked, root)
	}
}

// rawCalls lists "line: text" of each raw lock or rename call in the file
// at path, comments left out.
func rawCalls(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for n := 1; s.Scan(); n++ {
		code, _, _ := strings.Cut(s.Text(), "//")
		if rawFileOps.MatchString(code) {
			out = append(out, strconv.Itoa(n)+": "+strings.TrimSpace(code))
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return out
}
