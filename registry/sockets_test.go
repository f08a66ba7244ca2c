package registry

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestSocketDirMustBeTheUsers: the socket folder is made private (0700);
// one that is not a folder of this user's (a symlink put there) is not
// used, and plugins then make their sockets where go-plugin does by
// default.
func TestSocketDirMustBeTheUsers(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	own := filepath.Join(base, "own")
	if d, err := socketDir(own); err != nil || d != own {
		t.Fatalf("socketDir(%s) = %s, %v", own, d, err)
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	if _, err := socketDir(open); err != nil {
		t.Fatalf("the user's own open folder: %v", err)
	}
	for _, d := range []string{own, open} {
		var st syscall.Stat_t
		if err := syscall.Stat(d, &st); err != nil || st.Mode&0o777 != 0o700 || int(st.Uid) != os.Getuid() {
			t.Errorf("%s: mode %o, uid %d, %v; want 0700 and this user's", d, st.Mode&0o777, st.Uid, err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	if _, err := socketDir(link); err == nil {
		t.Error("a symlink was used as the socket folder")
	}
}

// TestRegistryEnvWins: the variables memhost gives a plugin (its home,
// its socket folder) win over the same names in memhost's environment.
func TestRegistryEnvWins(t *testing.T) {
	t.Setenv("MEMHOST_ENV_PROBE", "inherited")
	r := New(Options{Dirs: []string{pluginDir(t, "hello")}, Env: []string{"MEMHOST_ENV_PROBE=registry"}})
	defer r.Close()
	p, err := r.Provider(context.Background(), "hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, kv := range strings.Split(string(env), "\x00") {
		if strings.HasPrefix(kv, "MEMHOST_ENV_PROBE=") {
			got = append(got, kv)
		}
	}
	if len(got) != 1 || got[0] != "MEMHOST_ENV_PROBE=registry" {
		t.Errorf("the plugin's environment holds %v, want MEMHOST_ENV_PROBE=registry only", got)
	}
}
