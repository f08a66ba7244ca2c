// Package api is the operation table: every operation of memhost's API,
// its HTTP path, its request and response types, whether it writes, and
// the method of API that runs it.
package api

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/knowledge"
)

//go:generate go run ./internal/gen

// The operation table: every operation of the API in one place, one line
// each (the var block below). From it, go generate writes api_gen.go — the
// API interface, Ops, and Func's methods, through which the server's
// client, the MCP server's forwarding and every middleware run — and the
// apitest fake (TestGeneratedFilesAreFresh fails while they are stale).
// The HTTP routes (server/routes.go) and docs/api.md's operation index
// (TestAPIIndex; TestAPIDocRoutes holds each operation to its section)
// come from Ops.
//
// Each line names the operation, says whether it writes, the API method
// that runs it and, for a write, the function below the table that says what
// it changed (nil for a read; the generator refuses a write without one):
// the host runs every operation through one middleware chain, which
// publishes each write's Change (host.Host.Subscribe).
//
// Adding an operation touches five files: its request and response types
// and the method that runs it (host/<feature>.go, or the service's); its
// line here (and, for a write, its change function below); its CLI
// command, if it has one; its section in docs/api.md (a forgotten one
// fails TestAPIDocRoutes). Then go generate ./api.

// OpInfo describes one operation.
type OpInfo struct {
	// Name is the operation's HTTP path after /api/v1/ ("fact/add").
	Name string
	// Write: the operation changes a source of truth (the notebook, the
	// transcripts, the settings, the models, the git history), not only
	// the derived index.
	Write bool
	// SocketOnly: the request names files or hosts of the server's
	// machine, so only the unix socket (the same user) may call it, never
	// TCP.
	SocketOnly bool
}

// Path is the operation's HTTP path: POST, JSON request, JSON response.
func (o OpInfo) Path() string { return "/api/v1/" + o.Name }

// An Op is an operation with its request and response types, the API
// method that runs it and, for a write, what it changed (the functions
// below the table).
type Op[Req, Resp any] struct {
	OpInfo
	Run func(API, context.Context, Req) (Resp, error)
	// Change says what a write changed, from its request and response:
	// the paths, files and note of the Change the host publishes once the
	// write returns (Op and Result are the host's to fill). Every write
	// has one (the generator refuses a table where one has not); a read
	// has none.
	Change func(Req, Resp) memhost.Change
}

// Operation is an Op of any types, as the table holds them.
type Operation interface {
	Info() OpInfo
	// Call decodes the request with decode and runs the operation on a.
	Call(ctx context.Context, a API, decode func(req any) error) (any, error)
	// Invoke runs the operation on a with req, a value of its request
	// type (an error of kind Internal for another type). It returns the
	// response even with an error: an operation may answer with both
	// (git/sync's merge that stands when its push failed).
	Invoke(ctx context.Context, a API, req any) (any, error)
	// NewResponse returns a pointer to a new value of the operation's
	// response type, for a forwarder to decode an answer into.
	NewResponse() any
	// Changed is what the write changed, from its request and its
	// response (a value or a pointer to one); false for a read or for
	// values of other types.
	Changed(req, resp any) (memhost.Change, bool)
}

// Info describes the operation.
func (o Op[Req, Resp]) Info() OpInfo { return o.OpInfo }

// Call decodes the request and runs the operation on a.
func (o Op[Req, Resp]) Call(ctx context.Context, a API, decode func(any) error) (any, error) {
	var req Req
	if err := decode(&req); err != nil {
		return nil, err
	}
	return o.Run(a, ctx, req)
}

// Invoke runs the operation on a with req.
func (o Op[Req, Resp]) Invoke(ctx context.Context, a API, req any) (any, error) {
	r, ok := req.(Req)
	if !ok {
		return nil, fault.Errorf(fault.Internal, "", "%s takes a %T, not a %T", o.Name, r, req)
	}
	return o.Run(a, ctx, r)
}

// NewResponse returns a new *Resp.
func (o Op[Req, Resp]) NewResponse() any { return new(Resp) }

// Changed runs o.Change.
func (o Op[Req, Resp]) Changed(req, resp any) (memhost.Change, bool) {
	if o.Change == nil {
		return memhost.Change{}, false
	}
	q, ok := req.(Req)
	if !ok {
		return memhost.Change{}, false
	}
	switch r := resp.(type) {
	case Resp:
		return o.Change(q, r), true
	case *Resp:
		if r != nil {
			return o.Change(q, *r), true
		}
	}
	return memhost.Change{}, false
}

// Func is an API that runs every operation by calling itself with the
// operation and its request: a forwarder (the server's client posts it,
// MCP's stdio server picks the server or this process per call) or a
// middleware chain (Wrap). Its methods are generated from the table.
type Func func(ctx context.Context, op Operation, req any) (any, error)

// invoke is each of Func's methods: f with op and req, the answer
// converted back to op's response type.
func invoke[Req, Resp any](ctx context.Context, f Func, op Op[Req, Resp], req Req) (Resp, error) {
	out, err := f(ctx, op, req)
	resp, ok := out.(Resp)
	if !ok && out != nil {
		if p, isPtr := out.(*Resp); isPtr && p != nil {
			return *p, err
		}
		if err == nil {
			err = fault.Errorf(fault.Internal, "", "%s answered a %T, not a %T", op.Name, out, resp)
		}
	}
	return resp, err
}

// A Middleware runs around every operation: it may look at the operation
// and its request, and calls next to run it (or answers without).
type Middleware func(ctx context.Context, op Operation, req any, next func(context.Context) (any, error)) (any, error)

// Wrap returns a that runs every operation through mws, the first
// outermost.
func Wrap(a API, mws ...Middleware) API {
	return Func(func(ctx context.Context, op Operation, req any) (any, error) {
		return chain(ctx, a, op, req, mws)
	})
}

func chain(ctx context.Context, a API, op Operation, req any, mws []Middleware) (any, error) {
	if len(mws) == 0 {
		return op.Invoke(ctx, a, req)
	}
	return mws[0](ctx, op, req, func(ctx context.Context) (any, error) {
		return chain(ctx, a, op, req, mws[1:])
	})
}

// The operations.
var (
	OpInit               = Op[memhost.InitRequest, memhost.InitResponse]{OpInfo{Name: "init", Write: true}, API.Init, initChanged}
	OpRemember           = Op[memhost.RememberRequest, memhost.RememberResponse]{OpInfo{Name: "remember", Write: true}, API.Remember, rememberChanged}
	OpDailyLog           = Op[memhost.DailyLogRequest, memhost.DailyLogResponse]{OpInfo{Name: "daily-log", Write: true}, API.DailyLog, dailyLogChanged}
	OpGet                = Op[memhost.GetRequest, memhost.GetResponse]{OpInfo{Name: "get"}, API.Get, nil}
	OpWrite              = Op[memhost.WriteRequest, memhost.WriteResponse]{OpInfo{Name: "write", Write: true}, API.Write, writeChanged}
	OpRemove             = Op[memhost.RemoveRequest, memhost.RemoveResponse]{OpInfo{Name: "rm", Write: true}, API.Remove, removeChanged}
	OpPage               = Op[memhost.PageRequest, memhost.PageResponse]{OpInfo{Name: "page"}, API.Page, nil}
	OpSavePage           = Op[memhost.SavePageRequest, memhost.SavePageResponse]{OpInfo{Name: "page/save", Write: true}, API.SavePage, savePageChanged}
	OpPages              = Op[memhost.PagesRequest, memhost.PagesResponse]{OpInfo{Name: "pages"}, API.Pages, nil}
	OpRecall             = Op[memhost.RecallRequest, memhost.RecallResponse]{OpInfo{Name: "recall"}, API.Recall, nil}
	OpContext            = Op[memhost.ContextRequest, memhost.ContextResponse]{OpInfo{Name: "context"}, API.Context, nil}
	OpConversationSearch = Op[memhost.ConversationSearchRequest, memhost.ConversationSearchResponse]{OpInfo{Name: "conversation-search"}, API.ConversationSearch, nil}
	OpStatus             = Op[memhost.StatusRequest, memhost.StatusResponse]{OpInfo{Name: "status"}, API.Status, nil}
	OpFiles              = Op[memhost.FilesRequest, memhost.FilesResponse]{OpInfo{Name: "files"}, API.Files, nil}
	OpStorage            = Op[memhost.StorageRequest, memhost.StorageResponse]{OpInfo{Name: "storage"}, API.Storage, nil}
	OpSync               = Op[memhost.SyncRequest, memhost.SyncResult]{OpInfo{Name: "sync"}, API.Sync, nil}
	OpRebuild            = Op[memhost.RebuildRequest, memhost.SyncResult]{OpInfo{Name: "rebuild"}, API.Rebuild, nil}
	OpEmbed              = Op[memhost.EmbedRequest, memhost.EmbedResult]{OpInfo{Name: "embed"}, API.Embed, nil}
	OpSessions           = Op[memhost.SessionsRequest, memhost.SessionsResponse]{OpInfo{Name: "sessions"}, API.Sessions, nil}
	OpTranscript         = Op[memhost.TranscriptRequest, memhost.TranscriptResponse]{OpInfo{Name: "transcript"}, API.Transcript, nil}
	OpSessionAppend      = Op[memhost.SessionAppendRequest, memhost.SessionAppendResponse]{OpInfo{Name: "session/append", Write: true}, API.SessionAppend, sessionAppendChanged}
	OpIngest             = Op[memhost.IngestRequest, memhost.IngestResponse]{OpInfo{Name: "session/ingest", Write: true, SocketOnly: true}, API.Ingest, ingestChanged}
	OpSessionTokens      = Op[memhost.SessionTokensRequest, memhost.SessionTokens]{OpInfo{Name: "session/tokens"}, API.SessionTokens, nil}
	OpSessionCheck       = Op[memhost.SessionCheckRequest, memhost.SessionCheck]{OpInfo{Name: "session/check"}, API.SessionCheck, nil}
	OpSessionCompact     = Op[memhost.SessionCompactRequest, memhost.SessionCompactResponse]{OpInfo{Name: "session/compact", Write: true}, API.SessionCompact, sessionCompactChanged}
	OpHook               = Op[memhost.HookRequest, memhost.HookResponse]{OpInfo{Name: "hook", Write: true, SocketOnly: true}, API.Hook, hookChanged}
	OpEpisodes           = Op[memhost.EpisodesRequest, memhost.EpisodesResponse]{OpInfo{Name: "episodes", Write: true}, API.Episodes, episodesChanged}
	OpPlugins            = Op[memhost.PluginsRequest, memhost.PluginsResponse]{OpInfo{Name: "plugins"}, API.Plugins, nil}
	OpUsePlugin          = Op[memhost.UsePluginRequest, memhost.UseResponse]{OpInfo{Name: "plugins/use", Write: true, SocketOnly: true}, API.UsePlugin, usePluginChanged}
	OpPluginStatus       = Op[memhost.PluginStatusRequest, memhost.PluginStatusResponse]{OpInfo{Name: "plugins/status"}, API.PluginStatus, nil}
	OpModels             = Op[memhost.ModelsRequest, memhost.ModelsResponse]{OpInfo{Name: "models"}, API.Models, nil}
	OpPullModel          = Op[memhost.PullModelRequest, memhost.PullResponse]{OpInfo{Name: "models/pull", Write: true}, API.PullModel, pullModelChanged}
	OpRemoveModel        = Op[memhost.RemoveModelRequest, memhost.RemoveModelResponse]{OpInfo{Name: "models/rm", Write: true}, API.RemoveModel, removeModelChanged}
	OpHealth             = Op[memhost.HealthRequest, memhost.HealthResponse]{OpInfo{Name: "health"}, API.Health, nil}
	OpHealthHistory      = Op[memhost.HealthHistoryRequest, memhost.HealthHistoryResponse]{OpInfo{Name: "health/history"}, API.HealthHistory, nil}
	OpLinks              = Op[memhost.LinksRequest, memhost.LinksResponse]{OpInfo{Name: "links"}, API.Links, nil}
	OpMove               = Op[memhost.MoveRequest, memhost.MoveResponse]{OpInfo{Name: "mv", Write: true}, API.Move, moveChanged}
	OpRollup             = Op[memhost.RollupRequest, memhost.RollupResponse]{OpInfo{Name: "rollup", Write: true}, API.Rollup, rollupChanged}
	OpPrune              = Op[memhost.PruneRequest, memhost.PruneResponse]{OpInfo{Name: "prune", Write: true}, API.Prune, pruneChanged}
	OpFactAdd            = Op[knowledge.FactAddRequest, knowledge.FactAddResponse]{OpInfo{Name: "fact/add", Write: true}, API.FactAdd, factAddChanged}
	OpFactForget         = Op[knowledge.FactForgetRequest, knowledge.FactForgetResponse]{OpInfo{Name: "fact/forget", Write: true}, API.FactForget, factForgetChanged}
	OpFacts              = Op[knowledge.FactsRequest, knowledge.FactsResponse]{OpInfo{Name: "facts"}, API.Facts, nil}
	OpEntities           = Op[knowledge.EntitiesRequest, knowledge.EntitiesResponse]{OpInfo{Name: "entities"}, API.Entities, nil}
	OpRelations          = Op[knowledge.RelationsRequest, knowledge.RelationsResponse]{OpInfo{Name: "relations"}, API.Relations, nil}
	OpConsolidate        = Op[knowledge.ConsolidateRequest, knowledge.ConsolidateResponse]{OpInfo{Name: "consolidate", Write: true}, API.Consolidate, consolidateChanged}
	OpSkills             = Op[memhost.SkillsRequest, memhost.SkillsResponse]{OpInfo{Name: "skills"}, API.Skills, nil}
	OpSkillLearn         = Op[memhost.SkillLearnRequest, memhost.SkillsResponse]{OpInfo{Name: "skills/learn", Write: true}, API.SkillLearn, skillLearnChanged}
	OpSkillReview        = Op[memhost.SkillReviewRequest, memhost.SkillReviewResponse]{OpInfo{Name: "skills/review", Write: true}, API.SkillReview, skillReviewChanged}
	OpGitInit            = Op[memhost.GitInitRequest, memhost.GitInitResponse]{OpInfo{Name: "git/init", Write: true, SocketOnly: true}, API.GitInit, gitInitChanged}
	OpFedSync            = Op[memhost.FedSyncRequest, memhost.FedSyncResponse]{OpInfo{Name: "git/sync", Write: true}, API.FedSync, fedSyncChanged}
	OpExport             = Op[memhost.ExportRequest, memhost.ExportResponse]{OpInfo{Name: "export", SocketOnly: true}, API.Export, nil}
	OpImport             = Op[memhost.ImportRequest, memhost.ImportResponse]{OpInfo{Name: "import", Write: true, SocketOnly: true}, API.Import, importChanged}
	OpSecretsScan        = Op[memhost.SecretsScanRequest, memhost.SecretsScanResponse]{OpInfo{Name: "secrets/scan"}, API.SecretsScan, nil}
	OpSecretsRedact      = Op[memhost.SecretsRedactRequest, memhost.SecretsRedactResponse]{OpInfo{Name: "secrets/redact", Write: true}, API.SecretsRedact, secretsRedactChanged}
)

// What each write changed: the table's third field, one function per
// write. The host publishes the Change once the write returns (see
// host.Host.Subscribe): federation commits its Paths, Removed and Files
// with Note as the message; the server's event stream and MCP's resource
// subscribers hear of it. A Change naming nothing (no path, no file, no
// note) is not published: the write changed nothing.

func initChanged(memhost.InitRequest, memhost.InitResponse) memhost.Change {
	return memhost.Change{Note: "init"} // config.yaml, which is not shared
}

func rememberChanged(_ memhost.RememberRequest, r memhost.RememberResponse) memhost.Change {
	c := memhost.Change{Note: "remember: " + section(r.Path, r.Section)}
	if !r.Duplicate {
		c.Paths = memhost.Paths(r.Path)
	}
	return c
}

func dailyLogChanged(_ memhost.DailyLogRequest, r memhost.DailyLogResponse) memhost.Change {
	return memhost.Change{Paths: memhost.Paths(r.Path), Note: "daily-log: " + section(r.Path, r.Heading)}
}

func writeChanged(_ memhost.WriteRequest, r memhost.WriteResponse) memhost.Change {
	return memhost.Change{Paths: memhost.Paths(r.Path), Note: "write: " + section(r.Path, r.Section)}
}

func removeChanged(_ memhost.RemoveRequest, r memhost.RemoveResponse) memhost.Change {
	return memhost.Change{Removed: memhost.Paths(r.Path), Note: "rm: " + r.Path}
}

func savePageChanged(_ memhost.SavePageRequest, r memhost.SavePageResponse) memhost.Change {
	return memhost.Change{Paths: memhost.Paths(r.Path), Note: "page/save: " + r.Path}
}

func sessionAppendChanged(_ memhost.SessionAppendRequest, r memhost.SessionAppendResponse) memhost.Change {
	return memhost.Change{Paths: memhost.Paths(r.Path), Note: fmt.Sprintf("session/append: %s turn %s", r.Path, r.Turn.ID)}
}

func ingestChanged(_ memhost.IngestRequest, r memhost.IngestResponse) memhost.Change {
	var c memhost.Change
	var names []string
	for _, f := range r.Files {
		if f.Added > 0 {
			names = append(names, fmt.Sprintf("%s (+%d turns)", f.Session, f.Added))
			c.Paths = append(c.Paths, memhost.SessionPath(f.Session))
		}
	}
	if len(names) > 0 {
		c.Note = "session/ingest: " + strings.Join(names, ", ")
	}
	return c
}

func sessionCompactChanged(_ memhost.SessionCompactRequest, r memhost.SessionCompactResponse) memhost.Change {
	if r.Session == "" {
		return memhost.Change{}
	}
	return memhost.Change{Paths: []string{memhost.SessionPath(r.Session)}, Note: "session/compact: " + r.Session}
}

// hookChanged: a hook's writes are its ingest's and its flush's, each
// published by its own operation.
func hookChanged(memhost.HookRequest, memhost.HookResponse) memhost.Change { return memhost.Change{} }

func episodesChanged(_ memhost.EpisodesRequest, r memhost.EpisodesResponse) memhost.Change {
	var c memhost.Change
	for _, d := range r.Days {
		if d.State == memhost.EpisodeWritten {
			c.Paths = append(c.Paths, d.Path)
		}
	}
	if len(c.Paths) > 0 {
		c.Note = "episodes: " + strings.Join(c.Paths, ", ")
	}
	return c
}

// usePluginChanged, pullModelChanged, removeModelChanged: config.yaml and
// models/ are this machine's, not shared: a note, no file.
func usePluginChanged(_ memhost.UsePluginRequest, r memhost.UseResponse) memhost.Change {
	return memhost.Change{Note: "plugins/use: " + r.Plugin}
}

func pullModelChanged(_ memhost.PullModelRequest, r memhost.PullResponse) memhost.Change {
	if r.Already || r.Name == "" {
		return memhost.Change{}
	}
	return memhost.Change{Note: "models/pull: " + r.Name}
}

func removeModelChanged(_ memhost.RemoveModelRequest, r memhost.RemoveModelResponse) memhost.Change {
	return memhost.Change{Note: "models/rm: " + r.Removed}
}

func moveChanged(_ memhost.MoveRequest, r memhost.MoveResponse) memhost.Change {
	c := memhost.Change{Paths: memhost.Paths(r.To), Removed: memhost.Paths(r.From), Note: fmt.Sprintf("mv: %s -> %s", r.From, r.To)}
	for _, u := range r.Updated {
		c.Paths = append(c.Paths, u.Path)
	}
	return c
}

func rollupChanged(_ memhost.RollupRequest, r memhost.RollupResponse) memhost.Change {
	c := memhost.Change{Note: "rollup: " + r.Path}
	if r.Changed {
		c.Paths = memhost.Paths(r.Path)
	}
	return c
}

func pruneChanged(q memhost.PruneRequest, r memhost.PruneResponse) memhost.Change {
	var c memhost.Change
	if q.DryRun {
		return c
	}
	for _, a := range r.Archived {
		c.Paths = append(c.Paths, a.To)
		c.Removed = append(c.Removed, a.From)
	}
	c.Removed = append(c.Removed, r.Deleted...)
	c.Note = fmt.Sprintf("prune: %d archived, %d deleted (before %s)", len(r.Archived), len(r.Deleted), r.Before)
	return c
}

func factAddChanged(_ knowledge.FactAddRequest, r knowledge.FactAddResponse) memhost.Change {
	c := memhost.Change{Note: fmt.Sprintf("fact/add: %s %s", r.Path, r.Fact.ID)}
	if !r.Stale {
		c.Paths = memhost.Paths(r.Path)
	}
	return c
}

func factForgetChanged(_ knowledge.FactForgetRequest, r knowledge.FactForgetResponse) memhost.Change {
	return memhost.Change{Paths: memhost.Paths(r.Path), Note: fmt.Sprintf("fact/forget: %s (%d)", r.Path, len(r.Forgotten))}
}

// consolidateChanged: a run that applied nothing wrote nothing.
func consolidateChanged(_ knowledge.ConsolidateRequest, r knowledge.ConsolidateResponse) memhost.Change {
	if len(r.Applied) == 0 {
		return memhost.Change{}
	}
	return memhost.Change{Paths: r.Written, Note: fmt.Sprintf("consolidate: %d facts from %d episodes", len(r.Applied), r.Episodes)}
}

func skillLearnChanged(_ memhost.SkillLearnRequest, r memhost.SkillsResponse) memhost.Change {
	if len(r.Written) == 0 {
		return memhost.Change{}
	}
	return memhost.Change{Paths: r.Written, Note: "skills/learn: " + strings.Join(r.Written, ", ")}
}

func skillReviewChanged(q memhost.SkillReviewRequest, r memhost.SkillReviewResponse) memhost.Change {
	return memhost.Change{Paths: memhost.Paths(r.Skill.Path), Note: "skills/review: " + q.Slug + " " + q.Status}
}

// gitInitChanged: the repository and config.yaml's federation keys are
// the machine's; the first sync publishes what it merged (git/sync).
func gitInitChanged(_ memhost.GitInitRequest, r memhost.GitInitResponse) memhost.Change {
	return memhost.Change{Note: "git/init: " + r.Home}
}

// fedSyncChanged: what the merge brought or deleted, published even when
// the push after it failed (the merge stands). Federation commits none of
// it: the merge is its own commit.
func fedSyncChanged(_ memhost.FedSyncRequest, r memhost.FedSyncResponse) memhost.Change {
	var c memhost.Change
	for _, p := range r.Paths {
		if slices.Contains(r.Gone, p) {
			c.Removed = append(c.Removed, p)
		} else {
			c.Paths = append(c.Paths, p)
		}
	}
	if len(r.Paths) > 0 {
		c.Note = fmt.Sprintf("git/sync: %d files merged", len(r.Paths))
	}
	return c
}

func importChanged(_ memhost.ImportRequest, r memhost.ImportResponse) memhost.Change {
	if len(r.Changed)+len(r.ChangedFiles) == 0 {
		return memhost.Change{}
	}
	return memhost.Change{Paths: r.Changed, Files: r.ChangedFiles,
		Note: fmt.Sprintf("import: %s (%d added, %d merged)", filepath.Base(r.Path), len(r.Added), len(r.Merged))}
}

func secretsRedactChanged(_ memhost.SecretsRedactRequest, r memhost.SecretsRedactResponse) memhost.Change {
	if len(r.Files) == 0 {
		return memhost.Change{}
	}
	return memhost.Change{Paths: r.Changed, Note: fmt.Sprintf("secrets/redact: %d files", len(r.Files))}
}

// section names a page's section in a change's note: "reference/x.md ## Sarah".
func section(path, heading string) string {
	if s := strings.TrimSpace(strings.TrimLeft(heading, "#")); s != "" {
		return path + " ## " + s
	}
	return path
}
