// Package sockpath names the unix socket of a home's server. It is its own
// package so that the thin `memhost` launcher finds the socket without
// linking the server.
package sockpath

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// maxLen is the longest unix socket path Linux accepts (108 bytes with the
// terminating NUL) with some room.
const maxLen = 100

// Of is the unix socket of home's server: brain/serve.sock, or, when that
// path is too long for a socket, a name derived from the home in a folder
// of this user's in the temporary folder (see Prepare), which the server
// and its clients compute the same way.
func Of(home string) string {
	home = Canonical(home)
	p := filepath.Join(home, "brain", "serve.sock")
	if len(p) <= maxLen {
		return p
	}
	sum := sha256.Sum256([]byte(home))
	return filepath.Join(userDir(), hex.EncodeToString(sum[:8])+".sock")
}

// userDir is this user's folder for sockets whose home path is too long:
// the temporary folder is shared, so another user could otherwise put a
// socket of theirs where a client looks for the server.
func userDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("memhost-%d", os.Getuid()))
}

// Prepare makes the folder of a socket path ready for a server: for a
// socket in the user's temporary folder, that folder is created with mode
// 0700 and must belong to this user and be no symlink.
func Prepare(sock string) error {
	dir := filepath.Dir(sock)
	if dir != userDir() {
		return nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm() != 0o700 {
		return fmt.Errorf("%s is not a folder of this user's with mode 0700: refusing to put the server's socket there", dir)
	}
	return nil
}

// Dial connects to home's server socket, and only to a server run by this
// user: a socket whose peer is another user's (SO_PEERCRED) is refused.
func Dial(home string, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout("unix", Of(home), timeout)
	if err != nil {
		return nil, err
	}
	if err := CheckPeer(conn); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// ErrForeignPeer means the socket is served by another user's process.
var ErrForeignPeer = errors.New("the socket is served by another user's process")

// CheckPeer refuses a connection whose peer runs as another user.
func CheckPeer(conn net.Conn) error {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	if int(cred.Uid) != os.Getuid() {
		return ErrForeignPeer
	}
	return nil
}

// Canonical is home as an absolute path with symlinks resolved (when it
// exists), so that two spellings of one home find one server.
func Canonical(home string) string {
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	return home
}
