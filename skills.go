package memhost

// Skill is a tool sequence agents repeat: a learned skill page
// (skills/learned/<slug>.md) once it was seen
// memory.skills.minObservations times, a candidate before. Its counts come
// from the transcripts; its status from the page, set by a person or an
// agent (SkillReview).
type Skill struct {
	Name   string   `json:"name"`
	Slug   string   `json:"slug"`
	Path   string   `json:"path,omitempty"` // "" for a candidate
	Status string   `json:"status"`         // candidate | proposed | accepted | rejected
	Tools  []string `json:"tools"`
	// Observations counts the tasks that ran this sequence, in Sessions
	// sessions; SuccessRate the share that ended without a failed tool.
	Observations int     `json:"observations"`
	Sessions     int     `json:"sessions"`
	SuccessRate  float64 `json:"successRate"`
	Created      string  `json:"created,omitempty"` // the page's
}

// Skill statuses.
const (
	SkillCandidate = "candidate"
	SkillProposed  = "proposed"
	SkillAccepted  = "accepted"
	SkillRejected  = "rejected"
)

// SkillsRequest lists the skills: the pages and the candidates.
type SkillsRequest struct{}

// SkillLearnRequest writes the page of every sequence seen often enough
// and brings the other pages' counts up to date; it has no parameters.
type SkillLearnRequest struct{}

// SkillsResponse holds the skill pages and the candidates, most observed
// first; Written are the pages a SkillLearn wrote.
type SkillsResponse struct {
	Skills          []Skill  `json:"skills"`
	Candidates      []Skill  `json:"candidates"`
	MinObservations int      `json:"minObservations"`
	Written         []string `json:"written,omitempty"`
	// Warnings are troubles after the write (the index could not be
	// updated): what was written is stored.
	Warnings []string `json:"warnings,omitempty"`
}

// SkillReviewRequest accepts or rejects a skill page.
type SkillReviewRequest struct {
	Slug   string `json:"slug" jsonschema:"as skills lists it"`
	Status string `json:"status"` // accepted | rejected | proposed
}

// SkillReviewResponse is the skill as its page now says.
type SkillReviewResponse struct {
	Skill Skill `json:"skill"`
}
