// Package sockpath names the unix socket of a home's server. It is its own
// package so that the thin `memhost` launcher finds the socket without
// linking the server.
package sockpath

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// maxLen is the longest unix socket path Linux accepts (108 bytes with the
// terminating NUL) with some room.
const maxLen = 100

// Of is the unix socket of home's server: brain/serve.sock, or, when that
// path is too long for a socket, a name in the temporary folder derived
// from the home (the server and its clients compute the same one).
func Of(home string) string {
	home = Canonical(home)
	p := filepath.Join(home, "brain", "serve.sock")
	if len(p) <= maxLen {
		return p
	}
	sum := sha256.Sum256([]byte(home))
	return filepath.Join(os.TempDir(), "memhost-"+hex.EncodeToString(sum[:8])+".sock")
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
