package client

import (
	"context"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
)

// The vault's operations (host/vault.go, host/rollup.go).

func (c *Client) Links(ctx context.Context, req memhost.LinksRequest) (memhost.LinksResponse, error) {
	return callOp(ctx, c, host.OpLinks, req)
}
func (c *Client) Move(ctx context.Context, req memhost.MoveRequest) (memhost.MoveResponse, error) {
	return callOp(ctx, c, host.OpMove, req)
}
func (c *Client) Rollup(ctx context.Context, req memhost.RollupRequest) (memhost.RollupResponse, error) {
	return callOp(ctx, c, host.OpRollup, req)
}
func (c *Client) Prune(ctx context.Context, req memhost.PruneRequest) (memhost.PruneResponse, error) {
	return callOp(ctx, c, host.OpPrune, req)
}
