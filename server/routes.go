package server

import (
	"net/http"
	"strings"

	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/internal/version"
	"github.com/memhost/memhost/server/dashboard"
)

// Handler returns every route of the API (docs/api.md documents each).
// It has no auth of its own: Run wraps it per listener (package auth).
func (s *Server) Handler() http.Handler {
	h := s.h
	mux := http.NewServeMux()

	// One endpoint per host operation: POST, JSON request → JSON response.
	mux.Handle("POST /api/v1/init", op(s, h.Init))
	mux.Handle("POST /api/v1/remember", op(s, h.Remember))
	mux.Handle("POST /api/v1/daily-log", op(s, h.DailyLog))
	mux.Handle("POST /api/v1/get", op(s, h.Get))
	mux.Handle("POST /api/v1/write", op(s, h.Write))
	mux.Handle("POST /api/v1/rm", op(s, h.Remove))
	mux.Handle("POST /api/v1/recall", op(s, h.Recall))
	mux.Handle("POST /api/v1/context", op(s, h.Context))
	mux.Handle("POST /api/v1/conversation-search", op(s, h.ConversationSearch))
	mux.Handle("POST /api/v1/status", op(s, h.Status))
	mux.Handle("POST /api/v1/files", op(s, h.Files))
	mux.Handle("POST /api/v1/sync", op(s, h.Sync))
	mux.Handle("POST /api/v1/rebuild", op(s, h.Rebuild))
	mux.Handle("POST /api/v1/embed", op(s, h.Embed))
	mux.Handle("POST /api/v1/sessions", op(s, h.Sessions))
	mux.Handle("POST /api/v1/session/append", op(s, h.SessionAppend))
	mux.Handle("POST /api/v1/session/ingest", socketOnly(op(s, h.Ingest)))
	mux.Handle("POST /api/v1/session/tokens", op(s, h.SessionTokens))
	mux.Handle("POST /api/v1/session/check", op(s, h.SessionCheck))
	mux.Handle("POST /api/v1/session/compact", op(s, h.SessionCompact))
	mux.Handle("POST /api/v1/hook", socketOnly(op(s, h.Hook)))
	mux.Handle("POST /api/v1/plugins", op(s, h.Plugins))
	mux.Handle("POST /api/v1/plugins/use", socketOnly(op(s, h.UsePlugin))) // options name files and hosts
	mux.Handle("POST /api/v1/plugins/status", op(s, h.PluginStatus))
	mux.Handle("POST /api/v1/models", op(s, h.Models))
	mux.HandleFunc("POST /api/v1/models/pull", s.pullModel)
	mux.Handle("POST /api/v1/models/rm", op(s, h.RemoveModel))
	mux.Handle("POST /api/v1/health", op(s, h.Health))
	mux.Handle("POST /api/v1/links", op(s, h.Links))
	mux.Handle("POST /api/v1/mv", op(s, h.Move))
	mux.Handle("POST /api/v1/rollup", op(s, h.Rollup))
	mux.Handle("POST /api/v1/prune", op(s, h.Prune))
	mux.Handle("POST /api/v1/fact/add", op(s, h.FactAdd))
	mux.Handle("POST /api/v1/fact/forget", op(s, h.FactForget))
	mux.Handle("POST /api/v1/facts", op(s, h.Facts))
	mux.Handle("POST /api/v1/entities", op(s, h.Entities))
	mux.Handle("POST /api/v1/relations", op(s, h.Relations))
	mux.Handle("POST /api/v1/consolidate", op(s, h.Consolidate))
	mux.Handle("POST /api/v1/git/init", socketOnly(op(s, h.GitInit))) // a remote path or URL on the server's machine
	mux.HandleFunc("POST /api/v1/git/sync", s.fedSync)                // federation.go
	mux.Handle("POST /api/v1/export", socketOnly(op(s, absolutePath(exportPath, h.Export))))
	mux.Handle("POST /api/v1/import", socketOnly(op(s, absolutePath(importPath, h.Import))))

	// The server itself.
	mux.HandleFunc("GET /api/v1/server", s.info)
	mux.HandleFunc("POST /api/v1/server/stop", s.stop)
	mux.HandleFunc("GET /api/v1/events", s.streamEvents)

	// Seed 004 §6: for container health checks and monitors.
	mux.HandleFunc("GET /api/health", s.health)

	// Seed 001 §10: debug and admin endpoints.
	mux.HandleFunc("GET /api/debug/memory/status", s.debugAPI().Status)
	mux.HandleFunc("GET /api/debug/memory/search", s.debugAPI().Search)
	mux.HandleFunc("GET /api/debug/memory/files", s.debugAPI().Files)
	mux.HandleFunc("POST /api/debug/memory/rebuild", s.debugAPI().Rebuild)
	mux.HandleFunc("GET /api/debug/memory/rebuild/{id}", s.debugAPI().RebuildJob)
	mux.HandleFunc("GET /api/debug/memory/rebuild/{id}/events", s.debugAPI().RebuildEvents)
	mux.HandleFunc("POST /api/debug/memory/simulate-compaction", s.debugAPI().SimulateCompaction)
	mux.HandleFunc("POST /api/debug/brain/inject-turn", s.debugAPI().InjectTurn)
	mux.HandleFunc("GET /api/debug/notebook/pages", s.debugAPI().Pages)
	mux.HandleFunc("GET /api/debug/notebook/{path...}", s.debugAPI().GetPage)
	mux.HandleFunc("POST /api/debug/notebook/{path...}", s.debugAPI().WritePage)
	mux.HandleFunc("DELETE /api/debug/notebook/{path...}", s.debugAPI().DeletePage)

	// MCP over streamable HTTP (POST, GET and DELETE, answered by the
	// SDK): docs/api.md, "MCP".
	if s.mcp != nil {
		mux.Handle("/mcp", s.mcp)
	}

	// The dashboard (issue 15): GET / and everything under /ui/, with the
	// API's auth (docs/api.md, "The dashboard").
	dash := dashboard.New(h)
	mux.Handle("/{$}", dash)
	mux.Handle("/ui/", dash)

	mux.HandleFunc("/", s.notFound)
	return s.common(s.limitBodies(mux))
}

// common adds what every response carries and refuses clients of another
// build, but for the server's own endpoints: any client may ask which
// version runs, and stop it.
func (s *Server) common(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		w.Header().Set(VersionHeader, version.String())
		if v := r.Header.Get(VersionHeader); v != "" && v != version.String() && !strings.HasPrefix(r.URL.Path, "/api/v1/server") {
			writeError(w, versionMismatch(v))
			return
		}
		if e := r.Header.Get(EnvHeader); e != "" && s.opts.Env != "" && e != s.opts.Env && !strings.HasPrefix(r.URL.Path, "/api/v1/server") {
			writeError(w, ErrEnvDiffers)
			return
		}
		s.h.RecheckConfig()
		if err := s.h.ConfigError(); err != nil && needsConfig(r.URL.Path) {
			writeError(w, err) // as the CLI refuses to run on it
			return
		}
		next.ServeHTTP(w, r)
	})
}

// needsConfig reports whether a request is refused here while config.yaml
// cannot be used: the API's operations, health and debug endpoints are;
// the server's own endpoints (which server runs, stop it) and the event
// stream are not. The dashboard and MCP refuse with the same error in
// their own forms: every dashboard page and call but its static files
// (dashboard.ServeHTTP), and every MCP tool call, resource read and
// prompt, its handshake and lists answering (mcp.go, refuseWithoutConfig).
func needsConfig(path string) bool {
	return strings.HasPrefix(path, "/api/") && !strings.HasPrefix(path, "/api/v1/server") && path != "/api/v1/events"
}

// health is GET /api/health: the health report, with status 200 when the
// home is healthy or degraded and 503 when it is unhealthy, so that a
// container health check or a monitor needs only the status code.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	resp, err := s.h.Health(r.Context(), host.HealthRequest{})
	if err != nil {
		s.failed(r, err)
		writeError(w, err)
		return
	}
	code := http.StatusOK
	if resp.Overall == host.Unhealthy {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, resp)
}
