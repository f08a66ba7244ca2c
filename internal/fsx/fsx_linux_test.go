package fsx

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// modes runs f with openat2 and with the walk that replaces it where
// openat2 is missing.
func modes(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", f)
	t.Run("walk", func(t *testing.T) {
		noOpenat2.Store(true)
		defer noOpenat2.Store(false)
		f(t)
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	modes(t, func(t *testing.T) {
		root := t.TempDir()
		outside := t.TempDir()
		must(t, os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o644))
		must(t, os.MkdirAll(filepath.Join(root, "lists", "deep"), 0o755))
		must(t, os.WriteFile(filepath.Join(root, "lists", "todo.md"), []byte("todo"), 0o644))
		must(t, os.Symlink(filepath.Join(root, "lists"), filepath.Join(root, "in")))               // absolute, inside
		must(t, os.Symlink("lists/todo.md", filepath.Join(root, "alias.md")))                      // relative, inside
		must(t, os.Symlink("../todo.md", filepath.Join(root, "lists", "deep", "up.md")))           // "..", inside
		must(t, os.Symlink("../../../todo.md", filepath.Join(root, "lists", "deep", "escape.md"))) // "..", out
		must(t, os.Symlink(outside, filepath.Join(root, "out")))
		must(t, os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "outlink.md")))
		must(t, os.Symlink("loop.md", filepath.Join(root, "loop.md")))
		must(t, os.Symlink("missing.md", filepath.Join(root, "dangling.md")))
		must(t, syscall.Mkfifo(filepath.Join(root, "fifo.md"), 0o644))
		d, err := OpenDir(root)
		must(t, err)
		defer d.Close()

		tests := []struct {
			rel          string
			noLinks, ins error // nil: reads "todo"
		}{
			{"lists/todo.md", nil, nil},
			{"in/todo.md", ErrSymlink, nil},
			{"alias.md", ErrSymlink, nil},
			{"lists/deep/up.md", ErrSymlink, nil},
			{"lists/deep/escape.md", ErrSymlink, ErrOutside},
			{"out/secret.md", ErrSymlink, ErrOutside},
			{"outlink.md", ErrSymlink, ErrOutside},
			{"loop.md", ErrSymlink, unix.ELOOP},
			{"dangling.md", ErrSymlink, fs.ErrNotExist},
			{"missing.md", fs.ErrNotExist, fs.ErrNotExist},
			{"fifo.md", ErrNotRegular, ErrNotRegular},
			{"lists", unix.EISDIR, unix.EISDIR},
			{"lists/todo.md/x.md", unix.ENOTDIR, unix.ENOTDIR},
			{"../x.md", ErrOutside, ErrOutside},
		}
		for _, tt := range tests {
			for _, c := range []struct {
				links Links
				want  error
			}{{NoLinks, tt.noLinks}, {LinksInside, tt.ins}} {
				got, err := readWithin(t, d, tt.rel, c.links)
				switch {
				case c.want == nil && (err != nil || got != "todo"):
					t.Errorf("ReadFile(%q, %d) = %q, %v; want todo", tt.rel, c.links, got, err)
				case c.want != nil && !errors.Is(err, c.want):
					t.Errorf("ReadFile(%q, %d): %v, want %v", tt.rel, c.links, err, c.want)
				}
			}
		}
		if err := d.Inside("in/new/page.md"); err != nil {
			t.Errorf("Inside(in/new/page.md) = %v", err)
		}
		for _, rel := range []string{"out/x.md", "dangling.md", "outlink.md"} {
			if err := d.Inside(rel); !errors.Is(err, ErrOutside) {
				t.Errorf("Inside(%s) = %v, want ErrOutside", rel, err)
			}
		}
		if _, err := d.Sub("in", true); !errors.Is(err, ErrSymlink) {
			t.Errorf("Sub(in) = %v, want ErrSymlink", err)
		}
		if _, err := d.Sub("out/new", true); !errors.Is(err, ErrSymlink) {
			t.Errorf("Sub(out/new) = %v, want ErrSymlink", err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 1 {
			t.Errorf("outside holds %d files", len(entries))
		}
	})
}

// readWithin reads with a guard: a read that blocks fails the test.
func readWithin(t *testing.T, d *Dir, rel string, links Links) (string, error) {
	t.Helper()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() { b, err := d.ReadFile(rel, links); ch <- res{b, err} }()
	select {
	case r := <-ch:
		return string(r.b), r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("ReadFile(%q) hangs", rel)
		return "", nil
	}
}

// TestSwapRace: with a folder exchanged for a symlink to an outside folder
// over and over, writes through Sub and WriteFile and reads through
// ReadFile never reach outside, in both modes.
func TestSwapRace(t *testing.T) {
	modes(t, func(t *testing.T) {
		root := t.TempDir()
		outside := t.TempDir()
		must(t, os.WriteFile(filepath.Join(outside, "x.md"), []byte("OUTSIDE"), 0o644))
		must(t, os.MkdirAll(filepath.Join(root, "daily"), 0o755))
		must(t, os.WriteFile(filepath.Join(root, "daily", "x.md"), []byte("inside"), 0o644))
		must(t, os.Symlink(outside, filepath.Join(root, "swap")))
		d, err := OpenDir(root)
		must(t, err)
		defer d.Close()
		var wg sync.WaitGroup
		var leaks atomic.Int64
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 2000 {
					if w == 0 {
						if sub, err := d.Sub("daily", true); err == nil {
							sub.WriteFile("x.md", []byte("inside"), 0o644)
							sub.Close()
						}
						continue
					}
					if b, err := d.ReadFile("daily/x.md", LinksInside); err == nil && bytes.Contains(b, []byte("OUTSIDE")) {
						leaks.Add(1)
					}
				}
			}()
		}
		var done atomic.Bool
		go func() { wg.Wait(); done.Store(true) }()
		n := 0
		for ; !done.Load(); n++ {
			must(t, unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "daily"), unix.AT_FDCWD, filepath.Join(root, "swap"), unix.RENAME_EXCHANGE))
		}
		wg.Wait()
		if leaks.Load() > 0 {
			t.Errorf("%d reads returned the outside file", leaks.Load())
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 1 {
			t.Errorf("outside holds %d files", len(entries))
		}
		if b, _ := os.ReadFile(filepath.Join(outside, "x.md")); string(b) != "OUTSIDE" {
			t.Errorf("the outside file was written: %q", b)
		}
	})
}

func TestWriteFileKeepsOldOnError(t *testing.T) {
	root := t.TempDir()
	d, err := OpenDir(root)
	must(t, err)
	defer d.Close()
	must(t, d.WriteFile("p.md", []byte("one"), 0o640))
	must(t, os.Mkdir(filepath.Join(root, "dir.md"), 0o755))
	if err := d.WriteFile("dir.md", []byte("two"), 0o644); err == nil {
		t.Fatal("a folder was replaced by a file")
	}
	names, _ := d.Names()
	if len(names) != 2 {
		t.Errorf("names left: %v (a temporary file?)", names)
	}
	fi, err := os.Stat(filepath.Join(root, "p.md"))
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("p.md: %v %v", fi, err)
	}
}

func TestLockWaitHonoursContext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "brain", "x.lock")
	unlock, err := Lock(context.Background(), p)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		u, err := Lock(ctx, p)
		if err == nil {
			u()
		}
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock while held, context canceled: %v", err)
	}
	unlock()
	u, err := Lock(context.Background(), p)
	must(t, err)
	u()
}

func TestOpenFileRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	must(t, syscall.Mkfifo(p, 0o644))
	for _, flag := range []int{os.O_RDONLY, os.O_WRONLY | os.O_APPEND, os.O_RDWR} {
		_, err := OpenFile(p, flag, 0)
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenFile(fifo, %#x) = %v", flag, err)
		}
		if err != nil && err.Error() != "open "+p+": not a regular file (a FIFO)" {
			t.Errorf("message: %v", err)
		}
	}
}

// TestDupHere: a Dup outlives the Dir it came from; Here says whether the
// path a Dir was opened by still leads to its folder: not once the
// folder is exchanged with a symlink elsewhere or moved away, again once
// it is back. The Dir keeps naming the folder it opened throughout.
func TestDupHere(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	outside := t.TempDir()
	must(t, os.Mkdir(root, 0o755))
	must(t, os.WriteFile(filepath.Join(root, "a.md"), []byte("inside"), 0o644))
	must(t, os.WriteFile(filepath.Join(outside, "a.md"), []byte("outside"), 0o644))
	must(t, os.Symlink(outside, filepath.Join(dir, "link")))
	d, err := OpenDir(root)
	must(t, err)
	must(t, d.Here())

	exchange := func() {
		t.Helper()
		must(t, unix.Renameat2(unix.AT_FDCWD, root, unix.AT_FDCWD, filepath.Join(dir, "link"), unix.RENAME_EXCHANGE))
	}
	exchange()
	if err := d.Here(); !errors.Is(err, ErrMoved) {
		t.Errorf("Here with the folder exchanged for a symlink: %v, want ErrMoved", err)
	}
	dup, err := d.Dup()
	must(t, err)
	if b, err := dup.ReadFile("a.md", NoLinks); err != nil || string(b) != "inside" {
		t.Errorf("Dup reads %q, %v; want the folder opened", b, err)
	}
	exchange()
	must(t, d.Here())
	must(t, os.Rename(root, filepath.Join(dir, "moved")))
	if err := d.Here(); !errors.Is(err, ErrMoved) {
		t.Errorf("Here with the folder moved away: %v, want ErrMoved", err)
	}
	must(t, os.Mkdir(root, 0o755)) // another folder by that name
	if err := d.Here(); !errors.Is(err, ErrMoved) {
		t.Errorf("Here with another folder in its place: %v, want ErrMoved", err)
	}
	must(t, d.Close())
	if b, err := dup.ReadFile("a.md", NoLinks); err != nil || string(b) != "inside" {
		t.Errorf("Dup after the Dir it came from closed: %q, %v", b, err)
	}
	must(t, dup.Close())
}

// TestTryLock: a second TryLock of a held lock is ErrLocked, Held says
// so (and false for a file no one made), and once released both change.
func TestTryLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	if Held(p) {
		t.Error("Held of a missing lock file")
	}
	unlock, err := TryLock(p)
	must(t, err)
	if _, err := TryLock(p); !errors.Is(err, ErrLocked) {
		t.Errorf("TryLock while held: %v, want ErrLocked", err)
	}
	if !Held(p) {
		t.Error("Held while locked = false")
	}
	f, err := OpenFile(p, os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	if err := TryLockFile(f); !errors.Is(err, ErrLocked) {
		t.Errorf("TryLockFile while held: %v, want ErrLocked", err)
	}
	unlock()
	if Held(p) {
		t.Error("Held after unlock = true")
	}
	must(t, TryLockFile(f))
	UnlockFile(f)
}

// TestLockFileWaits: LockFile with a context that never ends waits in
// the kernel until the holder releases.
func TestLockFileWaits(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := TryLock(p)
	must(t, err)
	f, err := OpenFile(p, os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	errc := make(chan error, 1)
	go func() { errc <- LockFile(context.Background(), f) }()
	select {
	case err := <-errc:
		t.Fatalf("LockFile returned while the lock was held: %v", err)
	default:
	}
	unlock()
	must(t, <-errc)
	if !Held(p) {
		t.Error("Held after LockFile = false")
	}
}

// TestWriteFileAtomicAndRename: WriteFileAtomic replaces a file whole,
// leaving no temporary file, and refuses a missing folder; Rename moves
// a file between folders, replacing the target.
func TestWriteFileAtomicAndRename(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	must(t, os.WriteFile(p, []byte("old"), 0o644))
	must(t, WriteFileAtomic(p, []byte("new"), 0o600))
	if b, err := os.ReadFile(p); err != nil || string(b) != "new" {
		t.Errorf("after WriteFileAtomic: %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files left in the folder, want 1", len(entries))
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x"), nil, 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteFileAtomic into a missing folder: %v", err)
	}
	sub := filepath.Join(dir, "sub")
	must(t, os.Mkdir(sub, 0o755))
	must(t, os.WriteFile(filepath.Join(sub, "state.json"), []byte("replaced"), 0o644))
	must(t, Rename(p, filepath.Join(sub, "state.json")))
	if b, err := os.ReadFile(filepath.Join(sub, "state.json")); err != nil || string(b) != "new" {
		t.Errorf("after Rename: %q, %v", b, err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old name is still there: %v", err)
	}
	if err := Rename(p, filepath.Join(sub, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Rename of a missing file: %v", err)
	}
}

// TestTryLockWaitsOutHeld: Held's shared lock, taken for an instant by a
// process asking whether a server runs, does not make a server starting
// at that instant take itself for a second one (the simulator's year:
// "memhost serve already runs" with no server running, while its first
// status call raced the start).
func TestTryLockWaitsOutHeld(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	f, err := OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	must(t, err)
	must(t, flock(f, unix.LOCK_SH|unix.LOCK_NB)) // what Held takes
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(20 * time.Millisecond) // Held's instant, stretched for the test
		f.Close()
	}()
	defer func() { <-released }()
	unlock, err := TryLock(p)
	if err != nil {
		t.Fatalf("TryLock beside a passing shared lock: %v", err)
	}
	unlock()
}
