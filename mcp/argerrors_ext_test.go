package mcp_test

import (
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost/mcp"
)

// TestArgErrorsThroughTheSDK: a real call with a bad argument gets the
// plain wording, not the SDK's schema validator's.
func TestArgErrorsThroughTheSDK(t *testing.T) {
	cs := connect(t, mcp.New(openHome(t), mcp.Options{}), nil)
	res := call(t, cs, "memory_get", map[string]any{"path": "x.md", "startLine": -5})
	if !res.IsError {
		t.Fatalf("call = %+v", res)
	}
	if text := res.Content[0].(*mcpsdk.TextContent).Text; text != "startLine: must be at least 1" || strings.Contains(text, "validating") {
		t.Errorf("error text %q", text)
	}
}
