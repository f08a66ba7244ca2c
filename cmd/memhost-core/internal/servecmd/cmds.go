// Package servecmd is memhost serve (run, status, stop, detach) and the
// relay of command lines the launcher sends to a running server.
package servecmd

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
)

// cmds holds the actions of these commands, on the app they share.
type cmds struct {
	*cmdapp.App
	// run runs a command line as the CLI does (a command the launcher
	// relays to the server runs in it).
	run func(ctx context.Context, args []string, io cmdapp.Stdio) int
}

// Command is memhost serve; run runs a command line the launcher relays.
func Command(app *cmdapp.App, run func(ctx context.Context, args []string, io cmdapp.Stdio) int) *cli.Command {
	return serveCommand(cmds{app, run})
}
