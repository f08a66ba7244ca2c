package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/memhost/memhost/api"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/internal/jsoncheck"
	"github.com/memhost/memhost/internal/version"
	"github.com/memhost/memhost/server/bodylimit"
	"github.com/memhost/memhost/server/debug"
	"github.com/memhost/memhost/server/wire"
)

// DefaultMaxBody bounds a request body: the CLI sends up to 64 MB of text
// (what it reads from stdin), which JSON's escaping of quotes and
// backslashes can double. (Text made of control characters, escaped six
// bytes for one, can still exceed it.)
const DefaultMaxBody = 2*64<<20 + 1<<20

// VersionHeader carries the build of the client (request) and the server
// (response). A request whose version differs from the server's is refused
// with a conflict on field "version"; requests without one (curl) are
// served.
const VersionHeader = wire.VersionHeader

// EnvHeader: see wire.EnvHeader.
const EnvHeader = wire.EnvHeader

// EnvOverrides and EnvFingerprint: see package wire.
var (
	EnvOverrides   = wire.EnvOverrides
	EnvFingerprint = wire.EnvFingerprint
)

// ErrEnvDiffers means the server reads its configuration with other
// environment overrides than the client (see EnvHeader).
var ErrEnvDiffers = &fault.Error{Kind: fault.Conflict, Field: "env", Message: "the server's environment overrides config.yaml differently"}

// Options configure a Server.
type Options struct {
	// Log receives request failures; nil discards them.
	Log *slog.Logger
	// MaxBody bounds request bodies; 0 means DefaultMaxBody.
	MaxBody int64
	// MaxBodies bounds the bytes of the bodies of all requests in flight
	// (package bodylimit); 0 means DefaultMaxBodies, and less than MaxBody means
	// MaxBody.
	MaxBodies int64
	// Info describes the running server for GET /api/v1/server; nil
	// answers with the version alone (a Server used without Run).
	Info func() Info
	// Stop, when set, is called by POST /api/v1/server/stop.
	Stop func()
	// Env is the server's EnvFingerprint; "" accepts any client's.
	Env string
	// AfterWrite, when set, is called after each write operation that
	// succeeded, whoever called it, before its answer is sent: the crash
	// harness kills the server there (MEMHOST_CRASH_AFTER_WRITE).
	AfterWrite func(op string)
}

// Server is the HTTP API over one open Host. Use Handler for the routes
// (tests mount it on httptest servers); Run adds the listeners, the lock
// and the watcher.
type Server struct {
	h       *host.Host
	opts    Options
	log     *slog.Logger
	events  *hub
	closing chan struct{} // closed by Close: event streams end
	once    sync.Once

	requests   atomic.Int64 // served, for Info
	inflight   atomic.Int64 // requests running now (an event stream, an MCP session's, a relayed command): a server started on demand is not idle while one runs
	lastSyncMs atomic.Value // float64: the duration of the last sync the watcher ran

	background sync.WaitGroup // work that outlives its request (rebuilds)

	bodies *bodies // the room of request bodies in flight (body.go)

	mcp http.Handler // /mcp (RunOptions.MCP); nil: none

	debugOnce sync.Once
	debug     *debug.API // the debug endpoints (debugAPI)

	healthMu  sync.Mutex
	healthCur *healthRun // GET /api/health's check running (health.go); nil when none
	// healthCheck and healthJoined are tests' hooks: the check (nil:
	// Host.Health without history) and what is called when a GET joins
	// the check running.
	healthCheck  func(context.Context) (memhost.HealthResponse, error)
	healthJoined func()
}

// The host runs every operation of the table.
var _ api.API = (*host.Host)(nil)

// New returns the Server of h; h stays the caller's to close.
func New(h *host.Host, opts Options) *Server {
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.MaxBody == 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxBodies == 0 {
		opts.MaxBodies = DefaultMaxBodies
	}
	opts.MaxBodies = max(opts.MaxBodies, opts.MaxBody)
	s := &Server{h: h, opts: opts, log: opts.Log, events: newHub(), closing: make(chan struct{}), bodies: newBodies(opts.MaxBodies)}
	// Every write on h, whoever makes it (the API, a relayed command, an
	// MCP tool), is a "write" event.
	h.Subscribe(func(c memhost.Change) {
		s.Publish("write", writeEvent{Op: c.Op, Result: c.Result, Paths: c.Paths, Removed: c.Removed})
		if s.opts.AfterWrite != nil {
			s.opts.AfterWrite(c.Op)
		}
	})
	return s
}

// Close ends the event streams and cancels background work (a rebuild
// started through the debug API), so that an http.Server's Shutdown does
// not wait for them. It does not close the Host: Wait first.
func (s *Server) Close() { s.once.Do(func() { close(s.closing) }) }

// Wait waits for the background work Close cancelled to end.
func (s *Server) Wait() { s.background.Wait() }

// Publish sends an event to every /api/v1/events stream.
func (s *Server) Publish(typ string, data any) { s.events.publish(typ, data) }

// decode reads a JSON request body into v: at most MaxBody bytes, no
// unknown fields, nothing after the value. An empty body is an empty
// request.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	// With a Content-Length (limitBodies checked it) the buffer is made
	// once: growing it would hold up to twice the body.
	buf := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+bytes.MinRead))
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	body := buf.Bytes()
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return bodylimit.TooLarge(tooBig.Limit)
	case errors.Is(err, bodylimit.ErrFull):
		return bodylimit.Refused()
	case err != nil:
		return fault.Errorf(fault.Canceled, "", "reading the request: %w", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	// encoding/json replaces invalid UTF-8 by U+FFFD without a word: the
	// host would store what the caller did not send.
	if !utf8.Valid(body) {
		return fault.BadInputf("", "request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return fault.BadInputf("", "request body holds more than one JSON value")
	}
	// encoding/json turns a lone surrogate escape ("\ud800") into U+FFFD
	// as well: broken text written another way, refused as invalid UTF-8 is.
	if s := jsoncheck.Find(body); s != nil {
		return fault.BadInputf(s.Field(), "%v", s)
	}
	return nil
}

// jsonError words a decoding error with the field it is about.
func jsonError(err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		return fault.BadInputf("", "request body is not valid JSON at byte %d: %v", syn.Offset, err)
	case errors.As(err, &typ):
		return fault.BadInputf(typ.Field, "field %q: expected %s, got a JSON %s", typ.Field, typ.Type, typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fault.BadInputf("", "request body ends in the middle of its JSON")
	}
	// encoding/json has no error type for an unknown field: its message
	// is the only way to name the field.
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		f = strings.Trim(f, `"`)
		return fault.BadInputf(f, "unknown field %q", f)
	}
	return fault.BadInputf("", "request body: %v", err)
}

// op serves one host operation: JSON request in, JSON response out.
func op[Req, Resp any](s *Server, fn func(context.Context, Req) (Resp, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := s.decode(w, r, &req); err != nil {
			writeError(w, err)
			return
		}
		resp, err := fn(r.Context(), req)
		if err != nil {
			s.failed(r, err)
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	}
}

// route serves one operation of the table on the server's Host.
func (s *Server) route(o api.Operation) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		resp, err := o.Call(r.Context(), s.h, func(req any) error { return s.decode(w, r, req) })
		if err != nil {
			s.failed(r, err)
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	}
}

// failed logs an internal error (a request's bad input is the client's
// business, not the log's).
func (s *Server) failed(r *http.Request, err error) {
	if k := fault.KindOf(err); k == fault.Internal || k == fault.Unavailable {
		s.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	in := Info{Version: version.String(), Home: s.h.Home(), Notebook: s.h.NotebookDir()}
	if s.opts.Info != nil {
		in = s.opts.Info()
		in.UptimeS = time.Since(in.Started).Round(time.Millisecond).Seconds()
	}
	in.Requests = s.requests.Load()
	writeJSON(w, http.StatusOK, in)
}

func (s *Server) stop(w http.ResponseWriter, r *http.Request) {
	if s.opts.Stop == nil {
		writeError(w, &fault.Error{Kind: fault.Unavailable, Message: "this server cannot be stopped through the API"})
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]bool{"stopping": true})
	s.opts.Stop()
}
