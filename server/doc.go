// Package server is `memhost serve`: the long-lived owner of one home. It
// holds the index as its single writer, the embeddings plugin warm, the
// watcher on the notebook and sessions folders and the embedding worker,
// and answers the HTTP API on a unix socket in the home (mode 0600) and on
// TCP (127.0.0.1:4321 by default).
//
// The API has three parts, every route listed in routes.go and documented
// with curl examples in docs/api.md:
//
//   - /api/v1/<operation>: one POST endpoint per host operation, the
//     request and response being the host's XRequest and XResponse as
//     JSON. The CLI forwards every command through these (Client).
//   - /api/debug/...: debug and admin endpoints for the dashboard and
//     end-to-end tests (package server/debug).
//   - /api/v1/events: server-sent events (syncs, embedding runs, page
//     writes, rebuilds).
//
// Errors are {"error": {"kind", "field", "message"}} with the status code
// of the kind (package server/wire). Auth (package server/auth): the socket and loopback TCP
// need no token; any other address needs a bearer token; TCP refuses what
// a page of another origin makes a browser send (fetch metadata).
//
// The dashboard is package server/dashboard, its page rendering
// server/dashboard/pagehtml. Imports flow down: server imports its
// sub-packages, none of them imports server.
//
// Files in the home's brain/ folder: serve.lock (held while a server
// runs: one per home), serve.json (its pid, version and addresses),
// serve.sock, serve.log (with --detach), serve.token (made when needed).
package server
