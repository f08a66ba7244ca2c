package registry

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// A plugin listens on a unix socket that go-plugin makes in the system's
// temporary folder (/tmp/pluginNNN) and removes when the plugin stops. A
// plugin killed with its host (kill -9, the OOM killer, a power cut)
// leaves its socket behind, one file per plugin per crash, forever. So
// plugins make their sockets in a folder of memhost's own, and the first
// plugin a process starts sweeps that folder of sockets nothing listens
// on any more.

// staleSocketAge is how old a socket must be before a sweep may remove
// it: a plugin binds its socket a moment before it listens on it, and a
// connection in between is refused as if it were dead.
const staleSocketAge = time.Minute

// socketDir is the folder plugins make their sockets in: dir, or the
// user's own (see Options.SocketDir), made when missing and made private
// when it is the user's but open to others. It is refused when it is not
// a folder of this user's (another user made it first, or a symlink was
// put there): plugins then make their sockets where go-plugin does by
// default.
func socketDir(dir string) (string, error) {
	if dir == "" {
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("memhost-%d", os.Getuid()))
		if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" && filepath.IsAbs(rt) {
			if fi, err := os.Stat(rt); err == nil && fi.IsDir() {
				dir = filepath.Join(rt, "memhost")
			}
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("%s is not a folder of this user's", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", err
		}
	}
	return dir, nil
}

var swept sync.Map // folders swept by this process

// sweepOnce removes, once per process and folder, the sockets in dir that
// are older than staleSocketAge and refuse connections: their plugins are
// gone. A live plugin's socket (of this memhost or another) answers and
// is kept.
func sweepOnce(dir string) {
	if _, done := swept.LoadOrStore(dir, true); done {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type()&os.ModeSocket == 0 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < staleSocketAge {
			continue
		}
		c, err := net.DialTimeout("unix", p, 100*time.Millisecond)
		if err == nil {
			c.Close()
			continue
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			os.Remove(p)
		}
	}
}
