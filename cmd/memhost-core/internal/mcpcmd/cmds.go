// Package mcpcmd is memhost mcp: the MCP server on stdin and stdout,
// forwarding to the home's server when one runs, else on the home opened
// in this process.
package mcpcmd

import (
	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
)

// cmds holds the actions of these commands, on the app they share.
type cmds struct{ *cmdapp.App }

// Command is memhost mcp.
func Command(app *cmdapp.App) *cli.Command { return mcpCommand(cmds{app}) }
