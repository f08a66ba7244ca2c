package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
)

// task appends a user message, then a tool turn for each tool (a name
// ending in "!" failed), to session.
func task(t *testing.T, h *Host, session, ask string, tools ...string) {
	t.Helper()
	ctx := context.Background()
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: session, Role: "user", Text: ask}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		name, failed := strings.CutSuffix(tool, "!")
		meta, _ := json.Marshal(map[string]any{"tool": name, "error": failed})
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: session, Role: "tool", Text: "called " + name, Meta: meta}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSkills: a tool sequence seen in three sessions becomes a proposed
// skill page with its counts; one seen twice stays a candidate; learning
// again writes nothing; a person's edit of the page is kept as counts
// change; a review sets the status; a rejected skill leaves the context.
func TestSkills(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	task(t, h, "s1", "fix the failing parser test", "Read", "Edit", "Bash")
	task(t, h, "s2", "the build is red again", "Read", "Read", "Edit", "Bash!")
	task(t, h, "s3", "make the linter pass", "Read", "Edit", "Bash")
	task(t, h, "s3", "what time is it in Tokyo?", "WebSearch", "WebFetch")
	task(t, h, "s1", "look up the release date", "WebSearch", "WebFetch")

	list, err := h.Skills(ctx, memhost.SkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Skills) != 0 || len(list.Candidates) != 2 || list.MinObservations != 3 {
		t.Fatalf("before learning: %+v", list)
	}
	c := list.Candidates[0]
	if c.Slug != "read-edit-bash" || c.Name != "Read → Edit → Bash" || c.Observations != 3 || c.Sessions != 3 || c.SuccessRate != 0.667 || c.Status != memhost.SkillCandidate {
		t.Errorf("the repeated sequence: %+v", c)
	}

	learned, err := h.SkillLearn(ctx, memhost.SkillLearnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	rel := "skills/learned/read-edit-bash.md"
	if len(learned.Written) != 1 || learned.Written[0] != rel || len(learned.Skills) != 1 || learned.Skills[0].Status != memhost.SkillProposed || len(learned.Candidates) != 1 {
		t.Fatalf("learn: %+v", learned)
	}
	page := readPage(t, h, rel)
	for _, want := range []string{"---\nname: Read → Edit → Bash\nslug: read-edit-bash\nstatus: proposed\ntools:\n  - Read\n  - Edit\n  - Bash\nobservations: 3\nsessions: 3\nsuccessRate: 0.667\n",
		"## Steps\n\n1. Read\n2. Edit\n3. Bash\n", `- session s2, `, `"the build is red again"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if again, err := h.SkillLearn(ctx, memhost.SkillLearnRequest{}); err != nil || len(again.Written) != 0 {
		t.Errorf("learning again: %+v, %v", again, err)
	}

	// A person's words stay; the counts follow the transcripts.
	abs := filepath.Join(h.NotebookDir(), rel)
	os.WriteFile(abs, []byte(strings.Replace(page, "## Steps", "Run the tests before committing.\n\n## Steps", 1)), 0o644)
	task(t, h, "s4", "another red build", "Read", "Edit", "Bash")
	if _, err := h.SkillLearn(ctx, memhost.SkillLearnRequest{}); err != nil {
		t.Fatal(err)
	}
	page = readPage(t, h, rel)
	if !strings.Contains(page, "Run the tests before committing.") || !strings.Contains(page, "observations: 4\nsessions: 4\nsuccessRate: 0.75\n") {
		t.Errorf("after an edit and a fourth task:\n%s", page)
	}

	r, err := h.SkillReview(ctx, memhost.SkillReviewRequest{Slug: "read-edit-bash", Status: memhost.SkillAccepted})
	if err != nil || r.Skill.Status != memhost.SkillAccepted || r.Skill.Observations != 4 {
		t.Fatalf("accept: %+v, %v", r, err)
	}
	if page := readPage(t, h, rel); !strings.Contains(page, "status: accepted\n") || !strings.Contains(page, "Run the tests before committing.") {
		t.Errorf("accepted page:\n%s", page)
	}
	mem, err := h.Context(ctx, memhost.ContextRequest{Query: "read edit bash", Tiers: []string{"skills"}})
	if err != nil || len(mem.Items) == 0 || mem.Items[0].Path != rel {
		t.Fatalf("an accepted skill in the context: %+v, %v", mem.Items, err)
	}
	if _, err := h.SkillReview(ctx, memhost.SkillReviewRequest{Slug: "read-edit-bash", Status: memhost.SkillRejected}); err != nil {
		t.Fatal(err)
	}
	if mem, err := h.Context(ctx, memhost.ContextRequest{Query: "read edit bash", Tiers: []string{"skills"}}); err != nil || len(mem.Items) != 0 {
		t.Errorf("a rejected skill in the context: %+v, %v", mem.Items, err)
	}

	for _, tt := range []struct {
		req   memhost.SkillReviewRequest
		kind  fault.Kind
		field string
	}{
		{memhost.SkillReviewRequest{Slug: "read-edit-bash", Status: "maybe"}, fault.BadInput, "status"},
		{memhost.SkillReviewRequest{Slug: "../../config", Status: "accepted"}, fault.BadInput, "slug"},
		{memhost.SkillReviewRequest{Slug: "websearch-webfetch", Status: "accepted"}, fault.NotFound, "slug"},
	} {
		_, err := h.SkillReview(ctx, tt.req)
		if fault.KindOf(err) != tt.kind || fault.FieldOf(err) != tt.field {
			t.Errorf("review %+v: %v", tt.req, err)
		}
	}
	if _, err := os.Stat(filepath.Join(h.NotebookDir(), "skills/learned/websearch-webfetch.md")); err == nil {
		t.Error("a refused review wrote a page")
	}
}

// TestSkillsFromClaudeCode: the tool calls of an imported Claude Code
// transcript are observed by name.
func TestSkillsFromClaudeCode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	var lines []string
	for i := range 2 {
		lines = append(lines,
			fmt.Sprintf(`{"sessionId":"x","type":"user","message":{"role":"user","content":"task %d"},"uuid":"u%d","timestamp":"2025-05-26T08:0%d:00.000Z"}`, i, i, i),
			fmt.Sprintf(`{"sessionId":"x","type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Grep","input":{"pattern":"x"}},{"type":"tool_use","name":"Edit","input":{}}]},"uuid":"a%d","timestamp":"2025-05-26T08:0%d:30.000Z"}`, i, i))
	}
	path := filepath.Join(t.TempDir(), "4f35e220-c435.jsonl")
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	if _, err := h.Ingest(ctx, memhost.IngestRequest{Paths: []string{path}}); err != nil {
		t.Fatal(err)
	}
	list, err := h.Skills(ctx, memhost.SkillsRequest{})
	if err != nil || len(list.Candidates) != 1 || list.Candidates[0].Slug != "grep-edit" || list.Candidates[0].Observations != 2 {
		t.Fatalf("skills of a Claude Code transcript: %+v, %v", list, err)
	}
}
