package registry

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// sockets lists the sockets in dir.
func sockets(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			out = append(out, e.Name())
		}
	}
	return out
}

// deadSocket leaves a socket file nothing listens on, as a plugin killed
// with its host does, made at the time given.
func deadSocket(t *testing.T, p string, at time.Time) {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

// TestPluginSocketsSwept: plugins make their sockets in the registry's
// socket folder, a stopped plugin's goes with it, and the first start
// removes the sockets of plugins killed with their host (kill -9 left
// 715 of them in this machine's /tmp), but not one a live process
// listens on, nor one made a moment ago.
func TestPluginSocketsSwept(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	old := time.Now().Add(-2 * staleSocketAge)
	deadSocket(t, filepath.Join(dir, "plugin-dead"), old)
	deadSocket(t, filepath.Join(dir, "plugin-binding"), time.Now())
	live, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "plugin-live"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := os.Chtimes(filepath.Join(dir, "plugin-live"), old, old); err != nil {
		t.Fatal(err)
	}

	r := New(Options{Dirs: []string{pluginDir(t, "hello")}, SocketDir: dir})
	defer r.Close()
	if _, err := r.Provider(context.Background(), "hello", nil); err != nil {
		t.Fatal(err)
	}
	got := sockets(t, dir)
	if len(got) != 3 || !slices.Contains(got, "plugin-live") || !slices.Contains(got, "plugin-binding") || slices.Contains(got, "plugin-dead") {
		t.Fatalf("sockets with the plugin running: %v, want plugin-live, plugin-binding and the plugin's own", got)
	}
	r.Close()
	deadline := time.Now().Add(10 * time.Second)
	for len(sockets(t, dir)) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("sockets after Close: %v, want the plugin's gone", sockets(t, dir))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSocketDirMustBeTheUsers: a socket folder others may enter (or a
// symlink to one) is not used; plugins then make their sockets where
// go-plugin does by default.
func TestSocketDirMustBeTheUsers(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	if _, ok := socketDir(open); ok {
		t.Error("a folder anyone may write to was used")
	}
	own := filepath.Join(base, "own")
	if d, ok := socketDir(own); !ok || d != own {
		t.Fatalf("socketDir(%s) = %s, %v", own, d, ok)
	}
	if fi, err := os.Stat(own); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("made %v, %v; want mode 0700", fi.Mode(), err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	if _, ok := socketDir(link); ok {
		t.Error("a symlink was used as the socket folder")
	}
	var st syscall.Stat_t
	if syscall.Stat(own, &st) != nil || int(st.Uid) != os.Getuid() {
		t.Errorf("socket folder not the user's: %+v", st)
	}
}
