// Package wire is the HTTP API's wire form of errors and answers: the
// status of each error kind, the {"error": ...} body, and JSON responses,
// for the server to send and its clients to read back. It may import host
// and fault, host/notebook; nothing of server.
package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/internal/clock"
)

// VersionHeader carries the build of the client (request) and the server
// (response); server.VersionHeader says what a server does with it.
const VersionHeader = "Memhost-Version"

// statusOf is the HTTP status of each error kind: the one table.
var statusOf = map[fault.Kind]int{
	fault.BadInput:    http.StatusBadRequest,
	fault.NotFound:    http.StatusNotFound,
	fault.Outside:     http.StatusForbidden,
	fault.Conflict:    http.StatusConflict,
	fault.Unavailable: http.StatusServiceUnavailable,
	fault.Canceled:    499, // the client closed the request (nginx's code); it reads nothing
	fault.Timeout:     http.StatusGatewayTimeout,
	fault.Internal:    http.StatusInternalServerError,
}

// Kinds of errors the API adds to fault's; they travel in the same shape.
const (
	// KindUnauthorized: a request without the bearer token (401).
	KindUnauthorized fault.Kind = "unauthorized"
	// KindTooLarge: a request body over the limit (413).
	KindTooLarge fault.Kind = "too-large"
)

func init() {
	statusOf[KindUnauthorized] = http.StatusUnauthorized
	statusOf[KindTooLarge] = http.StatusRequestEntityTooLarge
}

// Error is an error as the API sends it:
// {"error": {"kind": "not-found", "field": "path", "message": "...", "path": "reference/x.md"}}.
// Path is set for errors about one notebook page; Message is then the
// reason alone ("page not found"). Missing is set for prune's refusal
// (a *memhost.RollupsMissingError): the logs no rollup holds.
type Error struct {
	Kind    fault.Kind           `json:"kind"`
	Field   string               `json:"field,omitempty"`
	Message string               `json:"message"`
	Path    string               `json:"path,omitempty"`
	Missing []memhost.MissingLog `json:"missing,omitempty"`
}

// Body is an error answer's body.
type Body struct {
	Error Error `json:"error"`
}

// Of turns an error into its wire form.
func Of(err error) Error {
	w := Error{Kind: fault.KindOf(err), Field: fault.FieldOf(err), Message: err.Error()}
	var pe *notebook.PathError
	if errors.As(err, &pe) {
		w.Path, w.Message = pe.Path, pe.Err.Error()
	}
	var rm *memhost.RollupsMissingError
	if errors.As(err, &rm) {
		w.Missing = rm.Missing
	}
	return w
}

// Err is the error a client returns for a wire error: a *fault.Error
// of the same kind, field and message, inside a *notebook.PathError when
// it names a page, around a *memhost.RollupsMissingError when it lists logs
// no rollup holds, so that callers word it as they word local errors.
func (w Error) Err() error {
	fe := &fault.Error{Kind: w.Kind, Field: w.Field, Message: w.Message}
	if len(w.Missing) > 0 {
		fe.Err = &memhost.RollupsMissingError{Missing: w.Missing}
	}
	err := error(fe)
	if w.Path != "" {
		err = &notebook.PathError{Path: w.Path, Err: err}
	}
	return err
}

// Status is the HTTP status of an error kind; ok is false for a kind
// the API does not know.
func Status(k fault.Kind) (status int, ok bool) {
	status, ok = statusOf[k]
	return status, ok
}

// WriteError sends err with its kind's status.
func WriteError(w http.ResponseWriter, err error) {
	we := Of(err)
	status, ok := statusOf[we.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="memhost"`)
	}
	WriteJSON(w, status, Body{we})
}

// WriteJSON sends v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// Event is one server-sent event: its type ("ready" first, then "sync",
// "git-sync", "embed", "write", "rebuild", "lagged") and JSON data.
type Event struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// EnvOverrides is what a process's environment changes in how a command
// runs: the configuration's overrides (config.Overrides), the time zone
// (TZ, the daily log's when config.yaml names none) and the calendar
// clock's offset (internal/clock: a test run's day).
func EnvOverrides(getenv func(string) string) []string {
	var out []string
	for _, o := range config.Overrides(getenv) {
		// The server block changes how a server runs, not what it answers.
		if !strings.HasPrefix(o, "MEMHOST_SERVER_") {
			out = append(out, o)
		}
	}
	return append(out, "TZ="+getenv("TZ"), clock.EnvOffset+"="+getenv(clock.EnvOffset))
}

// EnvFingerprint is a short hash of EnvOverrides.
func EnvFingerprint(overrides []string) string {
	sum := sha256.Sum256([]byte(strings.Join(overrides, "\n")))
	return hex.EncodeToString(sum[:8])
}

// FedSyncBody is the answer of a sync that failed after it began: the
// error, and under "sync" what the sync did before it (a merge that
// stands, files re-indexed, the push error).
type FedSyncBody struct {
	Error Error                    `json:"error"`
	Sync  *memhost.FedSyncResponse `json:"sync,omitempty"`
}

// EnvHeader carries a fingerprint of the client's configuration overrides
// from the environment (EnvFingerprint). A request whose fingerprint
// differs from the server's is refused with a conflict on field "env": the
// server would read config.yaml differently than the client does, so the
// client runs the command itself.
const EnvHeader = "Memhost-Env"
