package memhost

// ContextRequest asks for the block an agent puts in its system prompt.
// With no Query and no Session it is the notebook's block (reference
// pages, recent daily logs, facts of the most-mentioned entities). With a
// Query it is the memory context: the memory tiers searched for it and
// assembled within Budget tokens, facts first, then episodes, skills and
// notebook pages, each item once with where it came from. With a Session
// it is that session's working memory: the notebook's block, the memory
// context for the Query (default: the session's last user turn), the last
// summary checkpoint and the most recent turns that fit.
type ContextRequest struct {
	Query   string `json:"query,omitempty"`
	Session string `json:"session,omitempty"`
	// Budget is the memory context's tokens; 0: memory.context.budget.
	Budget int `json:"budget,omitempty" jsonschema:"tokens"`
	// Tiers are the tiers searched (ContextTiers); empty: all.
	Tiers    []string `json:"tiers,omitempty"`
	PerTier  int      `json:"perTier,omitempty"`  // 0: memory.context.perTier
	MinScore *float64 `json:"minScore,omitempty"` // nil: memory.search.minScore
	// HalfLife turns on time decay: an item's score halves with every
	// HalfLife of age ("30d", "12h"); "" is memory.context.halfLife (off
	// by default). Items with no time (notebook pages) keep theirs.
	HalfLife string `json:"halfLife,omitempty" jsonschema:"e.g. 30d: a score halves every half-life of age"`
	// Filters: episodes of one channel (and source in it), facts of one
	// entity (a slug).
	Channel  string `json:"channel,omitempty" jsonschema:"only episodes of this channel"`
	SourceID string `json:"sourceId,omitempty" jsonschema:"and of this chat in it"`
	Entity   string `json:"entity,omitempty" jsonschema:"only facts of this entity slug"`
	// NotSession leaves that session's turns out of the episodes (a
	// session's working memory holds them already).
	NotSession string `json:"notSession,omitempty"`
}

// Memory reports whether r sets anything of the memory context: then it
// needs a Query or a Session.
func (r ContextRequest) Memory() bool {
	return r.Budget != 0 || len(r.Tiers) > 0 || r.PerTier != 0 || r.MinScore != nil || r.HalfLife != "" || r.Channel != "" || r.SourceID != "" || r.Entity != "" || r.NotSession != ""
}

// The memory tiers of a ContextRequest, in the order they fill the budget.
const (
	TierFacts    = "facts"    // semantic: current facts of entity pages
	TierEpisodes = "episodes" // episodic: conversation turns and daily logs
	TierSkills   = "skills"   // procedural: skill pages (skills/)
	TierNotebook = "notebook" // the other pages of the notebook
)

// ContextTiers are the tiers, in priority order.
var ContextTiers = []string{TierFacts, TierEpisodes, TierSkills, TierNotebook}

// ContextResponse is the block: Text to put in the prompt, the pages of
// the notebook's block (Files), and the items of the memory context.
type ContextResponse struct {
	Text  string        `json:"text"`
	Files []ContextFile `json:"files"`
	// Set when the request had a Query or a Session.
	Mode   string        `json:"mode,omitempty"`   // keyword or hybrid, as recall's
	Reason string        `json:"reason,omitempty"` // why keyword
	Items  []ContextItem `json:"items,omitempty"`
	Tokens int           `json:"tokens,omitempty"` // the memory context's estimated tokens
	Budget int           `json:"budget,omitempty"`
	// Left are items that matched but did not fit in the budget.
	Left    int             `json:"left,omitempty"`
	Working *WorkingContext `json:"working,omitempty"` // with a Session
}

// ContextFile is one page of the notebook's block.
type ContextFile struct {
	Path      string `json:"path"`
	Chars     int    `json:"chars"` // characters included
	Truncated bool   `json:"truncated"`
	Omitted   bool   `json:"omitted"` // left out: the total limit was reached
}

// ContextItem is one memory in the context, with where it came from: a
// fact's entity page and line, a turn's session and turn ids, a page's
// path and lines.
type ContextItem struct {
	Tier      string   `json:"tier"`
	Text      string   `json:"text"`
	Path      string   `json:"path"`
	Lines     Lines    `json:"lines"`
	Session   string   `json:"session,omitempty"`
	Turns     []string `json:"turns,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"` // a turn's time, a fact's last confirmation, a daily log's day
	Score     float64  `json:"score"`               // after time decay
	Tokens    int      `json:"tokens"`
}

// WorkingContext is a session's working memory within the budgets of
// memory.context.working: the notebook's block (System), the last summary
// checkpoint and the most recent turns that fit, oldest first.
type WorkingContext struct {
	Session      string `json:"session"`
	SystemTokens int    `json:"systemTokens"`
	Checkpoint   string `json:"checkpoint,omitempty"`
	// Turns are the recent turns that fit; Dropped counts the older ones
	// of the working context that did not.
	Turns      []Turn `json:"turns"`
	TurnTokens int    `json:"turnTokens"`
	Dropped    int    `json:"dropped"`
	// CompactionDue is set when the recent turns exceed
	// memory.context.working.compactAt tokens (default 35,000): summarise
	// the oldest half (session compact --summarize).
	CompactionDue bool `json:"compactionDue"`
	Tokens        int  `json:"tokens"` // all of it
}
