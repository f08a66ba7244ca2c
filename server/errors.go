package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/host/notebook"
)

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

// wireError is an error as the API sends it:
// {"error": {"kind": "not-found", "field": "path", "message": "...", "path": "reference/x.md"}}.
// Path is set for errors about one notebook page; Message is then the
// reason alone ("page not found"). Missing is set for prune's refusal
// (a *host.RollupsMissingError): the logs no rollup holds.
type wireError struct {
	Kind    fault.Kind        `json:"kind"`
	Field   string            `json:"field,omitempty"`
	Message string            `json:"message"`
	Path    string            `json:"path,omitempty"`
	Missing []host.MissingLog `json:"missing,omitempty"`
}

type errorBody struct {
	Error wireError `json:"error"`
}

// toWire turns an error into its wire form.
func toWire(err error) wireError {
	w := wireError{Kind: fault.KindOf(err), Field: fault.FieldOf(err), Message: err.Error()}
	var pe *notebook.PathError
	if errors.As(err, &pe) {
		w.Path, w.Message = pe.Path, pe.Err.Error()
	}
	var rm *host.RollupsMissingError
	if errors.As(err, &rm) {
		w.Missing = rm.Missing
	}
	return w
}

// fromWire is the error a client returns for a wire error: a *fault.Error
// of the same kind, field and message, inside a *notebook.PathError when
// it names a page, around a *host.RollupsMissingError when it lists logs
// no rollup holds, so that callers word it as they word local errors.
func fromWire(w wireError) error {
	fe := &fault.Error{Kind: w.Kind, Field: w.Field, Message: w.Message}
	if len(w.Missing) > 0 {
		fe.Err = &host.RollupsMissingError{Missing: w.Missing}
	}
	err := error(fe)
	if w.Path != "" {
		err = &notebook.PathError{Path: w.Path, Err: err}
	}
	return err
}

// writeError sends err with its kind's status.
func writeError(w http.ResponseWriter, err error) {
	we := toWire(err)
	status, ok := statusOf[we.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="memhost"`)
	}
	writeJSON(w, status, errorBody{we})
}

// writeJSON sends v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}
