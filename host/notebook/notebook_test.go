package notebook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func newNotebook(t *testing.T) *Notebook {
	t.Helper()
	dir := t.TempDir()
	n, err := Open(filepath.Join(dir, "notebook"), filepath.Join(dir, "brain", "notebook.lock"))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestClean(t *testing.T) {
	n := newNotebook(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(n.Root(), "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x.md"), filepath.Join(n.Root(), "dangling.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(n.Root(), "lists"), filepath.Join(n.Root(), "inside")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in      string
		want    string
		wantErr error
	}{
		{"reference/contacts.md", "reference/contacts.md", nil},
		{strings.Repeat("n", 252), strings.Repeat("n", 252) + ".md", nil},
		{strings.Repeat("n", 253), "", ErrBadPath}, // past NAME_MAX with .md
		{"a/" + strings.Repeat("n", 300) + "/b.md", "", ErrBadPath},
		{"reference/contacts", "reference/contacts.md", nil},
		{"./lists//shopping.md", "lists/shopping.md", nil},
		{"Notes.MD", "Notes.MD", nil},
		{"inside/todo.md", "inside/todo.md", nil}, // a link that stays inside
		{"../x", "", ErrOutsideNotebook},
		{"lists/../../x.md", "", ErrOutsideNotebook},
		{"/etc/passwd", "", ErrOutsideNotebook},
		{"out/secret.md", "", ErrOutsideNotebook},
		{"out/new/page.md", "", ErrOutsideNotebook},
		{"dangling.md", "", ErrOutsideNotebook},
		{"", "", ErrBadPath},
		{".", "", ErrBadPath},
		{"notes.txt", "", ErrBadPath},
		{"a\x00b.md", "", ErrBadPath},
		// One line, no control characters: a page name is printed in
		// recall and files output, one per line.
		{"notes/a\nb.md", "", ErrBadPath},
		{"a\tb.md", "", ErrBadPath},
		{"a\rb", "", ErrBadPath},
		{"a\x1b[31mb.md", "", ErrBadPath},
		{"a\u0085b.md", "", ErrBadPath},
		{"a\u2028b.md", "", ErrBadPath},
		{"caf\u00e9/na\u00efve.md", "caf\u00e9/na\u00efve.md", nil},
		// A folder is not a page.
		{"knowledge/", "", ErrBadPath},
		{"knowledge/./", "", ErrBadPath},
		{"./", "", ErrBadPath},
		{"knowledge", "", ErrBadPath},
		{"reference", "reference.md", nil}, // reference.md exists beside the folder
		{"new-folder/", "", ErrBadPath},
		// Hidden files and folders are not indexed.
		{".hidden/x.md", "", ErrBadPath},
		{"notes/.drafts/y.md", "", ErrBadPath},
		{".x.md", "", ErrBadPath},
		{".md", "", ErrBadPath},
		// Names are checked as path.Clean leaves them: what Clean returns
		// is accepted again as itself.
		{"  spaced name  ", "spaced name.md", nil},
		{"./ 0", "", ErrBadPath},
		{"a /b.md", "", ErrBadPath},
		{"a/ b", "", ErrBadPath},
		{"a/b .md", "a/b .md", nil},
		{`./\`, "", ErrOutsideNotebook},
		{`.//\x`, "", ErrOutsideNotebook},
		{`a/\x`, `a/\x.md`, nil},
	}
	if err := os.WriteFile(filepath.Join(n.Root(), "reference.md"), []byte("# Reference\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		got, err := n.Clean(tt.in)
		if !errors.Is(err, tt.wantErr) || got != tt.want {
			t.Errorf("Clean(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err == nil {
			if again, err := n.Clean(got); again != got || err != nil {
				t.Errorf("Clean(%q) = %q, but Clean(%q) = %q, %v", tt.in, got, got, again, err)
			}
		}
	}
}

func TestInside(t *testing.T) {
	n := newNotebook(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(n.Root(), "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(n.Root(), "lists"), filepath.Join(n.Root(), "in")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rel  string
		want error
	}{
		{"reference", nil},
		{".", nil},
		{"missing/folder", nil},
		{"in", nil},
		{"in/page.md", nil},
		{"out", ErrOutsideNotebook},
		{"out/page.md", ErrOutsideNotebook},
		{"..", ErrOutsideNotebook},
		{"../../missing", ErrOutsideNotebook},
	}
	for _, tt := range tests {
		if got := n.Inside(tt.rel); !errors.Is(got, tt.want) {
			t.Errorf("Inside(%q) = %v, want %v", tt.rel, got, tt.want)
		}
	}
}

func TestUpdateIsAtomicAndKeepsPageOnError(t *testing.T) {
	ctx := context.Background()
	n := newNotebook(t)
	err := n.Update(ctx, "lists/a.md", func(old []byte, exists bool) ([]byte, error) {
		if exists || old != nil {
			t.Errorf("new page: exists=%v old=%q", exists, old)
		}
		return []byte("first\n"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err = n.Update(ctx, "lists/a.md", func(old []byte, exists bool) ([]byte, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Update err = %v, want boom", err)
	}
	got, err := n.Read("lists/a.md")
	if err != nil || string(got) != "first\n" {
		t.Fatalf("page after failed update = %q, %v", got, err)
	}
	entries, _ := os.ReadDir(filepath.Join(n.Root(), "lists"))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	// A page in a folder that does not exist yet.
	if err := n.Update(ctx, "projects/2026/plan.md", func([]byte, bool) ([]byte, error) { return []byte("x\n"), nil }); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateKeepsFileMode(t *testing.T) {
	ctx := context.Background()
	n := newNotebook(t)
	p := filepath.Join(n.Root(), "private.md")
	if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := n.Update(ctx, "private.md", func(old []byte, _ bool) ([]byte, error) { return append(old, "y\n"...), nil }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
}

// TestConcurrentUpdatesLoseNothing: many writers appending to one page, as
// several memhost processes would; the lock makes every append land.
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Two Notebook values on one folder stand for two processes: they share
	// only the lock file.
	var nbs []*Notebook
	for range 2 {
		n, err := Open(filepath.Join(dir, "notebook"), filepath.Join(dir, "notebook.lock"))
		if err != nil {
			t.Fatal(err)
		}
		nbs = append(nbs, n)
	}
	var wg sync.WaitGroup
	const each = 25
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				err := nbs[w%2].Update(ctx, "lists/todo.md", func(old []byte, _ bool) ([]byte, error) {
					return fmt.Appendf(old, "- item %d-%d\n", w, i), nil
				})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got, _ := nbs[0].Read("lists/todo.md")
	lines := 0
	for _, c := range got {
		if c == '\n' {
			lines++
		}
	}
	if lines != 4*each {
		t.Errorf("page has %d lines, want %d", lines, 4*each)
	}
}

func TestRemoveAndRead(t *testing.T) {
	ctx := context.Background()
	n := newNotebook(t)
	if _, err := n.Read("nope.md"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read missing: %v", err)
	}
	if err := n.Remove(ctx, "nope.md"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Remove missing: %v", err)
	}
	if err := n.Remove(ctx, "lists"); err == nil {
		t.Error("Remove of a folder succeeded")
	}
	if _, err := n.Read("lists"); err == nil {
		t.Error("Read of a folder succeeded")
	}
}

// TestWriteRemovesDeadWritersTemp: a page write killed before its rename
// leaves its temporary file; the next write to that folder (holding the
// lock, so no live writer has one) removes it.
func TestWriteRemovesDeadWritersTemp(t *testing.T) {
	root := t.TempDir()
	n, err := Open(root, filepath.Join(t.TempDir(), "notebook.lock"))
	if err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(root, "reference", TempPrefix+"123")
	os.MkdirAll(filepath.Dir(left), 0o755)
	os.WriteFile(left, []byte("half a page"), 0o644)
	if err := n.Update(context.Background(), "reference/x.md", func([]byte, bool) ([]byte, error) { return []byte("x\n"), nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("the dead writer's temporary file is still there: %v", err)
	}
}
