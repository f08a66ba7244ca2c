// Package debug holds the debug and admin endpoints (/api/debug/...;
// docs/api.md, "The debug API") and the rebuild jobs started through
// them. It reaches the server only through Deps (the host, how to answer
// and decode, the event stream, the server's lifecycle), so it may import
// host and its sub-packages, never server.
package debug
