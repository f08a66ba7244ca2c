// Package notecmd holds the CLI's commands over the notebook as a whole:
// the semantic tier (fact, facts, entities, relations, consolidate), the
// vault (links, mv, rollup, prune) and git federation (git init, sync
// --remote, export, import).
package notecmd

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
)

// cmds holds the actions of these commands, on the app they share.
type cmds struct{ *cmdapp.App }

// SyncRemote runs sync --remote: fetch, merge and push federation.remote,
// then index what the merge changed.
func SyncRemote(app *cmdapp.App, ctx context.Context, cmd *cli.Command) error {
	return cmds{app}.syncRemote(ctx, cmd)
}

// FactCommands, VaultCommands and FederationCommands are the commands of
// the semantic tier, the vault and git federation.
func FactCommands(app *cmdapp.App) []*cli.Command { return factCommands(cmds{app}) }

// VaultCommands: see FactCommands.
func VaultCommands(app *cmdapp.App) []*cli.Command { return vaultCommands(cmds{app}) }

// FederationCommands: see FactCommands.
func FederationCommands(app *cmdapp.App) []*cli.Command { return federationCommands(cmds{app}) }

// SecretsCommands: see FactCommands.
func SecretsCommands(app *cmdapp.App) []*cli.Command { return secretsCommands(cmds{app}) }
