package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/knowledge"
	"github.com/memhost/memhost/mcp"
)

// TestFactTools: fact_add writes the entity page and supersedes a
// conflicting value; facts reads it back, with history; bad arguments are
// tool errors naming them; read-only serves facts but not fact_add.
func TestFactTools(t *testing.T) {
	h := openHome(t)
	cs := connect(t, mcp.New(h, mcp.Options{}), nil)

	var add knowledge.FactAddResponse
	res := call(t, cs, "fact_add", map[string]any{"entity": "Sarah Chen", "attribute": "works at", "value": "[[techflow]]", "source": "chat-1 turn 1a2b3c4d5e6f"})
	structured(t, res, &add)
	if add.Path != "knowledge/entities/sarah-chen.md" || !add.Created || add.Fact.Value != "[[techflow]]" || len(add.Superseded) != 0 ||
		!strings.HasPrefix(text(res), "Added to knowledge/entities/sarah-chen.md: works at = [[techflow]] (^") {
		t.Fatalf("fact_add: %+v %q", add, text(res))
	}
	first := add.Fact.ID
	res = call(t, cs, "fact_add", map[string]any{"entity": "sarah chen", "attribute": "works at", "value": "[[acme-corp]]", "confidence": 0.9})
	structured(t, res, &add)
	if add.Created || len(add.Superseded) != 1 || add.Superseded[0].ID != first ||
		!strings.Contains(text(res), "Superseded [[techflow]] (^"+first+"), kept struck through.") {
		t.Fatalf("fact_add superseding: %+v %q", add, text(res))
	}
	res = call(t, cs, "fact_add", map[string]any{"entity": "Sarah Chen", "attribute": "works at", "value": "[[acme-corp]]"})
	structured(t, res, &add)
	if !add.Confirmed || !strings.HasPrefix(text(res), "Already known: sarah-chen works at [[acme-corp]]") {
		t.Fatalf("fact_add again: %+v %q", add, text(res))
	}
	page, _ := os.ReadFile(filepath.Join(h.NotebookDir(), "knowledge", "entities", "sarah-chen.md"))
	if !strings.Contains(string(page), "~~[[techflow]]~~") || !strings.Contains(string(page), "- [[acme-corp]]") {
		t.Fatalf("page:\n%s", page)
	}

	var fr knowledge.FactsResponse
	res = call(t, cs, "facts", map[string]any{"entity": "Sarah Chen"})
	structured(t, res, &fr)
	if fr.Entity != "sarah-chen" || len(fr.Facts) != 1 || fr.Facts[0].Value != "[[acme-corp]]" ||
		!strings.HasPrefix(text(res), "sarah-chen: works at = [[acme-corp]] [current, since ") {
		t.Fatalf("facts: %+v %q", fr, text(res))
	}
	res = call(t, cs, "facts", map[string]any{"entity": "sarah-chen", "history": true})
	structured(t, res, &fr)
	if len(fr.Facts) != 2 || fr.Facts[0].Status != "superseded" || fr.Facts[0].Until == "" ||
		!strings.Contains(text(res), "works at = [[techflow]] [superseded, since ") || !strings.Contains(text(res), "from chat-1 turn 1a2b3c4d5e6f") {
		t.Fatalf("facts --history: %+v %q", fr, text(res))
	}
	structured(t, call(t, cs, "facts", map[string]any{}), &fr)
	if len(fr.Facts) != 1 {
		t.Fatalf("every entity's facts: %+v", fr)
	}

	// Bad arguments: tool errors naming them; nothing written.
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"entity": "x", "attribute": "a", "value": "two\nlines"}, "value"},
		{map[string]any{"entity": "!!!", "attribute": "a", "value": "v"}, "entity"},
		{map[string]any{"entity": "x", "attribute": "a"}, "value"},
	} {
		res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "fact_add", Arguments: tt.args})
		if err == nil && !res.IsError {
			t.Fatalf("fact_add %v succeeded: %q", tt.args, text(res))
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		} else {
			msg = text(res)
		}
		if !strings.Contains(msg, tt.want) {
			t.Errorf("fact_add %v: %q does not name %s", tt.args, msg, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(h.NotebookDir(), "knowledge", "entities", "x.md")); !os.IsNotExist(err) {
		t.Fatalf("a refused fact_add wrote a page: %v", err)
	}
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "facts", Arguments: map[string]any{"entity": "nobody"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "nobody") {
		t.Fatalf("facts of an unknown entity: %v %q", err, text(res))
	}

	// Read-only: facts, not fact_add.
	ro := connect(t, mcp.New(h, mcp.Options{ReadOnly: true}), nil)
	structured(t, call(t, ro, "facts", map[string]any{"entity": "sarah-chen"}), &fr)
	if len(fr.Facts) != 1 {
		t.Fatalf("read-only facts: %+v", fr)
	}
	if _, err := ro.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "fact_add", Arguments: map[string]any{"entity": "a", "attribute": "b", "value": "c"}}); err == nil {
		t.Fatal("fact_add served in read-only mode")
	}
}

// TestSkillTools: skills lists what skill_learn writes, and skill_review
// sets a page's status; a bad status is a tool error naming it.
func TestSkillTools(t *testing.T) {
	h := openHome(t)
	ctx := context.Background()
	for _, s := range []string{"s1", "s2", "s3"} {
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: s, Role: "user", Text: "ship it"}); err != nil {
			t.Fatal(err)
		}
		for _, tool := range []string{"Bash", "Edit"} {
			if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: s, Role: "tool", Text: tool, Meta: []byte(`{"tool": "` + tool + `"}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	cs := connect(t, mcp.New(h, mcp.Options{}), nil)
	var sr memhost.SkillsResponse
	structured(t, call(t, cs, "skill_learn", map[string]any{}), &sr)
	if len(sr.Written) != 1 || len(sr.Skills) != 1 || sr.Skills[0].Slug != "bash-edit" {
		t.Fatalf("skill_learn: %+v", sr)
	}
	var rr memhost.SkillReviewResponse
	structured(t, call(t, cs, "skill_review", map[string]any{"slug": "bash-edit", "status": "accepted"}), &rr)
	if rr.Skill.Status != memhost.SkillAccepted {
		t.Fatalf("skill_review: %+v", rr)
	}
	res := call(t, cs, "skills", map[string]any{})
	structured(t, res, &sr)
	if len(sr.Skills) != 1 || sr.Skills[0].Status != memhost.SkillAccepted || !strings.Contains(text(res), "bash-edit (accepted)") {
		t.Fatalf("skills: %+v %q", sr, text(res))
	}
	if res := call(t, cs, "skill_review", map[string]any{"slug": "bash-edit", "status": "maybe"}); !res.IsError {
		t.Errorf("a bad status: %q", text(res))
	}
}
