package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/server/wire"
)

// Federation (host/federation.go). The archive paths export and import
// take (host/archive.go) must be absolute: the server's working folder is
// not the caller's.

// FedSync returns, as the Host does, both the error of a sync that failed
// after it began and what the sync did before it (a merge that stands).
func (c *Client) FedSync(ctx context.Context, req memhost.FedSyncRequest) (memhost.FedSyncResponse, error) {
	var resp memhost.FedSyncResponse
	body, err := json.Marshal(req)
	if err != nil {
		return resp, err
	}
	r, err := c.do(ctx, http.MethodPost, "/api/v1/git/sync", body, "")
	if err != nil {
		return resp, err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return resp, &UnreachableError{fmt.Errorf("reading the answer: %w", err)}
	}
	if r.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, &resp); err != nil {
			return resp, &UnreachableError{fmt.Errorf("reading the answer: %w", err)}
		}
		return resp, nil
	}
	var fb wire.FedSyncBody
	if err := json.Unmarshal(b, &fb); err != nil || fb.Error.Kind == "" {
		return resp, &fault.Error{Kind: fault.Internal, Message: fmt.Sprintf("server answered %s: %s", r.Status, clipBody(b))}
	}
	if fb.Sync != nil {
		resp = *fb.Sync
	}
	return resp, fb.Error.Err()
}

func clipBody(b []byte) string {
	if len(b) > 1000 {
		return string(b[:1000]) + "…"
	}
	return string(b)
}
