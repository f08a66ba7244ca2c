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
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memhost/memhost/fault"
)

// TestSymlinkSwapRace swaps the notebook's daily/ folder with a symlink to
// an outside folder (an atomic rename exchange, over and over) while pages
// in it are written, read, removed and renamed. Paths are resolved
// beneath the root without a check-then-use window, so nothing is ever
// written outside and no read returns the outside file.
func TestSymlinkSwapRace(t *testing.T) {
	n := newNotebook(t)
	ctx := context.Background()
	outside := t.TempDir()
	secret := []byte("OUTSIDE secret\n")
	if err := os.WriteFile(filepath.Join(outside, "x.md"), secret, 0o644); err != nil {
		t.Fatal(err)
	}
	daily := filepath.Join(n.Root(), "daily")
	swap := filepath.Join(n.Root(), "swap")
	if err := os.Symlink(outside, swap); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(daily, "x.md"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var leaks atomic.Int64
	work := func(f func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				f(i)
			}
		}()
	}
	work(func(int) { // writes through Clean then Update, as host.Write does
		rel, err := n.Clean("daily/x.md")
		if err != nil {
			return
		}
		n.Update(ctx, rel, func(old []byte, _ bool) ([]byte, error) {
			if bytes.Contains(old, []byte("OUTSIDE")) {
				leaks.Add(1)
			}
			return append(old, "entry\n"...), nil
		})
	})
	work(func(int) { // new pages, then removed, and renamed
		rel, err := n.Clean("daily/y.md")
		if err != nil {
			return
		}
		n.Update(ctx, rel, func([]byte, bool) ([]byte, error) { return []byte("y\n"), nil })
		n.Rename(ctx, "daily/y.md", "daily/z.md")
		n.Remove(ctx, "daily/z.md")
	})
	for range 2 { // reads as host.Get does
		work(func(int) {
			rel, err := n.Clean("daily/x.md")
			if err != nil {
				return
			}
			if data, err := n.Read(rel); err == nil && bytes.Contains(data, []byte("OUTSIDE")) {
				leaks.Add(1)
			}
		})
	}
	exchanges := exchangeWhile(t, &wg, daily, swap)
	if got := leaks.Load(); got > 0 {
		t.Errorf("%d reads returned the outside file's content", got)
	}
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "x.md" {
			t.Errorf("a write landed outside the notebook: %s", e.Name())
		}
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "x.md")); !bytes.Equal(got, secret) {
		t.Errorf("the outside file was changed: %q", got)
	}
	t.Logf("%d exchanges", exchanges)
}

// hangGuard fails the test if f does not return within a generous time:
// the calls it guards must never block on what the file system holds.
func hangGuard(t *testing.T, what string, f func() error) error {
	t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s hangs", what)
		return nil
	}
}

// TestFIFOPage: a FIFO (or any file that is not a regular file) where a
// page would be is refused at once, as bad input, without blocking and
// without holding the notebook lock; a write to another page right after
// succeeds.
func TestFIFOPage(t *testing.T) {
	n := newNotebook(t)
	ctx := context.Background()
	fifo := filepath.Join(n.Root(), "daily", "x.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ops := []struct {
		name string
		f    func() error
	}{
		{"read", func() error { _, err := n.Read("daily/x.md"); return err }},
		{"update", func() error {
			return n.Update(ctx, "daily/x.md", func(old []byte, _ bool) ([]byte, error) { return append(old, "x\n"...), nil })
		}},
		{"remove", func() error { return n.Remove(ctx, "daily/x.md") }},
		{"rename", func() error { return n.Rename(ctx, "daily/x.md", "daily/y.md") }},
	}
	for _, op := range ops {
		err := hangGuard(t, op.name, op.f)
		if err == nil {
			t.Fatalf("%s of a FIFO page: no error", op.name)
		}
		if got := fault.KindOf(err); got != fault.BadInput {
			t.Errorf("%s: kind %s, want %s (%v)", op.name, got, fault.BadInput, err)
		}
		if want := "not a regular file (a FIFO): daily/x.md"; !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not say %q", op.name, err, want)
		}
		err = hangGuard(t, "a write after "+op.name, func() error {
			return n.Update(ctx, "daily/ok.md", func(old []byte, _ bool) ([]byte, error) { return append(old, "ok\n"...), nil })
		})
		if err != nil {
			t.Fatalf("write after %s: %v", op.name, err)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is gone or changed: %v %v", fi, err)
	}
}

// TestSymlinkLoopPage: a page that is a symlink loop is bad input, not an
// internal error.
func TestSymlinkLoopPage(t *testing.T) {
	n := newNotebook(t)
	ctx := context.Background()
	for _, l := range [][2]string{{"a.md", "a.md"}, {"b.md", "c.md"}, {"c.md", "b.md"}} {
		if err := os.Symlink(l[1], filepath.Join(n.Root(), l[0])); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"a.md", "b.md"} {
		_, cerr := n.Clean(p)
		_, rerr := n.Read(p)
		uerr := n.Update(ctx, p, func(old []byte, _ bool) ([]byte, error) { return []byte("x\n"), nil })
		for _, err := range []error{cerr, rerr, uerr} {
			if err == nil {
				continue // Clean may leave it to the read
			}
			if got := fault.KindOf(err); got != fault.BadInput {
				t.Errorf("%s: kind %s, want %s (%v)", p, got, fault.BadInput, err)
			}
		}
		if rerr == nil || uerr == nil {
			t.Errorf("%s: read %v, update %v: want errors", p, rerr, uerr)
		}
	}
}

// TestWritesNeverFollowSymlinks: a page or folder that is a symlink, even
// one that leads inside the notebook, is never written through; reads
// follow a link that stays inside.
func TestWritesNeverFollowSymlinks(t *testing.T) {
	n := newNotebook(t)
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(n.Root(), "lists", "todo.md"), []byte("todo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(n.Root(), "lists"), filepath.Join(n.Root(), "inside")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("lists/todo.md", filepath.Join(n.Root(), "alias.md")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"inside/todo.md", "alias.md"} {
		got, err := n.Read(p)
		if err != nil || string(got) != "todo\n" {
			t.Errorf("read %s = %q, %v; want the page it leads to", p, got, err)
		}
		err = n.Update(ctx, p, func(old []byte, _ bool) ([]byte, error) { return append(old, "more\n"...), nil })
		if fault.KindOf(err) != fault.BadInput || !errors.Is(err, ErrBadPath) {
			t.Errorf("update %s: %v, want a bad-input error", p, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(n.Root(), "lists", "todo.md")); string(got) != "todo\n" {
		t.Errorf("written through a symlink: %q", got)
	}
}

// exchangeWhile exchanges a and b (RENAME_EXCHANGE) again and again while
// wg's goroutines run, then leaves them as they were; it returns how many
// exchanges it made.
func exchangeWhile(t *testing.T, wg *sync.WaitGroup, a, b string) int {
	t.Helper()
	var done atomic.Bool
	go func() {
		wg.Wait()
		done.Store(true)
	}()
	exchange := func() {
		if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
			t.Fatalf("exchange: %v", err)
		}
	}
	n := 0
	for ; !done.Load() && n < 1_000_000; n++ {
		exchange()
	}
	wg.Wait()
	if n%2 == 1 {
		exchange()
	}
	return n
}
