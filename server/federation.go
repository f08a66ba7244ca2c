package server

import (
	"context"
	"net/http"
	"path/filepath"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/server/wire"
)

// The federation and archive routes (host/federation.go, host/archive.go):
// POST /api/v1/git/init, /api/v1/git/sync, /api/v1/export and
// /api/v1/import. git init, export and import name files (or a remote) on
// the server's machine: routes.go serves them on the unix socket only.

// absolutePath refuses a relative archive path: the server's working
// folder is not the caller's, so a relative path would name another file.
func absolutePath[Req, Resp any](path func(Req) string, fn func(context.Context, Req) (Resp, error)) func(context.Context, Req) (Resp, error) {
	return func(ctx context.Context, req Req) (Resp, error) {
		if p := path(req); p != "" && !filepath.IsAbs(p) {
			var zero Resp
			return zero, fault.BadInputf("path", "%s is a relative path: give an absolute one (the server's working folder is not yours)", p)
		}
		return fn(ctx, req)
	}
}

func exportPath(r memhost.ExportRequest) string { return r.Path }
func importPath(r memhost.ImportRequest) string { return r.Path }

// fedSync is POST /api/v1/git/sync. A sync can fail after it merged (the
// push failed: the merge stands and is indexed); its answer then carries
// both the error, with its kind's status, and the sync's report, so that
// a client learns what changed as a caller in-process does.
func (s *Server) fedSync(w http.ResponseWriter, r *http.Request) {
	var req memhost.FedSyncRequest
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	resp, err := s.h.FedSync(r.Context(), req)
	// Open dashboards and MCP subscribers hear of what the merge changed
	// (and of a failed sync, which the dashboard's git card shows), as
	// they do of the serve loop's git syncs.
	if resp.Remote != "" {
		s.Publish("git-sync", memhost.SyncResult{Paths: resp.Paths, Indexed: resp.Indexed, DurationMs: resp.DurationMs})
	}
	if err == nil {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	s.failed(r, err)
	body := wire.FedSyncBody{Error: toWire(err)}
	if resp.Remote != "" { // the sync began
		body.Sync = &resp
	}
	status, ok := wire.Status(body.Error.Kind)
	if !ok {
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, body)
}
