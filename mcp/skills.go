package mcp

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
)

// addSkillTools registers skills, skill_learn and skill_review, which run
// host.Skills, SkillLearn and SkillReview.
func (s *srv) addSkillTools() {
	addTool(s, api.OpSkills, tool[memhost.SkillsRequest, memhost.SkillsResponse]{
		name: "skills", title: "Learned skills",
		description: "Learned skills: the tool sequences agents repeat, with counts and success rates, and candidates.",
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.SkillsRequest, r memhost.SkillsResponse) string {
			return renderSkills(r)
		},
	})

	addTool(s, api.OpSkillLearn, tool[memhost.SkillLearnRequest, memhost.SkillsResponse]{
		name: "skill_learn", title: "Learn skills", idempotent: true,
		description: "Propose a skill page for each tool sequence seen often enough, and update the counts.",
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.SkillLearnRequest, r memhost.SkillsResponse) string {
			return "wrote " + fmt.Sprint(len(r.Written)) + " pages\n" + renderSkills(r)
		},
	})

	addTool(s, api.OpSkillReview, tool[memhost.SkillReviewRequest, memhost.SkillReviewResponse]{
		name: "skill_review", title: "Accept or reject a skill", destructive: true, idempotent: true,
		description: "Accept or reject a proposed skill; a rejected one leaves the memory context.",
		schema: func(sc *jsonschema.Schema) {
			sc.Properties["status"].Enum = []any{memhost.SkillAccepted, memhost.SkillRejected, memhost.SkillProposed}
		},
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.SkillReviewRequest, r memhost.SkillReviewResponse) string {
			return r.Skill.Slug + ": " + r.Skill.Status
		},
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
