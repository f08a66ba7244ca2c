package host

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
)

// tmpfsHome mounts a small tmpfs (needs root, as on the build machines)
// and returns a home folder on it, or skips the test saying why.
func tmpfsHome(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): disk-full and read-only homes untested", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return filepath.Join(dir, "home")
}

// snapshot reads every file of the notebook and sessions folders.
func snapshot(t *testing.T, home string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, dir := range []string{"notebook", "sessions"} {
		filepath.WalkDir(filepath.Join(home, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				out[p] = b
			}
			return nil
		})
	}
	return out
}

func sameFiles(t *testing.T, what string, before, after map[string][]byte) {
	t.Helper()
	for p, b := range after {
		if a, ok := before[p]; !ok {
			t.Errorf("%s: left a new file %s", what, p)
		} else if !bytes.Equal(a, b) {
			t.Errorf("%s: changed %s", what, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s: removed %s", what, p)
		}
	}
}

// TestDiskFullAndReadOnlyHome: on a full disk and on a read-only home,
// every write fails with an error that says so, and leaves no partial
// page, no partial turn and no temporary file behind.
func TestDiskFullAndReadOnlyHome(t *testing.T) {
	ctx := context.Background()
	home := tmpfsHome(t, "16m")
	h := openHost(t, home, nil)
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "the heron nests by the lake", Category: "reference", File: "birds"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s", Role: "user", Text: "first turn"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "saw a heron"}); err != nil {
		t.Fatal(err)
	}

	// Fill the disk.
	filler, err := os.Create(filepath.Join(home, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	block := bytes.Repeat([]byte{'x'}, 64<<10)
	for {
		if _, err := filler.Write(block); err != nil {
			break
		}
	}
	for { // and the last few bytes
		if _, err := filler.Write(block[:512]); err != nil {
			break
		}
	}
	filler.Close()

	big := strings.Repeat("a long note about herons and lakes ", 4000) // 140 KB
	writes := map[string]func() error{
		"remember": func() error {
			_, err := h.Remember(ctx, memhost.RememberRequest{Text: big, Category: "reference", File: "birds"})
			return err
		},
		"write": func() error {
			_, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/lakes.md", Text: big})
			return err
		},
		"daily-log": func() error { _, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: big}); return err },
		"session append": func() error {
			_, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s", Role: "user", Text: big})
			return err
		},
	}
	check := func(cond, want string) {
		for name, write := range writes {
			before := snapshot(t, home)
			err := write()
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s, %s: error %v, want one saying %q", cond, name, err, want)
			}
			if err != nil && strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("%s, %s: error of several lines: %q", cond, name, err)
			}
			sameFiles(t, cond+", "+name, before, snapshot(t, home))
		}
	}
	check("disk full", "no space left on device")

	// Room again: writes work and nothing half-written is in the way.
	os.Remove(filepath.Join(home, "filler"))
	for name, write := range writes {
		if err := write(); err != nil {
			t.Errorf("after freeing space, %s: %v", name, err)
		}
	}
	tr, err := h.sessions.Read("s")
	if err != nil || len(tr.Turns) != 2 {
		t.Fatalf("transcript after the full disk: %d turns, %v", len(tr.Turns), err)
	}

	// Read-only: the files cannot stay open for writing across the
	// remount, so each write opens the home as a new process would; the
	// open or the write fails, saying why.
	h.Close()
	if err := syscall.Mount("", filepath.Dir(home), "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only (%v)", err)
	}
	defer syscall.Mount("", filepath.Dir(home), "", syscall.MS_REMOUNT, "")
	opened := func(write func(*Host) error) error {
		h, err := Open(ctx, Options{Home: home, Config: config.Default()})
		if err != nil {
			return err
		}
		defer h.Close()
		return write(h)
	}
	writes = map[string]func() error{
		"remember": func() error {
			return opened(func(h *Host) error {
				_, err := h.Remember(ctx, memhost.RememberRequest{Text: "ro", Category: "reference", File: "birds"})
				return err
			})
		},
		"session append": func() error {
			return opened(func(h *Host) error {
				_, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s", Role: "user", Text: "ro"})
				return err
			})
		},
	}
	check("read-only", "read-only file system")
}
