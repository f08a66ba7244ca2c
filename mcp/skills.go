package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
)

// SkillReviewArgs are skill_review's arguments.
type SkillReviewArgs struct {
	Slug   string `json:"slug" jsonschema:"the skill's slug, as skills lists it (e.g. read-edit-bash)"`
	Status string `json:"status" jsonschema:"accepted, rejected (it leaves the memory context) or proposed"`
}

// addSkillTools registers skills (reading) and, unless read-only,
// skill_learn and skill_review.
func (s *srv) addSkillTools(read *mcpsdk.ToolAnnotations) {
	add(s, &mcpsdk.Tool{Name: "skills", Title: "Learned skills", Annotations: read,
		Description: "Procedural memory: the tool sequences agents repeat across sessions, with how often each was seen and how often it ended without a failed tool. " +
			"skills are the skill pages (skills/learned/<slug>.md: proposed, accepted or rejected); candidates are sequences not yet seen often enough."},
		nil, nil,
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, _ NoArgs) (memhost.SkillsResponse, string, error) {
			r, err := s.ops.Skills(ctx, memhost.SkillsRequest{})
			return r, renderSkills(r), err
		})
	if s.opts.ReadOnly {
		return
	}
	no := new(bool)
	add(s, &mcpsdk.Tool{Name: "skill_learn", Title: "Learn skills",
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: no, IdempotentHint: true, OpenWorldHint: no},
		Description: "Write a proposed skill page for each tool sequence seen often enough, and bring the counts on the existing pages up to date. Running it again changes nothing."},
		nil, nil,
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, _ NoArgs) (memhost.SkillsResponse, string, error) {
			r, err := s.ops.SkillLearn(ctx, memhost.SkillLearnRequest{})
			return r, "wrote " + fmt.Sprint(len(r.Written)) + " pages\n" + renderSkills(r), err
		})
	yes := new(bool)
	*yes = true
	add(s, &mcpsdk.Tool{Name: "skill_review", Title: "Accept or reject a skill",
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: yes, IdempotentHint: true, OpenWorldHint: no},
		Description: "Accept or reject a proposed skill (its page's status); a rejected skill leaves the memory context."},
		func(sc *jsonschema.Schema) {
			sc.Properties["status"].Enum = []any{memhost.SkillAccepted, memhost.SkillRejected, memhost.SkillProposed}
		}, nil,
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a SkillReviewArgs) (memhost.SkillReviewResponse, string, error) {
			r, err := s.ops.SkillReview(ctx, memhost.SkillReviewRequest{Slug: a.Slug, Status: a.Status})
			return r, r.Skill.Slug + ": " + r.Skill.Status, err
		})
}

// renderSkills is the skills as text, one a line.
func renderSkills(r memhost.SkillsResponse) string {
	var b strings.Builder
	for _, sk := range r.Skills {
		fmt.Fprintf(&b, "%s (%s): %s, seen %d times in %d sessions, %.0f%% successful\n", sk.Slug, sk.Status, strings.Join(sk.Tools, " → "), sk.Observations, sk.Sessions, 100*sk.SuccessRate)
	}
	for _, sk := range r.Candidates {
		fmt.Fprintf(&b, "candidate: %s, seen %d times in %d sessions\n", strings.Join(sk.Tools, " → "), sk.Observations, sk.Sessions)
	}
	if b.Len() == 0 {
		return "no skills yet\n"
	}
	return b.String()
}
