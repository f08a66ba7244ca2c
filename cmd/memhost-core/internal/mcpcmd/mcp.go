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
	"github.com/memhost/memhost/knowledge"

	"github.com/urfave/cli/v3"

	mh "github.com/memhost/memhost"
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
	a   cmds
	cmd *cli.Command
	log *slog.Logger

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
func either[Req, Resp any](o *mcpOps, ctx context.Context, op api.Op[Req, Resp], req Req) (Resp, error) {
	if c := o.through(); c != nil {
		resp, err := op.Run(c, ctx, req)
		if !cmdapp.FallBack(err) {
			return resp, err
		}
		o.gone(c, err)
	}
	h, err := o.local(ctx)
	if err != nil {
		var zero Resp
		return zero, err
	}
	return op.Run(h, ctx, req)
}

func (o *mcpOps) Recall(ctx context.Context, r mh.RecallRequest) (mh.RecallResponse, error) {
	return either(o, ctx, api.OpRecall, r)
}

func (o *mcpOps) Get(ctx context.Context, r mh.GetRequest) (mh.GetResponse, error) {
	return either(o, ctx, api.OpGet, r)
}

func (o *mcpOps) Remember(ctx context.Context, r mh.RememberRequest) (mh.RememberResponse, error) {
	return either(o, ctx, api.OpRemember, r)
}

func (o *mcpOps) Write(ctx context.Context, r mh.WriteRequest) (mh.WriteResponse, error) {
	return either(o, ctx, api.OpWrite, r)
}

func (o *mcpOps) DailyLog(ctx context.Context, r mh.DailyLogRequest) (mh.DailyLogResponse, error) {
	return either(o, ctx, api.OpDailyLog, r)
}

func (o *mcpOps) Episodes(ctx context.Context, r mh.EpisodesRequest) (mh.EpisodesResponse, error) {
	return either(o, ctx, api.OpEpisodes, r)
}

func (o *mcpOps) ConversationSearch(ctx context.Context, r mh.ConversationSearchRequest) (mh.ConversationSearchResponse, error) {
	return either(o, ctx, api.OpConversationSearch, r)
}

func (o *mcpOps) Context(ctx context.Context, r mh.ContextRequest) (mh.ContextResponse, error) {
	return either(o, ctx, api.OpContext, r)
}

func (o *mcpOps) Status(ctx context.Context, r mh.StatusRequest) (mh.StatusResponse, error) {
	return either(o, ctx, api.OpStatus, r)
}

func (o *mcpOps) Files(ctx context.Context, r mh.FilesRequest) (mh.FilesResponse, error) {
	return either(o, ctx, api.OpFiles, r)
}

func (o *mcpOps) Facts(ctx context.Context, r knowledge.FactsRequest) (knowledge.FactsResponse, error) {
	return either(o, ctx, api.OpFacts, r)
}

func (o *mcpOps) FactAdd(ctx context.Context, r knowledge.FactAddRequest) (knowledge.FactAddResponse, error) {
	return either(o, ctx, api.OpFactAdd, r)
}

func (o *mcpOps) Skills(ctx context.Context, r mh.SkillsRequest) (mh.SkillsResponse, error) {
	return either(o, ctx, api.OpSkills, r)
}

func (o *mcpOps) SkillLearn(ctx context.Context, r mh.SkillLearnRequest) (mh.SkillsResponse, error) {
	return either(o, ctx, api.OpSkillLearn, r)
}

func (o *mcpOps) SkillReview(ctx context.Context, r mh.SkillReviewRequest) (mh.SkillReviewResponse, error) {
	return either(o, ctx, api.OpSkillReview, r)
}
