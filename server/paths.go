package server

import (
	"path/filepath"

	"github.com/memhost/memhost/internal/sockpath"
)

// SocketPath is the unix socket of home's server (see sockpath.Of).
func SocketPath(home string) string { return sockpath.Of(home) }

func canonical(home string) string { return sockpath.Canonical(home) }

func lockPath(home string) string  { return filepath.Join(home, "brain", "serve.lock") }
func statePath(home string) string { return filepath.Join(home, "brain", "serve.json") }
func tokenPath(home string) string { return filepath.Join(home, "brain", "serve.token") }

// LogPath is where a detached server writes its log.
func LogPath(home string) string { return filepath.Join(canonical(home), "brain", "serve.log") }
