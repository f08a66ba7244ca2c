package server

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// maxSocketPath is the longest unix socket path Linux accepts (108 bytes
// with the terminating NUL) with some room.
const maxSocketPath = 100

// SocketPath is the unix socket of home's server: brain/serve.sock, or,
// when that path is too long for a socket, a name in the temporary folder
// derived from the home (the server and the CLI compute the same one).
func SocketPath(home string) string {
	home = canonical(home)
	p := filepath.Join(home, "brain", "serve.sock")
	if len(p) <= maxSocketPath {
		return p
	}
	sum := sha256.Sum256([]byte(home))
	return filepath.Join(os.TempDir(), "memhost-"+hex.EncodeToString(sum[:8])+".sock")
}

// canonical is home as an absolute path with symlinks resolved (when it
// exists), so that two spellings of one home find one server.
func canonical(home string) string {
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	return home
}

func lockPath(home string) string  { return filepath.Join(home, "brain", "serve.lock") }
func statePath(home string) string { return filepath.Join(home, "brain", "serve.json") }
func tokenPath(home string) string { return filepath.Join(home, "brain", "serve.token") }

// LogPath is where a detached server writes its log.
func LogPath(home string) string { return filepath.Join(canonical(home), "brain", "serve.log") }
