package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/internal/version"
)

// Seed 001 §10's debug API, with that document's JSON shapes. Where the
// seed names a field memhost has no figure for, the field is left out
// rather than filled with a guess (docs/api.md says which).

// debugStatus is GET /api/debug/memory/status.
func (s *Server) debugStatus(w http.ResponseWriter, r *http.Request) {
	st, err := s.h.Status(r.Context(), host.StatusRequest{})
	if err != nil {
		writeError(w, err)
		return
	}
	type files struct {
		Total int `json:"total"`
		Stale int `json:"stale"`
	}
	type chunks struct {
		Total          int `json:"total"`
		WithEmbeddings int `json:"withEmbeddings"`
		Pending        int `json:"pendingEmbeddings"`
	}
	out := struct {
		Indexed          bool     `json:"indexed"`
		LastSync         string   `json:"lastSync,omitempty"`
		LastSyncDuration *float64 `json:"lastSyncDuration,omitempty"` // ms, of the last sync this server ran
		Files            files    `json:"files"`
		Chunks           chunks   `json:"chunks"`
		EmbeddingModel   string   `json:"embeddingModel,omitempty"`
		Provider         string   `json:"provider,omitempty"`
		Dimensions       int      `json:"dimensions,omitempty"`
		DBSizeBytes      int64    `json:"dbSizeBytes"`
		WatcherActive    bool     `json:"watcherActive"`
		Mode             string   `json:"mode"`
		Reason           string   `json:"reason,omitempty"`
		Version          string   `json:"version"`
	}{
		Indexed: st.LastSync != "", LastSync: st.LastSync,
		Files:          files{st.Files, st.Stale},
		Chunks:         chunks{st.Chunks, st.Embedded, st.Pending},
		EmbeddingModel: st.Model, Provider: st.Provider, Dimensions: st.Dimensions,
		DBSizeBytes: st.DBSizeBytes, Mode: st.Mode, Reason: st.Reason, Version: version.String(),
	}
	if s.opts.Info != nil {
		out.WatcherActive = s.opts.Info().Watcher
	}
	if d, ok := s.lastSyncMs.Load().(float64); ok {
		out.LastSyncDuration = &d
	}
	writeJSON(w, http.StatusOK, out)
}

// seedResult is a search result as seed 001 §10 shows it.
type seedResult struct {
	FilePath string     `json:"filePath"`
	Heading  *string    `json:"heading"`
	Snippet  string     `json:"snippet"`
	Score    float64    `json:"score"`
	Lines    host.Lines `json:"lines"`
	Session  string     `json:"session,omitempty"`
	Turns    []string   `json:"turns,omitempty"`
}

func seedResults(rs []host.Result) []seedResult {
	out := make([]seedResult, 0, len(rs))
	for _, r := range rs {
		sr := seedResult{FilePath: r.Path, Snippet: r.Snippet, Score: r.Score, Lines: r.Lines, Session: r.Session, Turns: r.Turns}
		if r.Heading != "" {
			h := r.Heading
			sr.Heading = &h
		}
		out = append(out, sr)
	}
	return out
}

// debugSearch is GET /api/debug/memory/search?q=&sources=&maxResults=&minScore=.
// Without sources every group is searched (the seed's default).
func (s *Server) debugSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := host.RecallRequest{Query: q.Get("q"), Sources: host.Sources}
	if v := q.Get("sources"); v != "" {
		req.Sources = nil
		for _, src := range strings.Split(v, ",") {
			req.Sources = append(req.Sources, strings.TrimSpace(src))
		}
	}
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			writeError(w, fault.BadInputf("maxResults", "maxResults %q is not a whole number", v))
			return
		}
		req.MaxResults = n
	}
	if v := q.Get("minScore"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			writeError(w, fault.BadInputf("minScore", "minScore %q is not a number", v))
			return
		}
		req.MinScore = &f
	}
	resp, err := s.h.Recall(r.Context(), req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"query": resp.Query, "mode": resp.Mode, "reason": resp.Reason,
		"results": map[string][]seedResult{
			"notebook": seedResults(resp.Results.Notebook),
			"daily":    seedResults(resp.Results.Daily),
			"sessions": seedResults(resp.Results.Sessions),
		},
		"timing": resp.Timing,
	})
}

// debugFiles is GET /api/debug/memory/files.
func (s *Server) debugFiles(w http.ResponseWriter, r *http.Request) {
	resp, err := s.h.Files(r.Context(), host.FilesRequest{})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// job is a rebuild started through the debug API.
type job struct {
	ID        string           `json:"id"`
	Started   time.Time        `json:"started"`
	Completed bool             `json:"completed"`
	Result    *rebuildResult   `json:"result,omitempty"`
	Error     *wireError       `json:"error,omitempty"`
	done      chan struct{}    // closed when the rebuild ends
	sync      *host.SyncResult // memhost's own figures
}

// rebuildResult is seed 001's rebuild result plus memhost's SyncResult.
// Vectors are not computed by the rebuild itself (the embedding worker
// fills them afterwards, mostly from the cache), so embeddingsComputed is
// not reported.
type rebuildResult struct {
	FilesScanned  int              `json:"filesScanned"`
	FilesChanged  int              `json:"filesChanged"`
	ChunksCreated int              `json:"chunksCreated"`
	DurationMs    float64          `json:"durationMs"`
	Sync          *host.SyncResult `json:"sync"`
}

// keptJobs is how many finished rebuilds can still be polled.
const keptJobs = 20

// debugRebuild is POST /api/debug/memory/rebuild: starts a rebuild and
// answers at once (202) with its id; GET .../rebuild/{id} polls it and
// .../rebuild/{id}/events streams it.
func (s *Server) debugRebuild(w http.ResponseWriter, r *http.Request) {
	s.jobsMu.Lock()
	for _, other := range s.jobs {
		if !other.Completed {
			s.jobsMu.Unlock()
			writeError(w, fault.Errorf(fault.Conflict, "", "rebuild %s is running; poll /api/debug/memory/rebuild/%s", other.ID, other.ID))
			return
		}
	}
	s.nextID++
	j := &job{ID: "rebuild-" + strconv.Itoa(s.nextID), Started: time.Now().UTC(), done: make(chan struct{})}
	s.jobs[j.ID] = j
	delete(s.jobs, "rebuild-"+strconv.Itoa(s.nextID-keptJobs)) // the oldest kept
	s.jobsMu.Unlock()
	s.Publish("rebuild", map[string]any{"id": j.ID, "state": "started"})
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		// The rebuild outlives the request; the server's Close ends it.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-s.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		res, err := s.h.Rebuild(ctx, host.RebuildRequest{})
		s.jobsMu.Lock()
		j.Completed = true
		if err != nil {
			we := toWire(err)
			j.Error = &we
		} else {
			j.sync = &res
			j.Result = &rebuildResult{FilesScanned: res.Scanned, FilesChanged: res.Indexed, ChunksCreated: res.Chunks, DurationMs: res.DurationMs, Sync: &res}
		}
		snapshot := *j
		s.jobsMu.Unlock()
		close(j.done)
		s.Publish("rebuild", map[string]any{"id": j.ID, "state": "completed", "job": snapshot})
	}()
	writeJSON(w, http.StatusAccepted, map[string]any{
		"started": true, "id": j.ID, "message": "Full rebuild initiated",
		"poll": "/api/debug/memory/rebuild/" + j.ID, "events": "/api/debug/memory/rebuild/" + j.ID + "/events",
	})
}

func (s *Server) job(w http.ResponseWriter, r *http.Request) (*job, bool) {
	s.jobsMu.Lock()
	j, ok := s.jobs[r.PathValue("id")]
	s.jobsMu.Unlock()
	if !ok {
		writeError(w, fault.Errorf(fault.NotFound, "id", "no rebuild %q", r.PathValue("id")))
	}
	return j, ok
}

// debugRebuildJob is GET /api/debug/memory/rebuild/{id}; ?wait=1 holds the
// answer until the rebuild ends (long poll, at most 60 s).
func (s *Server) debugRebuildJob(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	if r.URL.Query().Get("wait") != "" {
		select {
		case <-j.done:
		case <-time.After(60 * time.Second):
		case <-r.Context().Done():
			return
		}
	}
	s.jobsMu.Lock()
	snapshot := *j
	s.jobsMu.Unlock()
	writeJSON(w, http.StatusOK, snapshot)
}

// debugRebuildEvents streams one rebuild: a "progress" event every second
// while it runs (elapsed time), then "completed" with the job.
func (s *Server) debugRebuildEvents(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(typ string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		if fl != nil {
			fl.Flush()
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-j.done:
			s.jobsMu.Lock()
			snapshot := *j
			s.jobsMu.Unlock()
			send("completed", snapshot)
			return
		case <-tick.C:
			send("progress", map[string]any{"id": j.ID, "state": "running", "elapsedMs": time.Since(j.Started).Milliseconds()})
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
}

// debugSimulateCompaction is POST /api/debug/memory/simulate-compaction
// {"session": ID}: the pre-compaction flush check, as if the session's
// next message brought it to the flush threshold. The answer is the
// check's (flushDue, prompt); the flush is recorded as a real one is.
func (s *Server) debugSimulateCompaction(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Session string `json:"session"`
	}
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	tok, err := s.h.SessionTokens(r.Context(), host.SessionTokensRequest{Session: req.Session})
	if err != nil {
		writeError(w, err)
		return
	}
	c := s.h.Config().Memory.Compaction
	flushAt := c.ContextWindow - c.ReserveTokens - c.SoftThresholdTokens
	resp, err := s.h.SessionCheck(r.Context(), host.SessionCheckRequest{Session: req.Session, Incoming: max(0, flushAt-tok.Tokens)})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// debugInjectTurn is POST /api/debug/brain/inject-turn {"session", "role",
// "content"}: appends a turn and answers once it is stored and indexed.
// Without a session the turn goes to session "debug".
func (s *Server) debugInjectTurn(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Session string          `json:"session"`
		Role    string          `json:"role"`
		Content string          `json:"content"`
		Meta    json.RawMessage `json:"meta,omitempty"`
	}
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Session == "" {
		req.Session = "debug"
	}
	resp, err := s.h.SessionAppend(r.Context(), host.SessionAppendRequest{Session: req.Session, Role: req.Role, Text: req.Content, Meta: req.Meta})
	if err != nil {
		writeError(w, renameField(err, "text", "content"))
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// debugPages is GET /api/debug/notebook/pages: every page with its size,
// time and index state (sessions are not pages).
func (s *Server) debugPages(w http.ResponseWriter, r *http.Request) {
	resp, err := s.h.Files(r.Context(), host.FilesRequest{})
	if err != nil {
		writeError(w, err)
		return
	}
	pages := make([]host.FileInfo, 0, len(resp.Files))
	for _, f := range resp.Files {
		if f.State != "deleted" && !strings.HasPrefix(f.Path, "sessions/") {
			pages = append(pages, f)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"pages": pages})
}

// debugGetPage is GET /api/debug/notebook/{path}: {"path", "content",
// "totalLines"}.
func (s *Server) debugGetPage(w http.ResponseWriter, r *http.Request) {
	resp, err := s.h.Get(r.Context(), host.GetRequest{Path: r.PathValue("path")})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": resp.Path, "content": resp.Text, "totalLines": resp.TotalLines})
}

// debugWritePage is POST /api/debug/notebook/{path} {"content"}: replaces
// the page (creating it), indexed before the answer.
func (s *Server) debugWritePage(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content string `json:"content"`
	}
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	resp, err := s.h.Write(r.Context(), host.WriteRequest{Path: r.PathValue("path"), Text: req.Content, Replace: true})
	if err != nil {
		writeError(w, renameField(err, "text", "content"))
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// debugDeletePage is DELETE /api/debug/notebook/{path}.
func (s *Server) debugDeletePage(w http.ResponseWriter, r *http.Request) {
	resp, err := s.h.Remove(r.Context(), host.RemoveRequest{Path: r.PathValue("path")})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

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
	var req host.PullModelRequest
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if overTCP(r) && !modelName.MatchString(req.Model) && !strings.HasPrefix(req.Model, "https://") && !strings.HasPrefix(req.Model, "http://") {
		writeError(w, refuseFiles()) // a path on the server's disk
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
		line(errorBody{toWire(err)})
		return
	}
	line(map[string]any{"result": resp})
}

// renameField gives an error about the host request's field from the name
// the debug request calls it (the seed's "content" is the host's "text").
func renameField(err error, from, to string) error {
	if fault.FieldOf(err) != from {
		return err
	}
	return &fault.Error{Kind: fault.KindOf(err), Field: to, Message: err.Error(), Err: err}
}
