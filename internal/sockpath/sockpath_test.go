package sockpath

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOf(t *testing.T) {
	short := t.TempDir()
	if got := Of(short); got != filepath.Join(Canonical(short), "brain", "serve.sock") {
		t.Errorf("Of(%s) = %s", short, got)
	}
	long := filepath.Join(short, strings.Repeat("a", 120))
	got := Of(long)
	if filepath.Dir(got) != userDir() || len(got) > maxLen {
		t.Errorf("Of(a long home) = %s, want a short name in %s", got, userDir())
	}
	if Of(long) != got || Of(long+"b") == got {
		t.Error("socket names of long homes are not one per home")
	}
}

// TestPrepare: the user's socket folder is made 0700, and one that is not
// (made by someone else, or loosened) is refused.
func TestPrepare(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	sock := filepath.Join(userDir(), "x.sock")
	if err := Prepare(sock); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(userDir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder: %v %v", fi, err)
	}
	os.Chmod(userDir(), 0o777)
	if err := Prepare(sock); err == nil {
		t.Error("a folder of mode 0777 was accepted")
	}
	os.Remove(userDir())
	os.Symlink(t.TempDir(), userDir())
	if err := Prepare(sock); err == nil {
		t.Error("a symlink was accepted")
	}
	if err := Prepare(filepath.Join(t.TempDir(), "brain", "serve.sock")); err != nil {
		t.Errorf("a socket in the home: %v", err)
	}
}

// TestDial: a socket served by this user is accepted (another user's is
// refused by the same uid comparison, which needs a second user to test).
func TestDial(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "brain"), 0o755)
	if _, err := Dial(home, time.Second); err == nil {
		t.Fatal("Dial with no socket succeeded")
	}
	ln, err := net.Listen("unix", Of(home))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := Dial(home, time.Second)
	if err != nil {
		t.Fatalf("Dial to this user's socket: %v", err)
	}
	c.Close()
	if errors.Is(err, ErrForeignPeer) {
		t.Error("this user's socket was called foreign")
	}
}
