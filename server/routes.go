package server

import (
	"net/http"
	"strings"

	"github.com/memhost/memhost/api"

	"github.com/memhost/memhost/host/health"
	"github.com/memhost/memhost/internal/version"
	"github.com/memhost/memhost/server/dashboard"
)

// Handler returns every route of the API (docs/api.md documents each).
// It has no auth of its own: Run wraps it per listener (package auth).
func (s *Server) Handler() http.Handler {
	h := s.h
	mux := http.NewServeMux()

	// One endpoint per operation of the table (api.Ops): POST, JSON
	// request → JSON response. A few need more than the table says.
	custom := map[string]http.Handler{
		api.OpPullModel.Name: http.HandlerFunc(s.pullModel), // progress as NDJSON
		api.OpFedSync.Name:   http.HandlerFunc(s.fedSync),   // federation.go
		// Paths are the server's: a relative one is refused.
		api.OpExport.Name: op(s, absolutePath(exportPath, h.Export)),
		api.OpImport.Name: op(s, absolutePath(importPath, h.Import)),
	}
	for _, o := range api.Ops {
		info := o.Info()
		handler := custom[info.Name]
		if handler == nil {
			handler = s.route(o)
		}
		if info.SocketOnly {
			handler = socketOnly(handler)
		}
		mux.Handle("POST "+info.Path(), handler)
	}

	// The server itself.
	mux.HandleFunc("GET /api/v1/server", s.info)
	mux.HandleFunc("POST /api/v1/server/stop", s.stop)
	mux.HandleFunc("GET /api/v1/events", s.streamEvents)

	// For container health checks and monitors.
	mux.HandleFunc("GET /api/health", s.health)

	// Debug and admin endpoints (docs/api.md, "The debug API").
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

	// The dashboard: GET / and everything under /ui/, with the
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
		w.Header().Set(VersionHeader, version.String())
		if v := r.Header.Get(VersionHeader); v != "" && v != version.String() && !strings.HasPrefix(r.URL.Path, "/api/v1/server") {
			writeError(w, versionMismatch(v))
			return
		}
		if e := r.Header.Get(EnvHeader); e != "" && s.opts.Env != "" && e != s.opts.Env && !strings.HasPrefix(r.URL.Path, "/api/v1/server") {
			writeError(w, ErrEnvDiffers)
			return
		}
		// Counted once it is this server's to answer: a client refused
		// for its version or environment keeps no on-demand server alive.
		s.requests.Add(1)
		s.inflight.Add(1)
		defer s.inflight.Add(-1)
		s.h.RecheckConfig()
		if err := s.h.ConfigError(); err != nil && needsConfig(r.URL.Path) {
			writeError(w, err) // as the CLI refuses to run on it
			return
		}
		next.ServeHTTP(w, r)
	})
}

// needsConfig reports whether a request is refused here while config.yaml
// cannot be used: the API's operations (which the Host's chain refuses
// too, in every transport: host.refusing; here before a body is read),
// health and debug endpoints are;
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
// container health check or a monitor needs only the status code. The
// check is the server's (healthNow): one at a time, however many ask.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	resp, err := s.healthNow(r.Context())
	if err != nil {
		s.failed(r, err)
		writeError(w, err)
		return
	}
	code := http.StatusOK
	if resp.Overall == health.Unhealthy {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, resp)
}
