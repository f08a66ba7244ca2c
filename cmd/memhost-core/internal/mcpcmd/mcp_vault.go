package mcpcmd

import (
	"context"

	"github.com/memhost/memhost/api"

	mh "github.com/memhost/memhost"
)

// The vault's MCP tools (mcp/vault.go: links, mv, rollup, prune), through
// the server while one runs, as mcpOps' other calls.

func (o *mcpOps) Links(ctx context.Context, r mh.LinksRequest) (mh.LinksResponse, error) {
	return either(o, ctx, api.OpLinks, r)
}

func (o *mcpOps) Move(ctx context.Context, r mh.MoveRequest) (mh.MoveResponse, error) {
	return either(o, ctx, api.OpMove, r)
}

func (o *mcpOps) Rollup(ctx context.Context, r mh.RollupRequest) (mh.RollupResponse, error) {
	return either(o, ctx, api.OpRollup, r)
}

func (o *mcpOps) Prune(ctx context.Context, r mh.PruneRequest) (mh.PruneResponse, error) {
	return either(o, ctx, api.OpPrune, r)
}

func (o *mcpOps) HealthHistory(ctx context.Context, r mh.HealthHistoryRequest) (mh.HealthHistoryResponse, error) {
	return either(o, ctx, api.OpHealthHistory, r)
}
