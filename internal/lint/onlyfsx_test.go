package lint

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// rawFileOps are the calls that lock a file or rename one into place
// without internal/fsx: every other package goes through fsx, so that
// each lock honours a context or says ErrLocked, and each rename flushes
// its folders.
var rawFileOps = regexp.MustCompile(`\b(?:(?:syscall|unix)\.(?:Fcntl)?Flock|(?:os|syscall|unix)\.Rename(?:at2?)?)\(`)

// rawAllowed lists the repository files (slash paths from its root) that
// may make such a call, each with why. Folders named testdata are not
// looked at: they hold fixtures, not memhost's code.
var rawAllowed = map[string]string{
	// The simulator plays a person renaming a page in an editor: a plain
	// rename, outside memhost, is what it must do to be that person.
	"cmd/memhost-sim/agent.go": "a person's editor renames a page",
}

// TestOnlyFsxLocksAndRenames fails when a non-test .go file outside
// internal/fsx calls flock or renames a file itself.
func TestOnlyFsxLocksAndRenames(t *testing.T) {
	goSources(t, func(rel, path string) {
		if strings.HasPrefix(rel, "internal/fsx/") {
			return
		}
		for _, hit := range rawCalls(t, path) {
			if _, ok := rawAllowed[rel]; !ok {
				t.Errorf("%s:%s\n\tlocks or renames a file itself: use internal/fsx (Lock, TryLock, LockFile, WriteFileAtomic, Rename)", rel, hit)
			}
		}
	})
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
