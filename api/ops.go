// Package api is the operation table: every operation of memhost's API,
// its HTTP path, its request and response types, whether it writes, and
// the method of API that runs it.
package api

import (
	"context"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/providers"
	"github.com/memhost/memhost/knowledge"
)

// The operation table: every operation of the API in one place. The HTTP
// routes (server/routes.go) and the docs' route index
// (TestAPIDocRoutes) come from Ops; the server's client and the Host are
// held to API by the compiler; the CLI and MCP call an API, whichever of
// the two it is.
//
// Adding an operation touches four files: its request and response types
// and the method on Host (host/<feature>.go); an Op, a line of API and a
// line of Ops here (api/ops.go); the client's one-line method (server/client/client.go: a
// forgotten one does not compile); its section in docs/api.md (a
// forgotten one fails TestAPIDocRoutes). A CLI command or an MCP tool, if
// it has one, is a fifth.

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

// An Op is an operation with its request and response types and the API
// method that runs it.
type Op[Req, Resp any] struct {
	OpInfo
	Run func(API, context.Context, Req) (Resp, error)
}

// Operation is an Op of any types, as the table holds them.
type Operation interface {
	Info() OpInfo
	// Call decodes the request with decode and runs the operation on a.
	Call(ctx context.Context, a API, decode func(req any) error) (any, error)
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

// The operations.
var (
	OpInit               = Op[memhost.InitRequest, memhost.InitResponse]{OpInfo{Name: "init", Write: true}, API.Init}
	OpRemember           = Op[memhost.RememberRequest, memhost.RememberResponse]{OpInfo{Name: "remember", Write: true}, API.Remember}
	OpDailyLog           = Op[memhost.DailyLogRequest, memhost.DailyLogResponse]{OpInfo{Name: "daily-log", Write: true}, API.DailyLog}
	OpGet                = Op[memhost.GetRequest, memhost.GetResponse]{OpInfo{Name: "get"}, API.Get}
	OpWrite              = Op[memhost.WriteRequest, memhost.WriteResponse]{OpInfo{Name: "write", Write: true}, API.Write}
	OpRemove             = Op[memhost.RemoveRequest, memhost.RemoveResponse]{OpInfo{Name: "rm", Write: true}, API.Remove}
	OpRecall             = Op[memhost.RecallRequest, memhost.RecallResponse]{OpInfo{Name: "recall"}, API.Recall}
	OpContext            = Op[memhost.ContextRequest, memhost.ContextResponse]{OpInfo{Name: "context"}, API.Context}
	OpConversationSearch = Op[memhost.ConversationSearchRequest, memhost.ConversationSearchResponse]{OpInfo{Name: "conversation-search"}, API.ConversationSearch}
	OpStatus             = Op[memhost.StatusRequest, memhost.StatusResponse]{OpInfo{Name: "status"}, API.Status}
	OpFiles              = Op[memhost.FilesRequest, memhost.FilesResponse]{OpInfo{Name: "files"}, API.Files}
	OpSync               = Op[memhost.SyncRequest, memhost.SyncResult]{OpInfo{Name: "sync"}, API.Sync}
	OpRebuild            = Op[memhost.RebuildRequest, memhost.SyncResult]{OpInfo{Name: "rebuild"}, API.Rebuild}
	OpEmbed              = Op[memhost.EmbedRequest, memhost.EmbedResult]{OpInfo{Name: "embed"}, API.Embed}
	OpSessions           = Op[memhost.SessionsRequest, memhost.SessionsResponse]{OpInfo{Name: "sessions"}, API.Sessions}
	OpSessionAppend      = Op[memhost.SessionAppendRequest, memhost.SessionAppendResponse]{OpInfo{Name: "session/append", Write: true}, API.SessionAppend}
	OpIngest             = Op[memhost.IngestRequest, memhost.IngestResponse]{OpInfo{Name: "session/ingest", Write: true, SocketOnly: true}, API.Ingest}
	OpSessionTokens      = Op[memhost.SessionTokensRequest, memhost.SessionTokens]{OpInfo{Name: "session/tokens"}, API.SessionTokens}
	OpSessionCheck       = Op[memhost.SessionCheckRequest, memhost.SessionCheck]{OpInfo{Name: "session/check"}, API.SessionCheck}
	OpSessionCompact     = Op[memhost.SessionCompactRequest, memhost.SessionCompactResponse]{OpInfo{Name: "session/compact", Write: true}, API.SessionCompact}
	OpHook               = Op[memhost.HookRequest, memhost.HookResponse]{OpInfo{Name: "hook", Write: true, SocketOnly: true}, API.Hook}
	OpEpisodes           = Op[memhost.EpisodesRequest, memhost.EpisodesResponse]{OpInfo{Name: "episodes", Write: true}, API.Episodes}
	OpPlugins            = Op[memhost.PluginsRequest, providers.PluginsResponse]{OpInfo{Name: "plugins"}, API.Plugins}
	OpUsePlugin          = Op[memhost.UsePluginRequest, providers.UseResponse]{OpInfo{Name: "plugins/use", Write: true, SocketOnly: true}, API.UsePlugin}
	OpPluginStatus       = Op[memhost.PluginStatusRequest, memhost.PluginStatusResponse]{OpInfo{Name: "plugins/status"}, API.PluginStatus}
	OpModels             = Op[memhost.ModelsRequest, providers.ModelsResponse]{OpInfo{Name: "models"}, API.Models}
	OpPullModel          = Op[providers.PullModelRequest, providers.PullResponse]{OpInfo{Name: "models/pull", Write: true}, API.PullModel}
	OpRemoveModel        = Op[memhost.RemoveModelRequest, memhost.RemoveModelResponse]{OpInfo{Name: "models/rm", Write: true}, API.RemoveModel}
	OpHealth             = Op[memhost.HealthRequest, memhost.HealthResponse]{OpInfo{Name: "health"}, API.Health}
	OpHealthHistory      = Op[memhost.HealthHistoryRequest, memhost.HealthHistoryResponse]{OpInfo{Name: "health/history"}, API.HealthHistory}
	OpLinks              = Op[memhost.LinksRequest, memhost.LinksResponse]{OpInfo{Name: "links"}, API.Links}
	OpMove               = Op[memhost.MoveRequest, memhost.MoveResponse]{OpInfo{Name: "mv", Write: true}, API.Move}
	OpRollup             = Op[memhost.RollupRequest, memhost.RollupResponse]{OpInfo{Name: "rollup", Write: true}, API.Rollup}
	OpPrune              = Op[memhost.PruneRequest, memhost.PruneResponse]{OpInfo{Name: "prune", Write: true}, API.Prune}
	OpFactAdd            = Op[knowledge.FactAddRequest, knowledge.FactAddResponse]{OpInfo{Name: "fact/add", Write: true}, API.FactAdd}
	OpFactForget         = Op[knowledge.FactForgetRequest, knowledge.FactForgetResponse]{OpInfo{Name: "fact/forget", Write: true}, API.FactForget}
	OpFacts              = Op[knowledge.FactsRequest, knowledge.FactsResponse]{OpInfo{Name: "facts"}, API.Facts}
	OpEntities           = Op[knowledge.EntitiesRequest, knowledge.EntitiesResponse]{OpInfo{Name: "entities"}, API.Entities}
	OpRelations          = Op[knowledge.RelationsRequest, knowledge.RelationsResponse]{OpInfo{Name: "relations"}, API.Relations}
	OpConsolidate        = Op[knowledge.ConsolidateRequest, knowledge.ConsolidateResponse]{OpInfo{Name: "consolidate", Write: true}, API.Consolidate}
	OpSkills             = Op[memhost.SkillsRequest, memhost.SkillsResponse]{OpInfo{Name: "skills"}, API.Skills}
	OpSkillLearn         = Op[memhost.SkillLearnRequest, memhost.SkillsResponse]{OpInfo{Name: "skills/learn", Write: true}, API.SkillLearn}
	OpSkillReview        = Op[memhost.SkillReviewRequest, memhost.SkillReviewResponse]{OpInfo{Name: "skills/review", Write: true}, API.SkillReview}
	OpGitInit            = Op[memhost.GitInitRequest, memhost.GitInitResponse]{OpInfo{Name: "git/init", Write: true, SocketOnly: true}, API.GitInit}
	OpFedSync            = Op[memhost.FedSyncRequest, memhost.FedSyncResponse]{OpInfo{Name: "git/sync", Write: true}, API.FedSync}
	OpExport             = Op[memhost.ExportRequest, memhost.ExportResponse]{OpInfo{Name: "export", SocketOnly: true}, API.Export}
	OpImport             = Op[memhost.ImportRequest, memhost.ImportResponse]{OpInfo{Name: "import", Write: true, SocketOnly: true}, API.Import}
	OpSecretsScan        = Op[memhost.SecretsScanRequest, memhost.SecretsScanResponse]{OpInfo{Name: "secrets/scan"}, API.SecretsScan}
	OpSecretsRedact      = Op[memhost.SecretsRedactRequest, memhost.SecretsRedactResponse]{OpInfo{Name: "secrets/redact", Write: true}, API.SecretsRedact}
)

// Ops is every operation, in the order docs/api.md gives them.
var Ops = []Operation{
	OpInit, OpRemember, OpDailyLog, OpGet, OpWrite, OpRemove, OpRecall, OpContext, OpConversationSearch, OpStatus, OpFiles, OpSync, OpRebuild, OpEmbed, OpSessions, OpSessionAppend, OpIngest, OpSessionTokens, OpSessionCheck, OpSessionCompact, OpHook, OpEpisodes, OpPlugins, OpUsePlugin, OpPluginStatus, OpModels, OpPullModel, OpRemoveModel, OpHealth, OpHealthHistory, OpLinks, OpMove, OpRollup, OpPrune, OpFactAdd, OpFactForget, OpFacts, OpEntities, OpRelations, OpConsolidate, OpSkills, OpSkillLearn, OpSkillReview, OpGitInit, OpFedSync, OpExport, OpImport, OpSecretsScan, OpSecretsRedact,
}

// API is every operation: *Host runs them, *client.Client (server/client) forwards them
// to a running server, with the same requests, responses and errors.
type API interface {
	Init(context.Context, memhost.InitRequest) (memhost.InitResponse, error)
	Remember(context.Context, memhost.RememberRequest) (memhost.RememberResponse, error)
	DailyLog(context.Context, memhost.DailyLogRequest) (memhost.DailyLogResponse, error)
	Get(context.Context, memhost.GetRequest) (memhost.GetResponse, error)
	Write(context.Context, memhost.WriteRequest) (memhost.WriteResponse, error)
	Remove(context.Context, memhost.RemoveRequest) (memhost.RemoveResponse, error)
	Recall(context.Context, memhost.RecallRequest) (memhost.RecallResponse, error)
	Context(context.Context, memhost.ContextRequest) (memhost.ContextResponse, error)
	ConversationSearch(context.Context, memhost.ConversationSearchRequest) (memhost.ConversationSearchResponse, error)
	Status(context.Context, memhost.StatusRequest) (memhost.StatusResponse, error)
	Files(context.Context, memhost.FilesRequest) (memhost.FilesResponse, error)
	Sync(context.Context, memhost.SyncRequest) (memhost.SyncResult, error)
	Rebuild(context.Context, memhost.RebuildRequest) (memhost.SyncResult, error)
	Embed(context.Context, memhost.EmbedRequest) (memhost.EmbedResult, error)
	Sessions(context.Context, memhost.SessionsRequest) (memhost.SessionsResponse, error)
	SessionAppend(context.Context, memhost.SessionAppendRequest) (memhost.SessionAppendResponse, error)
	Ingest(context.Context, memhost.IngestRequest) (memhost.IngestResponse, error)
	SessionTokens(context.Context, memhost.SessionTokensRequest) (memhost.SessionTokens, error)
	SessionCheck(context.Context, memhost.SessionCheckRequest) (memhost.SessionCheck, error)
	SessionCompact(context.Context, memhost.SessionCompactRequest) (memhost.SessionCompactResponse, error)
	Hook(context.Context, memhost.HookRequest) (memhost.HookResponse, error)
	Episodes(context.Context, memhost.EpisodesRequest) (memhost.EpisodesResponse, error)
	Plugins(context.Context, memhost.PluginsRequest) (providers.PluginsResponse, error)
	UsePlugin(context.Context, memhost.UsePluginRequest) (providers.UseResponse, error)
	PluginStatus(context.Context, memhost.PluginStatusRequest) (memhost.PluginStatusResponse, error)
	Models(context.Context, memhost.ModelsRequest) (providers.ModelsResponse, error)
	PullModel(context.Context, providers.PullModelRequest) (providers.PullResponse, error)
	RemoveModel(context.Context, memhost.RemoveModelRequest) (memhost.RemoveModelResponse, error)
	Health(context.Context, memhost.HealthRequest) (memhost.HealthResponse, error)
	HealthHistory(context.Context, memhost.HealthHistoryRequest) (memhost.HealthHistoryResponse, error)
	Links(context.Context, memhost.LinksRequest) (memhost.LinksResponse, error)
	Move(context.Context, memhost.MoveRequest) (memhost.MoveResponse, error)
	Rollup(context.Context, memhost.RollupRequest) (memhost.RollupResponse, error)
	Prune(context.Context, memhost.PruneRequest) (memhost.PruneResponse, error)
	FactAdd(context.Context, knowledge.FactAddRequest) (knowledge.FactAddResponse, error)
	FactForget(context.Context, knowledge.FactForgetRequest) (knowledge.FactForgetResponse, error)
	Facts(context.Context, knowledge.FactsRequest) (knowledge.FactsResponse, error)
	Entities(context.Context, knowledge.EntitiesRequest) (knowledge.EntitiesResponse, error)
	Relations(context.Context, knowledge.RelationsRequest) (knowledge.RelationsResponse, error)
	Consolidate(context.Context, knowledge.ConsolidateRequest) (knowledge.ConsolidateResponse, error)
	Skills(context.Context, memhost.SkillsRequest) (memhost.SkillsResponse, error)
	SkillLearn(context.Context, memhost.SkillLearnRequest) (memhost.SkillsResponse, error)
	SkillReview(context.Context, memhost.SkillReviewRequest) (memhost.SkillReviewResponse, error)
	GitInit(context.Context, memhost.GitInitRequest) (memhost.GitInitResponse, error)
	FedSync(context.Context, memhost.FedSyncRequest) (memhost.FedSyncResponse, error)
	Export(context.Context, memhost.ExportRequest) (memhost.ExportResponse, error)
	Import(context.Context, memhost.ImportRequest) (memhost.ImportResponse, error)
	SecretsScan(context.Context, memhost.SecretsScanRequest) (memhost.SecretsScanResponse, error)
	SecretsRedact(context.Context, memhost.SecretsRedactRequest) (memhost.SecretsRedactResponse, error)
}
