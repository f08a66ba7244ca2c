package server

import "github.com/memhost/memhost/server/state"

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
