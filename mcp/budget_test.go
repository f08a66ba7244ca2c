package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost/mcp"
)

// toolsListBudget is the most characters the tools/list result may hold:
// a client hands every tool's name, description and schema to the model
// in every session, before it is asked anything. scripts/mcp-inspector.sh
// holds the same bound over stdio and HTTP.
const toolsListBudget = 12000

// TestToolsListBudget: the tools/list result, as the server sends it, is
// within toolsListBudget, lists no output schema, and its schemas pass
// the MCP Inspector's --strict portability checks (lintSchema).
func TestToolsListBudget(t *testing.T) {
	raw := listToolsRaw(t, mcp.New(openHome(t), mcp.Options{}))
	var res struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	n := utf8.RuneCount(raw)
	t.Logf("tools/list: %d characters, %d tools", n, len(res.Tools))
	if n > toolsListBudget {
		var sizes []string
		for _, tool := range res.Tools {
			b, _ := json.Marshal(tool)
			sizes = append(sizes, fmt.Sprintf("%s %d", tool["name"], utf8.RuneCount(b)))
		}
		t.Errorf("tools/list is %d characters, over the budget of %d: %s", n, toolsListBudget, strings.Join(sizes, ", "))
	}
	for _, tool := range res.Tools {
		if _, ok := tool["outputSchema"]; ok {
			t.Errorf("tool %s lists an output schema", tool["name"])
		}
		var sc any
		if err := json.Unmarshal(tool["inputSchema"], &sc); err != nil {
			t.Fatal(err)
		}
		for _, f := range lintSchema(sc, "inputSchema", "") {
			t.Errorf("tool %s: %s", tool["name"], f)
		}
	}
}

// TestLintSchema: lintSchema finds what the Inspector warns of.
func TestLintSchema(t *testing.T) {
	for _, c := range []struct {
		schema string
		want   int
	}{
		{`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, 0},
		{`{"type":"object","properties":{"a":{"type":["null","string"]}}}`, 1},
		{`{"type":"object","properties":{"a":{"description":"anything"}}}`, 1},
		{`{"type":"object","properties":{"a":{"type":"array","items":true}}}`, 1},
		{`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, 1},
		{`{"type":"array","items":{"type":["null","array"],"items":{}}}`, 2},
	} {
		var sc any
		if err := json.Unmarshal([]byte(c.schema), &sc); err != nil {
			t.Fatal(err)
		}
		if got := lintSchema(sc, "inputSchema", ""); len(got) != c.want {
			t.Errorf("%s: %q, want %d findings", c.schema, got, c.want)
		}
	}
}

// listToolsRaw returns the result of srv's tools/list as it was sent.
func listToolsRaw(t *testing.T, srv *mcpsdk.Server) json.RawMessage {
	t.Helper()
	ctx := context.Background()
	st, ct := mcpsdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	rec := &recordingTransport{Transport: ct}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, r := range rec.results {
		var res struct{ Tools []any }
		if json.Unmarshal(r, &res) == nil && len(res.Tools) > 0 {
			return r
		}
	}
	t.Fatalf("no tools/list result among %d responses", len(rec.results))
	return nil
}

// recordingTransport keeps the results of the responses its client
// reads, as the server encoded them.
type recordingTransport struct {
	mcpsdk.Transport
	mu      sync.Mutex
	results []json.RawMessage
}

func (t *recordingTransport) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	return recordingConn{c, t}, err
}

type recordingConn struct {
	mcpsdk.Connection
	t *recordingTransport
}

func (c recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Response); ok {
		c.t.mu.Lock()
		c.t.results = append(c.t.results, r.Result)
		c.t.mu.Unlock()
	}
	return msg, err
}

// constraining are the keywords that make a schema constrain its value,
// as the Inspector counts them.
var constraining = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`type enum const multipleOf maximum exclusiveMaximum minimum exclusiveMinimum
		maxLength minLength pattern format contentMediaType contentEncoding contentSchema maxItems minItems uniqueItems
		maxContains minContains maxProperties minProperties required dependentRequired allOf anyOf oneOf not items
		prefixItems contains additionalItems unevaluatedItems properties patternProperties additionalProperties
		unevaluatedProperties propertyNames dependentSchemas dependencies $ref $dynamicRef $recursiveRef`) {
		constraining[k] = true
	}
}

// lintSchema returns what the MCP Inspector's --strict checks (its
// schema portability rules) find in a schema: a type array, a reference
// outside the document, a schema that constrains nothing, a bare boolean
// where a schema is expected.
func lintSchema(node any, at, keyword string) []string {
	var out []string
	switch n := node.(type) {
	case bool:
		switch keyword {
		case "additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems":
		default:
			out = append(out, at+": a bare boolean where a schema is expected")
		}
		return out
	case map[string]any:
		if _, ok := n["type"].([]any); ok {
			out = append(out, at+": type is an array")
		}
		if ref, ok := n["$ref"].(string); ok && ref != "" && !strings.HasPrefix(ref, "#") {
			out = append(out, at+": $ref outside the document")
		}
		constrains := false
		for k := range n {
			constrains = constrains || constraining[k]
		}
		if _, ok := n["if"]; ok && (n["then"] != nil || n["else"] != nil) {
			constrains = true // if constrains only with then or else
		}
		if !constrains && keyword != "not" {
			out = append(out, at+": constrains nothing")
		}
		for _, k := range []string{"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"} {
			if m, ok := n[k].(map[string]any); ok {
				for name, sub := range m {
					out = append(out, lintSchema(sub, at+"."+k+"."+name, k)...)
				}
			}
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
			if subs, ok := n[k].([]any); ok {
				for i, sub := range subs {
					out = append(out, lintSchema(sub, fmt.Sprintf("%s.%s[%d]", at, k, i), k)...)
				}
			}
		}
		for _, k := range []string{"items", "contains", "not", "propertyNames", "if", "then", "else",
			"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems", "contentSchema"} {
			if sub, ok := n[k]; ok {
				out = append(out, lintSchema(sub, at+"."+k, k)...)
			}
		}
	}
	return out
}

// TestInspectorScript: scripts/mcp-inspector.sh, which checks the server
// with the MCP Inspector, expects the tools the server lists and holds
// tools/list to the budget of TestToolsListBudget.
func TestInspectorScript(t *testing.T) {
	b, err := os.ReadFile("../scripts/mcp-inspector.sh")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && (k == "TOOLS" || k == "BUDGET") {
			vars[k] = strings.Trim(v, `"`)
		}
	}
	if got, want := vars["BUDGET"], strconv.Itoa(toolsListBudget); got != want {
		t.Errorf("the script's BUDGET is %q, want %s", got, want)
	}
	cs := connect(t, mcp.New(openHome(t), mcp.Options{}), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if got, want := vars["TOOLS"], strings.Join(names, " "); got != want {
		t.Errorf("the script's TOOLS are\n  %s\nthe server's\n  %s", got, want)
	}
}
