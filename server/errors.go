package server

import "github.com/memhost/memhost/server/wire"

// Kinds of errors the API adds to fault's; they travel in the same shape
// (package wire).
const (
	// KindUnauthorized: a request without the bearer token (401).
	KindUnauthorized = wire.KindUnauthorized
	// KindTooLarge: a request body over the limit (413).
	KindTooLarge = wire.KindTooLarge
)

// The API's wire form (package wire), by the names this package's
// handlers and client use.
type (
	wireError = wire.Error
	errorBody = wire.Body
)

var (
	toWire     = wire.Of
	writeError = wire.WriteError
	writeJSON  = wire.WriteJSON
)

// fromWire is the error a client returns for a wire error (wire.Error.Err).
func fromWire(w wireError) error { return w.Err() }
