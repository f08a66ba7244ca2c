package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost/internal/jsoncheck"
	"github.com/memhost/memhost/mcp"
)

// refuseLoneSurrogate answers a POST to /mcp whose JSON holds a lone
// surrogate escape ("\ud800") with JSON-RPC's error, as memhost mcp does
// on stdio, and reports whether it did: the SDK decodes the escape as
// U+FFFD, which a tool would store though the API refuses it. The error is
// invalid params (-32602) for an escape in the params of a request with an
// id, invalid request (-32600) otherwise. A body over the SDK's limit is
// left to the SDK, which refuses it (413); the body read is given back to
// the SDK otherwise.
func refuseLoneSurrogate(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, mcpsdk.DefaultMaxRequestBodyBytes+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || len(body) > mcpsdk.DefaultMaxRequestBodyBytes || !json.Valid(body) {
		return false
	}
	s := jsoncheck.Find(body)
	if s == nil {
		return false
	}
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(body, &msg) // an array (a batch) has none
	var id any
	if json.Unmarshal(msg.ID, new(string)) == nil || json.Unmarshal(msg.ID, new(int64)) == nil {
		id = msg.ID
	}
	code, message, status := -32600, "invalid request: "+s.Error(), http.StatusBadRequest
	if id != nil {
		status = http.StatusOK // the answer to the request
		if s.Field() == "params" {
			code, message = -32602, "invalid params: "+s.Error()
		}
	}
	writeJSON(w, status, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	return true
}

// tagCall puts a tools/call's identity (its session and JSON-RPC id) in
// its params' _meta (mcp.TagCall), so that the call sent again with the
// same id in the same session writes once. The session id is the
// server's, handed out at initialize. Other requests pass as they are.
func tagCall(r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Method != http.MethodPost || sid == "" {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, mcpsdk.DefaultMaxRequestBodyBytes+1))
	rest := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), rest), rest}
	if err != nil || len(body) > mcpsdk.DefaultMaxRequestBodyBytes {
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return
	}
	tagged := mcp.TagCall(msg, "http:"+sid)
	if tagged == msg {
		return
	}
	data, err := jsonrpc.EncodeMessage(tagged)
	if err != nil {
		return
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{bytes.NewReader(data), rest}
	r.ContentLength = int64(len(data))
}
