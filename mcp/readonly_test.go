package mcp_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/mcp"
)

// TestReadOnlyHints: each tool's readOnlyHint says whether the operations
// it runs write (api.OpInfo.Write), as a call of it records them; so the
// read-only server, which serves the tools of readOnlyHint, serves every
// tool that only reads and none that writes.
func TestReadOnlyHints(t *testing.T) {
	h := openHome(t)
	ctx := context.Background()
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "book the tour"}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ran []api.OpInfo
	recorded := api.Wrap(h, func(ctx context.Context, op api.Operation, _ any, next func(context.Context) (any, error)) (any, error) {
		mu.Lock()
		ran = append(ran, op.Info())
		mu.Unlock()
		return next(ctx)
	})
	cs := connect(t, mcp.New(recorded, mcp.Options{}), nil)
	// A call of each tool; a tool missing here fails the test.
	calls := map[string]map[string]any{
		"memory_search":       {"query": "tea"},
		"memory_get":          {"path": "reference/contacts.md"},
		"remember":            {"text": "The hints test likes tea", "category": "knowledge", "file": "hints"},
		"notebook_write":      {"path": "knowledge/written.md", "text": "x"},
		"daily_log":           {"text": "Checked the hints"},
		"conversation_search": {"query": "tour"},
		"context":             {},
		"memory_status":       {},
		"episodes":            {},
		"facts":               {},
		"fact_add":            {"entity": "Ada", "attribute": "likes", "value": "tea"},
		"links":               {"path": "reference/contacts.md"},
		"mv":                  {"from": "lists/shopping.md", "to": "lists/shop.md"},
		"rollup":              {"period": "week"},
		"prune":               {"olderThanDays": 90, "dryRun": true},
		"skills":              {},
		"skill_learn":         {},
		"skill_review":        {"slug": "none-such", "status": "accepted"},
		"health_history":      {},
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		args, ok := calls[tool.Name]
		if !ok {
			t.Errorf("%s: no call of it here", tool.Name)
			continue
		}
		mu.Lock()
		ran = nil
		mu.Unlock()
		call(t, cs, tool.Name, args)
		mu.Lock()
		ops := slices.Clone(ran)
		mu.Unlock()
		if len(ops) == 0 {
			t.Errorf("%s ran no operation", tool.Name)
			continue
		}
		writes := slices.ContainsFunc(ops, func(o api.OpInfo) bool { return o.Write })
		if tool.Annotations.ReadOnlyHint == writes {
			t.Errorf("%s: readOnlyHint %v, but it ran %+v", tool.Name, tool.Annotations.ReadOnlyHint, ops)
		}
	}
}
