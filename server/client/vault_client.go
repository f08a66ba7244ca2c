package client

import (
	"context"

	"github.com/memhost/memhost/api"

	"github.com/memhost/memhost"
)

// The vault's operations (host/vault.go, host/rollup.go).

func (c *Client) Links(ctx context.Context, req memhost.LinksRequest) (memhost.LinksResponse, error) {
	return callOp(ctx, c, api.OpLinks, req)
}
func (c *Client) Move(ctx context.Context, req memhost.MoveRequest) (memhost.MoveResponse, error) {
	return callOp(ctx, c, api.OpMove, req)
}
func (c *Client) Rollup(ctx context.Context, req memhost.RollupRequest) (memhost.RollupResponse, error) {
	return callOp(ctx, c, api.OpRollup, req)
}
func (c *Client) Prune(ctx context.Context, req memhost.PruneRequest) (memhost.PruneResponse, error) {
	return callOp(ctx, c, api.OpPrune, req)
}
