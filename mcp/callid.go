package mcp

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// callKey is the _meta key under which a transport names a tool call: its
// connection and its JSON-RPC id (TagCall). The SDK does not hand a tool
// its request's JSON-RPC id.
const callKey = "io.memhost/call"

// NewConnID returns a connection's nonce for TagCall: random, so that two
// clients' calls of the same JSON-RPC id are never one call.
func NewConnID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// TagCall returns msg with, when it is a tools/call request, its identity
// in the params' _meta: conn (a NewConnID, or a session id the server
// chose) and the JSON-RPC id. A client that sends the call again with the
// same id (it lost the answer) then gets the first answer from the
// request journal, and nothing is written twice. A value the client put
// under the key itself is replaced. Other messages are returned as they
// are, and so is a call whose params are not an object.
func TagCall(msg jsonrpc.Message, conn string) jsonrpc.Message {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "tools/call" || !req.ID.IsValid() {
		return msg
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(req.Params, &params) != nil || params == nil {
		return msg
	}
	meta := map[string]json.RawMessage{}
	if m, ok := params["_meta"]; ok && json.Unmarshal(m, &meta) != nil {
		return msg
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%T\x00%v", conn, req.ID.Raw(), req.ID.Raw()))
	meta[callKey], _ = json.Marshal("mcp-" + hex.EncodeToString(sum[:16]))
	params["_meta"], _ = json.Marshal(meta)
	raw, err := json.Marshal(params)
	if err != nil {
		return msg
	}
	tagged := *req
	tagged.Params = raw
	return &tagged
}

// requestID names one tool call's write: the id its transport derived
// from the call's connection and JSON-RPC id (TagCall), else a new one. A
// stdio server whose memhost server dies mid-call runs the call again in
// its own process with the same request (cmd/memhost-core's either),
// which then writes once.
func requestID(req *mcpsdk.CallToolRequest) string {
	if req != nil && req.Params != nil {
		if id, ok := req.Params.Meta[callKey].(string); ok && id != "" {
			return id
		}
	}
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
