// Package mcp serves a memhost home over the Model Context Protocol: the
// operations an agent needs as tools, every notebook page as a resource
// (memhost://notebook/<path>, markdown), and two prompts
// (pre-compaction-flush, session-start). It is built on the official Go
// SDK; the transport (stdio for `memhost mcp`, streamable HTTP under
// `memhost serve`) is the caller's.
//
// Each tool runs an operation of the API's table (package api): its
// arguments are the operation's request, described by the request's
// jsonschema tags, less the fields a model does not give; it is read-only,
// and served by a read-only server, when the operation does not write.
// tools/list is the one list of the tools. The tools' descriptions and
// schemas are what every client pays for in each session, so they are
// short and list no output schema (TestToolsListBudget holds the size).
//
// Bad arguments are tool errors a model can act on (IsError results with a
// message naming the argument, and for a missing page the pages of its
// folder), never protocol errors. No tool takes a file system path: pages
// are paths inside the notebook, checked by the host as the CLI's are.
//
// Concurrency: the *mcpsdk.Server New returns may serve many sessions at
// once; its handlers call the api.API concurrently, which *host.Host and
// *client.Client allow.
package mcp

import (
	"context"
	"log/slog"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/internal/version"
)

// MaxContentBytes bounds the text one tool call writes (the text of
// remember, notebook_write and daily_log) and the text memory_get returns
// at once: 1 MB.
const MaxContentBytes = 1 << 20

// Change is a notebook page that changed: written, edited on disk, or
// (Removed) deleted. Path is relative to the notebook.
type Change struct {
	Path    string
	Removed bool
}

// Options configure New. The zero value serves every tool, and notifies
// no page changes.
type Options struct {
	// ReadOnly serves only the tools whose operation does not write
	// (api.OpInfo.Write).
	ReadOnly bool
	// FlushPrompt returns the text of the pre-compaction-flush prompt
	// (memory.compaction.flushPrompt); nil means config.DefaultFlushPrompt.
	FlushPrompt func() string
	// Changes, when set, is called once on a goroutine of its own with
	// Context, and calls fn for each page changed by anyone (the server's
	// events under memhost serve); it returns when Context ends or its
	// source closes. Resource subscribers are notified of each change, and
	// every client when pages come or go. Changes reports the writes of
	// this server's own tools as any other: they are the Host's writes,
	// published on its change bus (a Relay hands them on) and in the
	// server's events. Nil: no notifications.
	Changes func(ctx context.Context, fn func(Change)) error
	// Context bounds Changes; nil means context.Background().
	Context context.Context
	// Log receives the SDK's and the subscription's log; nil discards it.
	Log *slog.Logger
}

// New returns the MCP server of a: a *host.Host opened in this process, a
// *client.Client forwarding to the home's running server, or any api.API.
// Connect it to a transport with Run (stdio) or
// mcpsdk.NewStreamableHTTPHandler.
func New(a api.API, opts Options) *mcpsdk.Server {
	if opts.FlushPrompt == nil {
		opts.FlushPrompt = func() string { return config.DefaultFlushPrompt }
	}
	if opts.Context == nil {
		opts.Context = context.Background()
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	s := &srv{api: a, opts: opts, pages: map[string]bool{}, stored: map[string][]stored{}}
	s.sdk = mcpsdk.NewServer(&mcpsdk.Implementation{Name: "memhost", Title: "memhost memory", Version: version.String()},
		&mcpsdk.ServerOptions{
			Instructions: instructions,
			Logger:       opts.Log,
			// Tools, resources and prompts only: memhost logs to stderr,
			// not to the client.
			Capabilities:       &mcpsdk.ServerCapabilities{},
			SubscribeHandler:   s.subscribe,
			UnsubscribeHandler: func(context.Context, *mcpsdk.UnsubscribeRequest) error { return nil },
		})
	s.sdk.AddReceivingMiddleware(plainArgErrors)
	s.addTools()
	s.addResources()
	s.addPrompts()
	if opts.Changes != nil {
		go func() {
			if err := opts.Changes(opts.Context, s.changed); err != nil && opts.Context.Err() == nil {
				opts.Log.Warn("page change notifications stopped", "err", err)
			}
		}()
	}
	return s.sdk
}

// instructions tell the model how the tools fit together.
const instructions = `memhost is your persistent memory: a notebook of markdown pages (lists/, reference/, knowledge/, daily/YYYY-MM-DD.md) and past conversation transcripts.
Search before you answer from memory (memory_search), read a page or lines of it (memory_get), store durable facts, preferences, contacts and list items with remember, and note what happened today with daily_log. Use notebook_write to write a page or a section of one directly, links to see what a page links to and what links to it, and mv to rename a page (its links follow). The session-start prompt gives the reference pages and recent daily logs; pre-compaction-flush reminds you to store what matters before your context is compacted.`

// srv holds the state behind one *mcpsdk.Server.
type srv struct {
	api  api.API
	opts Options
	sdk  *mcpsdk.Server

	mu     sync.Mutex
	pages  map[string]bool     // pages registered as resources
	stored map[string][]stored // per session id: what its tool calls stored
}
