// Package damage damages files for tests, as a failing disk would.
package damage

import (
	"os"
	"testing"
)

// MiddleHalf overwrites the middle half of the file at path with garbage:
// an SQLite database keeps its first page, the header, so it still opens,
// and its checks find the damage.
func MiddleHalf(t testing.TB, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 5*4096 {
		t.Fatalf("%s is too small (%d bytes) to damage past its header", path, fi.Size())
	}
	junk := make([]byte, fi.Size()/2)
	for i := range junk {
		junk[i] = byte(i*31 + 7)
	}
	if _, err := f.WriteAt(junk, fi.Size()/4); err != nil {
		t.Fatal(err)
	}
}
