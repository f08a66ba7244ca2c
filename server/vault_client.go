package server

import (
	"context"

	"github.com/memhost/memhost/host"
)

// The vault's operations (host/vault.go, host/rollup.go).

func (c *Client) Links(ctx context.Context, req host.LinksRequest) (host.LinksResponse, error) {
	return call[host.LinksResponse](ctx, c, "links", req)
}
func (c *Client) Move(ctx context.Context, req host.MoveRequest) (host.MoveResponse, error) {
	return call[host.MoveResponse](ctx, c, "mv", req)
}
func (c *Client) Rollup(ctx context.Context, req host.RollupRequest) (host.RollupResponse, error) {
	return call[host.RollupResponse](ctx, c, "rollup", req)
}
func (c *Client) Prune(ctx context.Context, req host.PruneRequest) (host.PruneResponse, error) {
	return call[host.PruneResponse](ctx, c, "prune", req)
}
