package mcpcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/mcp"
	"github.com/memhost/memhost/server"
	"github.com/memhost/memhost/server/client"
)

var (
	_ mcp.Ops = (*host.Host)(nil)
	_ mcp.Ops = (*client.Client)(nil)
	_ mcp.Ops = (*mcpOps)(nil)
)

func mcpCommand(a cmds) *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve memhost's memory to an MCP client over stdio (claude mcp add memhost -- memhost mcp)",
		Description: "memhost mcp speaks the Model Context Protocol on stdin and stdout, for agent runtimes\n" +
			"(Claude Code, Claude Desktop, Cursor) that start it as a subprocess. Its tools are memory_search,\n" +
			"memory_get, remember, notebook_write, daily_log, conversation_search, context, memory_status,\n" +
			"facts, fact_add, links, mv, rollup, prune and episodes;\n" +
			"every notebook page is a resource (memhost://notebook/<path>); its prompts are session-start and\n" +
			"pre-compaction-flush. It runs the calls through the home's memhost serve when one runs, else in\n" +
			"this process. Nothing but the protocol goes to stdout; warnings go to stderr.\n\n" +
			"Examples:\n" +
			"  claude mcp add memhost -- memhost mcp\n" +
			"  memhost mcp --read-only            only the tools that read",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "read-only", Usage: "serve only the tools that read (memory_search, memory_get, conversation_search, context, memory_status, facts, links)"},
		},
		Action: a.mcp,
	}
}

// mcp serves MCP on stdin and stdout until the client closes stdin or ctx
// ends.
func (a cmds) mcp(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	if _, err := a.Config(cmd); err != nil {
		return err // a broken config.yaml is said at once, not at the first call
	}
	log := cmdapp.NewWarnLines(a.IO.Stderr)
	o := &mcpOps{a: a, cmd: cmd, log: log}
	o.Func = o.either
	defer o.close()
	opts := mcp.Options{ReadOnly: cmd.Bool("read-only"), Log: log, Context: ctx,
		FlushPrompt: func() string {
			cfg, err := a.Config(cmd)
			if err != nil {
				return config.DefaultFlushPrompt
			}
			return cfg.Memory.Compaction.FlushPrompt
		}}
	if c := o.start(ctx); c != nil {
		// Page changes come from the server's events: writes of any client
		// and edits on disk.
		opts.Changes = func(ctx context.Context, fn func(mcp.Change)) error {
			return c.Events(ctx, func(ev server.Event) { server.PageChanges(ev, fn) })
		}
	}
	srv := mcp.New(o, opts)
	t := &stdioTransport{in: a.IO.Stdin, out: a.IO.Stdout} // mcp_stdio.go
	err := srv.Run(ctx, t)
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil // the client closed stdin, or Ctrl-C
	}
	return err
}

// mcpOps runs each call through the home's server while one answers, and
// in this process from the first call that finds it gone (stopped or
// killed) — as `with` does for one command, for a session that may
// outlive a server.
type mcpOps struct {
	api.Func // either
	a        cmds
	cmd      *cli.Command
	log      *slog.Logger

	mu     sync.Mutex
	client *client.Client // nil: none runs, or it went
	h      *host.Host     // opened at the first call without a server
}

// start dials the home's server (or takes the relaying server's Host) and
// returns its client, nil when the calls run in this process.
func (o *mcpOps) start(ctx context.Context) *client.Client {
	if o.a.IO.Shared != nil {
		o.h = o.a.IO.Shared
		return nil
	}
	c, err := o.a.Dial(o.cmd)
	if err != nil {
		if !errors.Is(err, client.ErrNoServer) {
			o.log.Warn("cannot use the home's server; running in this process", "err", err)
		}
		return nil
	}
	if _, err := c.Info(ctx); err != nil {
		c.Close()
		return nil
	}
	o.client = c
	return c
}

func (o *mcpOps) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.client != nil {
		o.client.Close()
	}
	if o.h != nil && o.h != o.a.IO.Shared {
		o.h.Close()
	}
}

// through returns the server's client, or nil once calls run in this
// process.
func (o *mcpOps) through() *client.Client {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.client
}

// gone drops the server after err, which says it stopped answering or
// reads its configuration otherwise.
func (o *mcpOps) gone(c *client.Client, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.client == c && c != nil {
		fmt.Fprintf(o.a.IO.Stderr, "memhost: warning: %v; running in this process from now on\n", err)
		c.Close()
		o.client = nil
	}
}

// local returns the Host of this process, opening it at the first call.
func (o *mcpOps) local(ctx context.Context) (*host.Host, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.h == nil {
		h, err := o.a.Open(ctx, o.cmd)
		if err != nil {
			return nil, err
		}
		o.h = h
	}
	return o.h, nil
}

// either runs op on the server's client while one runs, else (or from
// when it stops answering: fallBack) on the Host of this process.
func (o *mcpOps) either(ctx context.Context, op api.Operation, req any) (any, error) {
	if c := o.through(); c != nil {
		resp, err := op.Invoke(ctx, c, req)
		if !cmdapp.FallBack(err) {
			return resp, err
		}
		o.gone(c, err)
	}
	h, err := o.local(ctx)
	if err != nil {
		return nil, err
	}
	return op.Invoke(ctx, h, req)
}
