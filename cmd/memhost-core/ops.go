package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/server"
)

// ops is what the commands call: a *host.Host opened in this process, or a
// *server.Client forwarding to the home's running server. Both give the
// same responses and error kinds, so a command prints the same either way.
type ops interface {
	Init(context.Context, host.InitRequest) (host.InitResponse, error)
	Remember(context.Context, host.RememberRequest) (host.RememberResponse, error)
	DailyLog(context.Context, host.DailyLogRequest) (host.DailyLogResponse, error)
	Get(context.Context, host.GetRequest) (host.GetResponse, error)
	Write(context.Context, host.WriteRequest) (host.WriteResponse, error)
	Remove(context.Context, host.RemoveRequest) (host.RemoveResponse, error)
	Recall(context.Context, host.RecallRequest) (host.RecallResponse, error)
	Context(context.Context, host.ContextRequest) (host.ContextResponse, error)
	ConversationSearch(context.Context, host.ConversationSearchRequest) (host.ConversationSearchResponse, error)
	Status(context.Context, host.StatusRequest) (host.StatusResponse, error)
	Files(context.Context, host.FilesRequest) (host.FilesResponse, error)
	Sync(context.Context, host.SyncRequest) (host.SyncResult, error)
	Rebuild(context.Context, host.RebuildRequest) (host.SyncResult, error)
	Embed(context.Context, host.EmbedRequest) (host.EmbedResult, error)
	Sessions(context.Context, host.SessionsRequest) (host.SessionsResponse, error)
	SessionAppend(context.Context, host.SessionAppendRequest) (host.SessionAppendResponse, error)
	Ingest(context.Context, host.IngestRequest) (host.IngestResponse, error)
	SessionTokens(context.Context, host.SessionTokensRequest) (host.SessionTokens, error)
	SessionCheck(context.Context, host.SessionCheckRequest) (host.SessionCheck, error)
	SessionCompact(context.Context, host.SessionCompactRequest) (host.SessionCompactResponse, error)
	Hook(context.Context, host.HookRequest) (host.HookResponse, error)
	Plugins(context.Context, host.PluginsRequest) (host.PluginsResponse, error)
	UsePlugin(context.Context, host.UsePluginRequest) (host.UseResponse, error)
	PluginStatus(context.Context, host.PluginStatusRequest) (host.PluginStatusResponse, error)
	Models(context.Context, host.ModelsRequest) (host.ModelsResponse, error)
	PullModel(context.Context, host.PullModelRequest) (host.PullResponse, error)
	RemoveModel(context.Context, host.RemoveModelRequest) (host.RemoveModelResponse, error)
	Health(context.Context, host.HealthRequest) (host.HealthResponse, error)
	Links(context.Context, host.LinksRequest) (host.LinksResponse, error)
	Move(context.Context, host.MoveRequest) (host.MoveResponse, error)
	Rollup(context.Context, host.RollupRequest) (host.RollupResponse, error)
	Prune(context.Context, host.PruneRequest) (host.PruneResponse, error)
	FactAdd(context.Context, host.FactAddRequest) (host.FactAddResponse, error)
	FactForget(context.Context, host.FactForgetRequest) (host.FactForgetResponse, error)
	Facts(context.Context, host.FactsRequest) (host.FactsResponse, error)
	Entities(context.Context, host.EntitiesRequest) (host.EntitiesResponse, error)
	Relations(context.Context, host.RelationsRequest) (host.RelationsResponse, error)
	Consolidate(context.Context, host.ConsolidateRequest) (host.ConsolidateResponse, error)
	GitInit(context.Context, host.GitInitRequest) (host.GitInitResponse, error) // federation.go
	FedSync(context.Context, host.FedSyncRequest) (host.FedSyncResponse, error) // federation.go
	Export(context.Context, host.ExportRequest) (host.ExportResponse, error)    // federation.go
	Import(context.Context, host.ImportRequest) (host.ImportResponse, error)    // federation.go
}

var (
	_ ops = (*host.Host)(nil)
	_ ops = (*server.Client)(nil)
)

// with runs fn on the home's server when one runs (unless --no-server),
// else on the home opened in this process. A server that stops answering
// mid-request (killed) is reported on stderr and fn runs again in-process:
// the notebook and transcripts are the same files either way.
//
// A server whose environment overrides config.yaml differently from this
// process's (MEMHOST_MEMORY_SEARCH_MAXRESULTS=3 memhost recall ...) would
// answer differently: the command then runs in-process, as it does with
// --no-server.
func (a *app) with(ctx context.Context, cmd *cli.Command, fn func(ops) error) error {
	if a.io.shared != nil { // relayed into the server
		if _, err := a.config(cmd); err != nil {
			return err
		}
		return fn(a.io.shared)
	}
	if c, err := a.dial(cmd); err == nil {
		err = fn(c)
		c.Close()
		var gone *server.UnreachableError
		switch {
		case errors.As(err, &gone):
			fmt.Fprintf(a.io.stderr, "memhost: warning: %v; running in this process instead\n", err)
		case envDiffers(err):
		default:
			return err
		}
	} else if !errors.Is(err, server.ErrNoServer) {
		return err
	}
	return a.withHost(ctx, cmd, func(h *host.Host) error { return fn(h) })
}

// dial connects to the home's server: server.ErrNoServer when none runs or
// --no-server is given. config.yaml is read first, as an in-process run
// would: a broken file is reported the same way with or without a server
// (the server keeps its last good settings).
func (a *app) dial(cmd *cli.Command) (*server.Client, error) {
	if cmd.Bool("no-server") || a.io.getenv("MEMHOST_NO_SERVER") != "" || a.notUTF8 {
		return nil, server.ErrNoServer
	}
	home, err := a.home(cmd)
	if err != nil {
		return nil, err
	}
	c, err := server.Dial(home, server.EnvOverrides(a.io.getenv))
	if err != nil {
		return nil, err
	}
	if _, err := a.config(cmd); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// config reads the home's config.yaml as an in-process run would.
func (a *app) config(cmd *cli.Command) (config.Config, error) {
	home, err := a.home(cmd)
	if err != nil {
		return config.Config{}, err
	}
	return config.Load(filepath.Join(home, config.FileName), a.io.getenv)
}

// envDiffers reports the server's refusal of a client whose environment
// overrides the configuration differently.
func envDiffers(err error) bool {
	return fault.KindOf(err) == fault.Conflict && fault.FieldOf(err) == "env"
}
