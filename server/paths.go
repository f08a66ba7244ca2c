package server

import (
	"os"
	"path/filepath"
	"time"

	"github.com/memhost/memhost/server/state"
)

// Info describes a running server (state.Info).
type Info = state.Info

// SocketPath is the unix socket of home's server (see sockpath.Of).
func SocketPath(home string) string { return state.SocketPath(home) }

// LogPath is where a detached server writes its log.
func LogPath(home string) string { return state.LogPath(home) }

// ReadState reads brain/serve.json: what the last server of home said
// about itself (state.Read). It may be stale; ask the server itself
// (Client.Info) to know whether it runs.
func ReadState(home string) (Info, error) { return state.Read(home) }

// Holder says which server holds home's lock when its socket does not
// answer (state.Holder): ok is false when no server holds it.
func Holder(home string) (Info, bool) { return state.Holder(home) }

// ErrRunning is the cause of Run's conflict when another server holds the
// home.
var ErrRunning = state.ErrRunning

func canonical(home string) string { return state.Canonical(home) }

// autostartFailedFile records that a server started on demand could not
// start (its chosen address taken, its token unreadable, the home not
// openable): for AutostartBackoff after it, commands start none.
func autostartFailedFile(home string) string {
	return filepath.Join(home, "brain", "autostart-failed")
}

// AutostartBackoff is how long after an on-demand server failed to start
// commands run in-process without starting another: long enough that a
// home whose server cannot start does not fork one per command, short
// enough that a fixed cause (a freed port) is found within minutes.
const AutostartBackoff = 5 * time.Minute

// AutostartFailed records why an on-demand server did not start (err
// nil: it did; the record goes).
func AutostartFailed(home string, err error) {
	if err == nil {
		os.Remove(autostartFailedFile(home))
		return
	}
	os.WriteFile(autostartFailedFile(home), []byte(err.Error()+"\n"), 0o600)
}

// AutostartFailedLately reports whether an on-demand server failed to
// start within AutostartBackoff.
func AutostartFailedLately(home string) bool {
	fi, err := os.Stat(autostartFailedFile(home))
	return err == nil && time.Since(fi.ModTime()) < AutostartBackoff
}
