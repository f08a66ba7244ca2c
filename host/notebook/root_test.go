package notebook

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memhost/memhost/fault"
)

// TestRootSwappedForSymlink: after Open, the notebook folder itself is
// exchanged (a real RENAME_EXCHANGE) with a symlink to an outside folder
// that looks like a notebook. The root is held from Open, so no read
// returns the outside folder's pages and no write, remove or rename
// reaches it: each operation is refused with one line naming the
// notebook folder. Exchanged back, the notebook works again.
func TestRootSwappedForSymlink(t *testing.T) {
	for _, op := range []string{"rename-exchange", "move-and-replace"} {
		t.Run(op, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "notebook")
			n, err := Open(root, filepath.Join(dir, "brain", "notebook.lock"))
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			ctx := context.Background()
			if err := n.Update(ctx, "daily/x.md", func([]byte, bool) ([]byte, error) { return []byte("inside\n"), nil }); err != nil {
				t.Fatal(err)
			}
			outside := filepath.Join(t.TempDir(), "elsewhere")
			secret := []byte("OUTSIDE secret\n")
			for _, d := range []string{"daily", "lists"} {
				if err := os.MkdirAll(filepath.Join(outside, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []string{"daily/x.md", "daily/old.md"} {
				if err := os.WriteFile(filepath.Join(outside, p), secret, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			aside := filepath.Join(dir, "aside")
			swap := func() {
				t.Helper()
				if op == "rename-exchange" {
					if err := unix.Renameat2(unix.AT_FDCWD, root, unix.AT_FDCWD, aside, unix.RENAME_EXCHANGE); err != nil {
						t.Fatal(err)
					}
					return
				}
				if _, err := os.Lstat(aside); err != nil { // move the folder away, a symlink in its place
					if err := os.Rename(root, aside); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(outside, root); err != nil {
						t.Fatal(err)
					}
					return
				}
				if err := os.Remove(root); err != nil { // and back
					t.Fatal(err)
				}
				if err := os.Rename(aside, root); err != nil {
					t.Fatal(err)
				}
			}
			if op == "rename-exchange" {
				if err := os.Symlink(outside, aside); err != nil {
					t.Fatal(err)
				}
			}
			swap() // root is now a symlink to outside

			refused := func(what string, err error) {
				t.Helper()
				if err == nil {
					t.Errorf("%s after the notebook folder was replaced: no error", what)
					return
				}
				if msg := err.Error(); !strings.Contains(msg, root) || strings.Contains(msg, "\n") {
					t.Errorf("%s: error %q, want one line naming %s", what, msg, root)
				}
				if k := fault.KindOf(err); k != fault.Unavailable {
					t.Errorf("%s: kind %s, want unavailable: %v", what, k, err)
				}
			}
			data, err := n.Read("daily/x.md")
			if bytes.Contains(data, []byte("OUTSIDE")) {
				t.Errorf("Read returned the outside folder's page: %q", data)
			}
			refused("Read", err)
			data, _, err = n.ReadPrefix("daily/x.md", 100)
			if bytes.Contains(data, []byte("OUTSIDE")) {
				t.Errorf("ReadPrefix returned the outside folder's page: %q", data)
			}
			refused("ReadPrefix", err)
			_, err = n.Clean("daily/x")
			refused("Clean", err)
			refused("Update", n.Update(ctx, "daily/x.md", func(old []byte, _ bool) ([]byte, error) {
				if bytes.Contains(old, []byte("OUTSIDE")) {
					t.Errorf("Update read the outside folder's page")
				}
				return append(old, "entry\n"...), nil
			}))
			refused("Update (new page)", n.Update(ctx, "lists/new.md", func([]byte, bool) ([]byte, error) { return []byte("new\n"), nil }))
			refused("Remove", n.Remove(ctx, "daily/old.md"))
			refused("Rename", n.Rename(ctx, "daily/old.md", "daily/moved.md"))
			_, err = n.Leftovers(ctx, true)
			refused("Leftovers", err)

			var got []string
			filepath.WalkDir(outside, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(outside, p)
					got = append(got, rel)
					if b, _ := os.ReadFile(p); !bytes.Equal(b, secret) {
						t.Errorf("the outside file %s was changed: %q", rel, b)
					}
				}
				return nil
			})
			if want := "daily/old.md daily/x.md"; strings.Join(got, " ") != want {
				t.Errorf("outside folder holds %v, want %s", got, want)
			}

			swap() // the notebook is back where it was
			data, err = n.Read("daily/x.md")
			if err != nil || string(data) != "inside\n" {
				t.Errorf("Read once the notebook is back: %q, %v", data, err)
			}
			if err := n.Update(ctx, "daily/x.md", func(old []byte, _ bool) ([]byte, error) { return append(old, "more\n"...), nil }); err != nil {
				t.Errorf("Update once the notebook is back: %v", err)
			}
		})
	}
}

// TestClosedNotebook: operations after Close fail with an error, never
// act on whatever descriptor reuses the number; a second Close is a no-op.
func TestClosedNotebook(t *testing.T) {
	n := newNotebook(t)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	other, err := os.Open(t.TempDir()) // likely takes the closed descriptor's number
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := n.Read("daily/x.md"); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v, want ErrClosed", err)
	}
	err = n.Update(context.Background(), "x.md", func([]byte, bool) ([]byte, error) { return []byte("x"), nil })
	if !errors.Is(err, ErrClosed) {
		t.Errorf("Update after Close: %v, want ErrClosed", err)
	}
}

// TestRootSwapRace exchanges the notebook folder with a symlink to an
// outside notebook over and over (RENAME_EXCHANGE) while pages are
// written, read, removed and renamed: whatever moment the exchange comes
// at, between the check that the path still leads to the folder opened
// and the operation, nothing is read from or written to the outside
// folder.
func TestRootSwapRace(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "notebook")
	n, err := Open(root, filepath.Join(dir, "brain", "notebook.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx := context.Background()
	outside := filepath.Join(t.TempDir(), "elsewhere")
	secret := []byte("OUTSIDE secret\n")
	if err := os.MkdirAll(filepath.Join(outside, "daily"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "daily", "x.md"), secret, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "daily", "x.md"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	aside := filepath.Join(dir, "aside")
	if err := os.Symlink(outside, aside); err != nil {
		t.Fatal(err)
	}

	var leaks atomic.Int64
	var wg sync.WaitGroup
	work := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1500 {
				f()
			}
		}()
	}
	work(func() {
		n.Update(ctx, "daily/x.md", func(old []byte, _ bool) ([]byte, error) {
			if bytes.Contains(old, []byte("OUTSIDE")) {
				leaks.Add(1)
			}
			return append(old, "entry\n"...), nil
		})
	})
	work(func() {
		n.Update(ctx, "daily/y.md", func([]byte, bool) ([]byte, error) { return []byte("y\n"), nil })
		n.Rename(ctx, "daily/y.md", "daily/z.md")
		n.Remove(ctx, "daily/z.md")
	})
	work(func() {
		if data, err := n.Read("daily/x.md"); err == nil && bytes.Contains(data, []byte("OUTSIDE")) {
			leaks.Add(1)
		}
		if data, _, err := n.ReadPrefix("daily/x.md", 1<<20); err == nil && bytes.Contains(data, []byte("OUTSIDE")) {
			leaks.Add(1)
		}
	})
	exchanges := exchangeWhile(t, &wg, root, aside)
	if got := leaks.Load(); got > 0 {
		t.Errorf("%d reads returned the outside folder's page", got)
	}
	filepath.WalkDir(outside, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if rel, _ := filepath.Rel(outside, p); rel != filepath.Join("daily", "x.md") {
				t.Errorf("a write landed outside the notebook: %s", rel)
			} else if b, _ := os.ReadFile(p); !bytes.Equal(b, secret) {
				t.Errorf("the outside page was changed: %.60q", b)
			}
		}
		return nil
	})
	if data, err := n.Read("daily/x.md"); err != nil || !bytes.HasPrefix(data, []byte("inside\n")) {
		t.Errorf("the page after the race: %.40q, %v", data, err)
	}
	t.Logf("%d exchanges", exchanges)
}

// TestLeftoversBeneathRoot: Leftovers finds and removes the temporary
// files of dead writers in every folder beneath the root, and none
// through a symlinked folder (whose files are not the notebook's).
func TestLeftoversBeneathRoot(t *testing.T) {
	n := newNotebook(t)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(n.Root(), "knowledge", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(n.Root(), "out")); err != nil {
		t.Fatal(err)
	}
	temps := []string{TempPrefix + "1", filepath.Join("knowledge", "deep", TempPrefix+"2")}
	for _, p := range append(temps, filepath.Join("knowledge", "keep.md")) {
		if err := os.WriteFile(filepath.Join(n.Root(), p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	theirs := filepath.Join(outside, TempPrefix+"3")
	if err := os.WriteFile(theirs, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range temps {
		want = append(want, filepath.Join(n.Root(), p))
	}
	for _, remove := range []bool{false, true} {
		got, err := n.Leftovers(context.Background(), remove)
		if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("Leftovers(remove=%v): %v, %v; want %v", remove, got, err, want)
		}
	}
	for _, p := range temps {
		if _, err := os.Lstat(filepath.Join(n.Root(), p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s not removed: %v", p, err)
		}
	}
	for _, p := range []string{theirs, filepath.Join(n.Root(), "knowledge", "keep.md")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
