package server

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/internal/version"
	"github.com/memhost/memhost/server/auth"
)

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, fault.Errorf(fault.NotFound, "", "no endpoint %s %s (the API is listed in docs/api.md)", r.Method, r.URL.Path))
}

func versionMismatch(client string) error {
	return fault.Errorf(fault.Conflict, "version", "the server runs memhost %s, the client is memhost %s", version.String(), client)
}

// modelName is a model's bare name, which over TCP is all a request may
// give besides an http(s) URL: anything else may be a path.
var modelName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// pullModel is POST /api/v1/models/pull. With "Accept:
// application/x-ndjson" the answer streams one JSON line per progress
// step ({"progress": {"done", "total"}}) and ends with {"result": ...} or
// {"error": ...}; otherwise it is the result alone when the download ends.
func (s *Server) pullModel(w http.ResponseWriter, r *http.Request) {
	var req memhost.PullModelRequest
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if auth.OverTCP(r) && !modelName.MatchString(req.Model) && !strings.HasPrefix(req.Model, "https://") && !strings.HasPrefix(req.Model, "http://") {
		writeError(w, auth.RefuseFiles()) // a path on the server's disk
		return
	}
	if r.Header.Get("Accept") != "application/x-ndjson" {
		resp, err := s.h.PullModel(r.Context(), req)
		if err != nil {
			s.failed(r, err)
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	line := func(v any) {
		enc.Encode(v)
		if fl != nil {
			fl.Flush()
		}
	}
	// The store reports every read; a line goes out every 100 ms with the
	// newest figure when it changed, and once more at the end, so that a
	// download that stalls shows all it had received (a report on the
	// store's own schedule could lag a burst behind until the next read).
	var latest atomic.Pointer[[2]int64]
	req.Progress = func(done, total int64) { latest.Store(&[2]int64{done, total}) }
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() { // writes w alone until stopped is closed
		defer close(stopped)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		sent := [2]int64{-1, -1}
		send := func() {
			if p := latest.Load(); p != nil && *p != sent {
				sent = *p
				line(map[string]any{"progress": map[string]int64{"done": p[0], "total": p[1]}})
			}
		}
		for {
			select {
			case <-tick.C:
				send()
			case <-stop:
				send()
				return
			}
		}
	}()
	resp, err := s.h.PullModel(r.Context(), req)
	close(stop)
	<-stopped
	if err != nil {
		line(errorBody{Error: toWire(err)})
		return
	}
	line(map[string]any{"result": resp})
}
