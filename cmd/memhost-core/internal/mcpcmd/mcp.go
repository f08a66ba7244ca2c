package mcpcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/internal/version"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/mcp"
	"github.com/memhost/memhost/server"
	"github.com/memhost/memhost/server/client"
)

var _ api.API = (*mcpOps)(nil)

func mcpCommand(a cmds) *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve memhost's memory to an MCP client over stdio (claude mcp add memhost -- memhost mcp)",
		Description: "memhost mcp speaks the Model Context Protocol on stdin and stdout, for agent runtimes\n" +
			"(Claude Code, Claude Desktop, Cursor) that start it as a subprocess. Its tools search, read and\n" +
			"write the memory (tools/list gives them); every notebook page is a resource\n" +
			"(memhost://notebook/<path>); its prompts are session-start and pre-compaction-flush. It runs\n" +
			"the calls through the home's memhost serve when one runs, else in this process. Nothing but\n" +
			"the protocol goes to stdout; warnings go to stderr.\n\n" +
			"Examples:\n" +
			"  claude mcp add memhost -- memhost mcp\n" +
			"  memhost mcp --read-only            only the tools that read",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "read-only", Usage: "serve only the tools that read (their readOnlyHint is true)"},
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
	o.start(ctx)
	// The page notifications end with the session, before the Host closes.
	notify, stop := context.WithCancel(ctx)
	defer stop()
	opts := mcp.Options{ReadOnly: cmd.Bool("read-only"), Log: log, Context: notify, Changes: o.changes,
		FlushPrompt: func() string {
			cfg, err := a.Config(cmd)
			if err != nil {
				return config.DefaultFlushPrompt
			}
			return cfg.Memory.Compaction.FlushPrompt
		}}
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

	// pages relays the writes of h to the MCP server's page
	// notifications; h is subscribed to it from when it opens.
	pages mcp.Relay

	mu          sync.Mutex
	client      *client.Client // nil: none runs, or it went
	h           *host.Host     // opened at the first call without a server
	unsubscribe func()         // h's subscription of pages, when it has one
}

// autostartWait is how long an MCP session waits for the server it started
// (server.autostart) before it runs its calls in this process.
const autostartWait = 2 * time.Second

// start takes the relaying server's Host, or dials the home's server to
// run the calls through; without either, they run in this process.
func (o *mcpOps) start(ctx context.Context) {
	if o.a.IO.Shared != nil {
		o.h = o.a.IO.Shared
		if o.a.IO.Follow == nil { // else its server's events tell its writes
			o.unsubscribe = o.h.Subscribe(o.pages.Publish)
		}
		return
	}
	c, err := o.a.Dial(o.cmd)
	if errors.Is(err, client.ErrNoServer) && o.a.Autostart(o.cmd) {
		// A session outlives its first call: it waits for the server
		// started for it (a couple of seconds at most, before any call),
		// then runs every call through it.
		for deadline := time.Now().Add(autostartWait); err != nil && time.Now().Before(deadline) && ctx.Err() == nil; {
			time.Sleep(20 * time.Millisecond)
			c, err = o.a.Dial(o.cmd)
		}
	}
	if err != nil {
		if !errors.Is(err, client.ErrNoServer) {
			o.log.Warn("cannot use the home's server; running in this process", "err", err)
		}
		return
	}
	if _, err := c.Info(ctx); err != nil {
		c.Close()
		return
	}
	// A server another memhost started on demand (before an upgrade) is
	// stopped, and this session starts this memhost's.
	otherVersion := func(in server.Info) bool { return in.Version != version.String() }
	if stopped, _ := cmdapp.StopOnDemand(ctx, c, otherVersion); stopped {
		c.Close()
		o.start(ctx)
		return
	}
	o.client = c
}

func (o *mcpOps) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.unsubscribe != nil {
		o.unsubscribe()
	}
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
		// Subscribed before any call can write on it: every write is told.
		o.h, o.unsubscribe = h, h.Subscribe(o.pages.Publish)
	}
	return o.h, nil
}

// changes is the MCP server's Options.Changes: the events of the server
// the calls go through (its writes, any client's, edits on disk), or of
// the relaying server whose Host they run on, and the writes of the Host
// this process opens, the change bus's, once calls run here.
func (o *mcpOps) changes(ctx context.Context, fn func(mcp.Change)) error {
	follow := o.a.IO.Follow
	if c := o.through(); c != nil {
		follow = c.Events
	}
	done := make(chan struct{})
	if follow != nil {
		go func() {
			defer close(done)
			err := follow(ctx, func(ev server.Event) { server.PageChanges(ev, fn) })
			// A server that stopped is no failure: the calls go on here,
			// and so do their notifications.
			if err != nil && ctx.Err() == nil && !cmdapp.FallBack(err) {
				o.log.Warn("the server's page change notifications stopped", "err", err)
			}
		}()
	} else {
		close(done)
	}
	err := o.pages.Changes(ctx, fn)
	<-done
	return err
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
