package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/mcp"
)

// MCPSessionTimeout closes an MCP session over HTTP that has made no
// request for this long (its client went without a DELETE).
const MCPSessionTimeout = time.Hour

// NewMCPHandler returns MCP over streamable HTTP for the server's Host
// (RunOptions.MCP mounts it at /mcp): the tools, resources and prompts of
// package mcp, with resource notifications from the server's events (the
// MCP tools' writes are the Host's, published as any write is). Streams end
// when the server closes.
func NewMCPHandler(h *host.Host, s *Server, opts mcp.Options) http.Handler {
	if opts.FlushPrompt == nil {
		opts.FlushPrompt = func() string { return h.Config().Memory.Compaction.FlushPrompt }
	}
	opts.Changes = func(ctx context.Context, fn func(mcp.Change)) error {
		return s.Follow(ctx, func(ev Event) { PageChanges(ev, fn) })
	}
	if opts.Log == nil {
		opts.Log = s.log
	}
	srv := mcp.New(h, opts)
	srv.AddReceivingMiddleware(refuseWithoutConfig(h))
	handler := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv },
		&mcpsdk.StreamableHTTPOptions{Logger: s.log, SessionTimeout: MCPSessionTimeout})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuseLoneSurrogate(w, r) { // mcp_text.go
			return
		}
		tagCall(r) // mcp_text.go
		// A client's notification stream (GET) would otherwise hold the
		// server's shutdown for its whole timeout.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-s.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		handler.ServeHTTP(w, r.WithContext(ctx))
	})
}

// refuseWithoutConfig answers every tool call, resource read and prompt
// with the Host's ConfigError while config.yaml cannot be used, as the API
// answers every operation then (routes.go, needsConfig; the Host's chain,
// host.refusing, for the operations a tool runs), rather than act
// with settings the file no longer holds: a tool call with a tool error,
// which the model reads and can pass on; a resource read or a prompt with
// JSON-RPC's error. The handshake, the lists, ping and subscriptions still
// answer, so that a client connects and is told why at its first call.
// (The server rereads a changed config.yaml at each HTTP request: common.)
func refuseWithoutConfig(h *host.Host) mcpsdk.Middleware {
	return func(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
		return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
			switch method {
			case "tools/call", "resources/read", "prompts/get":
			default:
				return next(ctx, method, req)
			}
			err := h.ConfigError()
			switch {
			case err == nil:
				return next(ctx, method, req)
			case method == "tools/call":
				return &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: err.Error()}}}, nil
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
	}
}

// writeEvent is the data of a "write" event: the operation, its response,
// and the paths it changed (memhost.Change).
type writeEvent struct {
	Op      string   `json:"op"`
	Result  any      `json:"result"`
	Paths   []string `json:"paths,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// PageChanges calls fn with each notebook page an event says changed:
// the pages a "write" event changed or removed (a move's both names, a
// prune's archived logs), the pages a "sync" (the watcher's) or "git-sync"
// (a merge's) event indexed or dropped. Transcripts are not pages.
func PageChanges(ev Event, fn func(mcp.Change)) {
	switch ev.Type {
	case "write":
		var w writeEvent
		if json.Unmarshal(ev.Data, &w) != nil {
			return
		}
		for _, p := range w.Removed {
			if isPagePath(p) {
				fn(mcp.Change{Path: p, Removed: true})
			}
		}
		for _, p := range w.Paths {
			if isPagePath(p) {
				fn(mcp.Change{Path: p})
			}
		}
	case "sync", "git-sync":
		var r memhost.SyncResult
		if json.Unmarshal(ev.Data, &r) != nil {
			return
		}
		for _, p := range r.Paths {
			if isPagePath(p) {
				fn(mcp.Change{Path: p})
			}
		}
		for _, p := range r.RemovedPaths {
			if isPagePath(p) {
				fn(mcp.Change{Path: p, Removed: true})
			}
		}
	}
}

func isPagePath(p string) bool { return len(p) > 3 && p[len(p)-3:] == ".md" }
