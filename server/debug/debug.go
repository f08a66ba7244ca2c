package debug

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/host/requests"
	"github.com/memhost/memhost/internal/version"
	"github.com/memhost/memhost/server/dashboard/pagehtml"
)

// Deps is what the debug API needs of the server that mounts it.
type Deps struct {
	Host *host.Host
	// WriteJSON and WriteError answer as the rest of the API does.
	WriteJSON  func(w http.ResponseWriter, status int, v any)
	WriteError func(w http.ResponseWriter, err error)
	// Wire is an error as a JSON body's "error" carries it.
	Wire func(err error) any
	// Decode reads a request's JSON body within the server's limits.
	Decode func(w http.ResponseWriter, r *http.Request, v any) error
	// Publish sends an event to the server's event stream.
	Publish func(typ string, data any)
	// Closing is closed when the server closes: rebuilds are cancelled
	// and rebuild event streams end.
	Closing <-chan struct{}
	// Background counts the rebuilds, which outlive their request.
	Background *sync.WaitGroup
	// Watcher reports whether the watcher runs; nil: it does not.
	Watcher func() bool
	// LastSyncMs is the duration of the last sync the watcher ran, if any.
	LastSyncMs func() (float64, bool)
}

// API is the debug endpoints of one server, with the rebuilds started
// through them.
type API struct {
	d Deps

	mu     sync.Mutex
	jobs   map[string]*Job
	nextID int
}

// New returns the debug API over d.
func New(d Deps) *API { return &API{d: d, jobs: map[string]*Job{}} }

// The debug API answers in the JSON shapes of docs/api.md, "The debug
// API". Where a shape names a field memhost has no figure for, the field
// is left out rather than filled with a guess (docs/api.md says which).

// Status is GET /api/debug/memory/status.
func (a *API) Status(w http.ResponseWriter, r *http.Request) {
	st, err := a.d.Host.Status(r.Context(), memhost.StatusRequest{})
	if err != nil {
		a.d.WriteError(w, err)
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
	if a.d.Watcher != nil {
		out.WatcherActive = a.d.Watcher()
	}
	if d, ok := a.d.LastSyncMs(); ok {
		out.LastSyncDuration = &d
	}
	a.d.WriteJSON(w, http.StatusOK, out)
}

// SeedResult is a search result in the debug API's shape (docs/api.md,
// "GET /api/debug/memory/search").
type SeedResult struct {
	FilePath string        `json:"filePath"`
	Heading  *string       `json:"heading"`
	Snippet  string        `json:"snippet"`
	Score    float64       `json:"score"`
	Lines    memhost.Lines `json:"lines"`
	Session  string        `json:"session,omitempty"`
	Turns    []string      `json:"turns,omitempty"`
}

func seedResults(rs []memhost.Result) []SeedResult {
	out := make([]SeedResult, 0, len(rs))
	for _, r := range rs {
		sr := SeedResult{FilePath: r.Path, Snippet: r.Snippet, Score: r.Score, Lines: r.Lines, Session: r.Session, Turns: r.Turns}
		if r.Heading != "" {
			h := r.Heading
			sr.Heading = &h
		}
		out = append(out, sr)
	}
	return out
}

// Search is GET /api/debug/memory/search?q=&sources=&maxResults=&minScore=.
// Without sources every group is searched.
func (a *API) Search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := memhost.RecallRequest{Query: q.Get("q"), Sources: host.Sources}
	if v := q.Get("sources"); v != "" {
		req.Sources = nil
		for _, src := range strings.Split(v, ",") {
			req.Sources = append(req.Sources, strings.TrimSpace(src))
		}
	}
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			a.d.WriteError(w, fault.BadInputf("maxResults", "maxResults %q is not a whole number", v))
			return
		}
		req.MaxResults = n
	}
	if v := q.Get("minScore"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			a.d.WriteError(w, fault.BadInputf("minScore", "minScore %q is not a number", v))
			return
		}
		req.MinScore = &f
	}
	resp, err := a.d.Host.Recall(r.Context(), req)
	if err != nil {
		a.d.WriteError(w, err)
		return
	}
	a.d.WriteJSON(w, http.StatusOK, map[string]any{
		"query": resp.Query, "mode": resp.Mode, "reason": resp.Reason,
		"results": map[string][]SeedResult{
			"notebook": seedResults(resp.Results.Notebook),
			"daily":    seedResults(resp.Results.Daily),
			"sessions": seedResults(resp.Results.Sessions),
		},
		"timing": resp.Timing,
	})
}

// Files is GET /api/debug/memory/files.
func (a *API) Files(w http.ResponseWriter, r *http.Request) {
	resp, err := a.d.Host.Files(r.Context(), memhost.FilesRequest{})
	if err != nil {
		a.d.WriteError(w, err)
		return
	}
	a.d.WriteJSON(w, http.StatusOK, resp)
}

// Job is a rebuild started through the debug API.
type Job struct {
	ID        string              `json:"id"`
	Started   time.Time           `json:"started"`
	Completed bool                `json:"completed"`
	Result    *RebuildResult      `json:"result,omitempty"`
	Error     any                 `json:"error,omitempty"` // Deps.Wire's form of the error
	done      chan struct{}       // closed when the rebuild ends
	sync      *memhost.SyncResult // memhost's own figures
}

// RebuildResult is the debug API's rebuild result plus memhost's SyncResult.
// Vectors are not computed by the rebuild itself (the embedding worker
// fills them afterwards, mostly from the cache), so embeddingsComputed is
// not reported.
type RebuildResult struct {
	FilesScanned  int                 `json:"filesScanned"`
	FilesChanged  int                 `json:"filesChanged"`
	ChunksCreated int                 `json:"chunksCreated"`
	DurationMs    float64             `json:"durationMs"`
	Sync          *memhost.SyncResult `json:"sync"`
}

// keptJobs is how many finished rebuilds can still be polled.
const keptJobs = 20

// Rebuild is POST /api/debug/memory/rebuild: starts a rebuild and
// answers at once (202) with its id; GET .../rebuild/{id} polls it and
// .../rebuild/{id}/events streams it.
func (a *API) Rebuild(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	for _, other := range a.jobs {
		if !other.Completed {
			a.mu.Unlock()
			a.d.WriteError(w, fault.Errorf(fault.Conflict, "", "rebuild %s is running; poll /api/debug/memory/rebuild/%s", other.ID, other.ID))
			return
		}
	}
	a.nextID++
	j := &Job{ID: "rebuild-" + strconv.Itoa(a.nextID), Started: time.Now().UTC(), done: make(chan struct{})}
	a.jobs[j.ID] = j
	delete(a.jobs, "rebuild-"+strconv.Itoa(a.nextID-keptJobs)) // the oldest kept
	a.mu.Unlock()
	a.d.Publish("rebuild", map[string]any{"id": j.ID, "state": "started"})
	a.d.Background.Add(1)
	go func() {
		defer a.d.Background.Done()
		// The rebuild outlives the request; the server's Close ends it.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-a.d.Closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		res, err := a.d.Host.Rebuild(ctx, memhost.RebuildRequest{})
		a.mu.Lock()
		j.Completed = true
		if err != nil {
			j.Error = a.d.Wire(err)
		} else {
			j.sync = &res
			j.Result = &RebuildResult{FilesScanned: res.Scanned, FilesChanged: res.Indexed, ChunksCreated: res.Chunks, DurationMs: res.DurationMs, Sync: &res}
		}
		snapshot := *j
		a.mu.Unlock()
		close(j.done)
		a.d.Publish("rebuild", map[string]any{"id": j.ID, "state": "completed", "job": snapshot})
	}()
	a.d.WriteJSON(w, http.StatusAccepted, map[string]any{
		"started": true, "id": j.ID, "message": "Full rebuild initiated",
		"poll": "/api/debug/memory/rebuild/" + j.ID, "events": "/api/debug/memory/rebuild/" + j.ID + "/events",
	})
}

func (a *API) lookup(w http.ResponseWriter, r *http.Request) (*Job, bool) {
	a.mu.Lock()
	j, ok := a.jobs[r.PathValue("id")]
	a.mu.Unlock()
	if !ok {
		a.d.WriteError(w, fault.Errorf(fault.NotFound, "id", "no rebuild %q", r.PathValue("id")))
	}
	return j, ok
}

// RebuildJob is GET /api/debug/memory/rebuild/{id}; ?wait=1 holds the
// answer until the rebuild ends (long poll, at most 60 s).
func (a *API) RebuildJob(w http.ResponseWriter, r *http.Request) {
	j, ok := a.lookup(w, r)
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
	a.mu.Lock()
	snapshot := *j
	a.mu.Unlock()
	a.d.WriteJSON(w, http.StatusOK, snapshot)
}

// RebuildEvents streams one rebuild: a "progress" event every second
// while it runs (elapsed time), then "completed" with the job.
func (a *API) RebuildEvents(w http.ResponseWriter, r *http.Request) {
	j, ok := a.lookup(w, r)
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
			a.mu.Lock()
			snapshot := *j
			a.mu.Unlock()
			send("completed", snapshot)
			return
		case <-tick.C:
			send("progress", map[string]any{"id": j.ID, "state": "running", "elapsedMs": time.Since(j.Started).Milliseconds()})
		case <-r.Context().Done():
			return
		case <-a.d.Closing:
			return
		}
	}
}

// SimulateCompaction is POST /api/debug/memory/simulate-compaction
// {"session": ID}: the pre-compaction flush check, as if the session's
// next message brought it to the flush threshold. The answer is the
// check's (flushDue, prompt); the flush is recorded as a real one is.
func (a *API) SimulateCompaction(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Session string `json:"session"`
	}
	if err := a.d.Decode(w, r, &req); err != nil {
		a.d.WriteError(w, err)
		return
	}
	tok, err := a.d.Host.SessionTokens(r.Context(), memhost.SessionTokensRequest{Session: req.Session})
	if err != nil {
		a.d.WriteError(w, err)
		return
	}
	c := a.d.Host.Config().Memory.Compaction
	flushAt := c.ContextWindow - c.ReserveTokens - c.SoftThresholdTokens
	resp, err := a.d.Host.SessionCheck(r.Context(), memhost.SessionCheckRequest{Session: req.Session, Incoming: max(0, flushAt-tok.Tokens)})
	if err != nil {
		a.d.WriteError(w, err)
		return
	}
	a.d.WriteJSON(w, http.StatusOK, resp)
}

// InjectTurn is POST /api/debug/brain/inject-turn {"session", "role",
// "content", "requestId"}: appends a turn and answers once it is stored
// and indexed. Without a session the turn goes to session "debug". The
// request id, as every write's, makes a retry write nothing: it is the
// turn's id, and session append returns the turn of that id when the
// transcript's last turns hold it.
func (a *API) InjectTurn(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Session   string          `json:"session"`
		Role      string          `json:"role"`
		Content   string          `json:"content"`
		Meta      json.RawMessage `json:"meta,omitempty"`
		RequestID string          `json:"requestId,omitempty"`
	}
	if err := a.d.Decode(w, r, &req); err != nil {
		a.d.WriteError(w, err)
		return
	}
	if req.Session == "" {
		req.Session = "debug"
	}
	if req.RequestID != "" {
		if err := requests.CheckID(req.RequestID); err != nil {
			a.d.WriteError(w, fault.BadInputf("requestId", "%v", err))
			return
		}
	}
	resp, err := a.d.Host.SessionAppend(r.Context(), memhost.SessionAppendRequest{ID: req.RequestID, Session: req.Session, Role: req.Role, Text: req.Content, Meta: req.Meta})
	if err != nil {
		a.d.WriteError(w, renameField(renameField(err, "text", "content"), "id", "requestId"))
		return
	}
	a.d.WriteJSON(w, http.StatusOK, resp)
}

// Pages is GET /api/debug/notebook/pages: every page with its size,
// time and index state (sessions are not pages).
func (a *API) Pages(w http.ResponseWriter, r *http.Request) {
	resp, err := a.d.Host.Files(r.Context(), memhost.FilesRequest{})
	if err != nil {
		a.d.WriteError(w, err)
		return
	}
	pages := make([]memhost.FileInfo, 0, len(resp.Files))
	for _, f := range resp.Files {
		if f.State != "deleted" && !strings.HasPrefix(f.Path, "sessions/") {
			pages = append(pages, f)
		}
	}
	a.d.WriteJSON(w, http.StatusOK, map[string]any{"pages": pages})
}

// GetPage is GET /api/debug/notebook/{path}: {"path", "content",
// "totalLines"}, as `memhost get` reads it. A GET is what any page could
// once make a browser send, many at once, with images: it reads at most
// what the dashboard shows of a page (pagehtml.MaxRenderBytes), never the
// whole of a larger one, which answers its start with "truncated" and
// "sizeBytes" instead of "totalLines" (the lines of the rest are not read).
func (a *API) GetPage(w http.ResponseWriter, r *http.Request) {
	p, err := a.d.Host.Page(r.Context(), memhost.PageRequest{Path: r.PathValue("path"), MaxBytes: pagehtml.MaxRenderBytes})
	if err != nil {
		a.d.WriteError(w, err)
		return
	}
	if p.Truncated {
		a.d.WriteJSON(w, http.StatusOK, map[string]any{"path": p.Path, "content": p.Text, "truncated": true, "sizeBytes": p.SizeBytes})
		return
	}
	lines := markdown.Lines(p.Text) // as Host.Get gives them
	content := ""
	if len(lines) > 0 {
		content = strings.Join(lines, "\n") + "\n"
	}
	a.d.WriteJSON(w, http.StatusOK, map[string]any{"path": p.Path, "content": content, "totalLines": len(lines)})
}

// WritePage is POST /api/debug/notebook/{path} {"content"}: replaces
// the page (creating it), indexed before the answer.
func (a *API) WritePage(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content string `json:"content"`
	}
	if err := a.d.Decode(w, r, &req); err != nil {
		a.d.WriteError(w, err)
		return
	}
	resp, err := a.d.Host.Write(r.Context(), memhost.WriteRequest{Path: r.PathValue("path"), Text: req.Content, Replace: true})
	if err != nil {
		a.d.WriteError(w, renameField(err, "text", "content"))
		return
	}
	a.d.WriteJSON(w, http.StatusOK, resp)
}

// DeletePage is DELETE /api/debug/notebook/{path}.
func (a *API) DeletePage(w http.ResponseWriter, r *http.Request) {
	resp, err := a.d.Host.Remove(r.Context(), memhost.RemoveRequest{Path: r.PathValue("path")})
	if err != nil {
		a.d.WriteError(w, err)
		return
	}
	a.d.WriteJSON(w, http.StatusOK, resp)
}

// renameField gives an error about the host request's field from the name
// the debug request calls it (the debug API's "content" is the host's
// "text").
func renameField(err error, from, to string) error {
	if fault.FieldOf(err) != from {
		return err
	}
	return &fault.Error{Kind: fault.KindOf(err), Field: to, Message: err.Error(), Err: err}
}
