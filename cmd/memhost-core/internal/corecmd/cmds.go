// Package corecmd holds the CLI's core commands: the notebook (init,
// remember, daily-log, get, write, rm), recall and context, the index
// (status, files, sync, rebuild, watch, embed), conversations, models,
// plugins and health, with the command tree that lists them.
package corecmd

import (
	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
)

// cmds holds the actions of these commands, on the app they share.
type cmds struct{ *cmdapp.App }

// HealthCommand is memhost health.
func HealthCommand(app *cmdapp.App) *cli.Command { return healthCommand(cmds{app}) }
