package server

import (
	"net/http"

	"github.com/memhost/memhost/server/bodylimit"
)

// DefaultMaxBodies bounds the bytes of the request bodies all requests in
// flight hold together: two bodies of DefaultMaxBody. A request holds
// about three times its body at its peak (the bytes read, the decoded
// text, the page written), so that the server's memory for bodies stays
// under a GB however many large writes arrive at once (8 concurrent
// 79 MB writes held 2.8 GB).
const DefaultMaxBodies = 2 * DefaultMaxBody

// bodies is the room of the request bodies in flight (package bodylimit).
type bodies = bodylimit.Room

var newBodies = bodylimit.New

// limitBodies bounds the request bodies in flight (Options.MaxBodies) and
// each body (Options.MaxBody): bodylimit.Limit.
func (s *Server) limitBodies(next http.Handler) http.Handler {
	return bodylimit.Limit(next, s.opts.MaxBody, s.bodies)
}
