package memhost

import "github.com/memhost/memhost/knowledge"

// RecallRequest is a search of the notebook.
type RecallRequest struct {
	Query      string   `json:"query"`
	MaxResults int      `json:"maxResults,omitempty"`                                   // 0: memory.search.maxResults
	MinScore   *float64 `json:"minScore,omitempty"`                                     // nil: memory.search.minScore
	Sources    []string `json:"sources,omitempty" jsonschema:"default notebook, daily"` // empty: notebook and daily
	// Filters, applied inside both the keyword and the vector search:
	// pages having every tag in Tags (frontmatter tags and inline #tags;
	// "project" also matches "project/alpha"), and pages under Path (a
	// folder such as "knowledge/", or one page).
	Tags []string `json:"tags,omitempty" jsonschema:"only pages having all these tags"`
	Path string   `json:"path,omitempty" jsonschema:"only pages under this folder (knowledge/) or this page"`
}

// RecallResponse holds results grouped by source, best first in each group.
type RecallResponse struct {
	Query   string        `json:"query"`
	Mode    string        `json:"mode"`
	Reason  string        `json:"reason"` // why the mode is keyword; "" when hybrid
	Results RecallResults `json:"results"`
	Timing  Timing        `json:"timing"`
}

// RecallResults are the groups, notebook first; sessions only when asked
// for.
type RecallResults struct {
	// Facts are the current facts matching the query (at most
	// MaxRecallFacts, shown first), when the notebook is searched and any
	// match; see FactAdd.
	Facts    []knowledge.FactRow `json:"facts,omitempty"`
	Notebook []Result            `json:"notebook"`
	Daily    []Result            `json:"daily"`
	Sessions []Result            `json:"sessions,omitempty"`
}

// Result is one chunk found.
type Result struct {
	Path    string  `json:"path"` // relative to the notebook
	Heading string  `json:"heading"`
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"` // 0..1
	Lines   Lines   `json:"lines"`
	// For transcript hits.
	Session string   `json:"session,omitempty"`
	Turns   []string `json:"turns,omitempty"`
	Context string   `json:"context,omitempty"` // the end of the turn before: what this turn answers
}

// Timing says where a search spent its time, in milliseconds.
type Timing struct {
	SyncMs   float64 `json:"syncMs"`
	FtsMs    float64 `json:"ftsMs"`
	VectorMs float64 `json:"vectorMs"` // readiness check, query embedding, KNN and fusion
	TotalMs  float64 `json:"totalMs"`
}

// ConversationSearchRequest searches transcripts.
type ConversationSearchRequest struct {
	Query      string `json:"query"`
	Session    string `json:"session,omitempty"`                                   // only this session
	Since      string `json:"since,omitempty" jsonschema:"YYYY-MM-DD or RFC 3339"` // YYYY-MM-DD or RFC 3339: turns at or after
	Until      string `json:"until,omitempty" jsonschema:"YYYY-MM-DD or RFC 3339"` // YYYY-MM-DD (whole day) or RFC 3339: turns at or before
	MaxResults int    `json:"maxResults,omitempty"`                                // default 10
	// Channel and SourceID keep only turns of that channel, and of that
	// source in it (Turn.Channel); "" for any.
	Channel  string `json:"channel,omitempty" jsonschema:"e.g. whatsapp, cli"`
	SourceID string `json:"sourceId,omitempty" jsonschema:"a chat or contact of the channel"`
	// AsOf is the reference time of the query's relative time words
	// ("last Saturday", "two weeks ago", "in March"): YYYY-MM-DD or RFC
	// 3339; "" is now. Turns of the window such words name are favoured,
	// not filtered (ConversationSearchResponse.Window).
	AsOf string `json:"asOf,omitempty" jsonschema:"YYYY-MM-DD or RFC 3339; the reference time of relative dates in the query (default now)"`
}

// TurnResult is a transcript chunk found: its session, turn ids, who spoke
// and when.
type TurnResult struct {
	Session   string   `json:"session"`
	Turns     []string `json:"turns"`
	Role      string   `json:"role,omitempty"`
	Speaker   string   `json:"speaker,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
	Channel   string   `json:"channel,omitempty"`  // where the turn came from (Turn.Channel)
	SourceID  string   `json:"sourceId,omitempty"` // the chat or contact in the channel
	Snippet   string   `json:"snippet"`
	// Context is the end of the turn before (what this turn answers, when
	// it is a reply), around the query's words; "" for a first turn.
	Context string  `json:"context,omitempty"`
	Score   float64 `json:"score"`
	Lines   Lines   `json:"lines"` // lines of the transcript file
}

// ConversationSearchResponse holds results best first.
type ConversationSearchResponse struct {
	Query   string       `json:"query"`
	Mode    string       `json:"mode"`
	Reason  string       `json:"reason"`
	Results []TurnResult `json:"results"`
	Timing  Timing       `json:"timing"`
	// Window is the days the query's time words named, resolved against
	// the request's AsOf; nil when it names none.
	Window *TimeWindow `json:"window,omitempty"`
}

// TimeWindow is the days a phrase of a query names ("last Saturday"):
// from the start of Since's day to the end of Until's, RFC 3339 in the
// home's zone.
type TimeWindow struct {
	Since  string `json:"since"`
	Until  string `json:"until"`
	Phrase string `json:"phrase"`
}

// Search modes.
const (
	ModeKeyword = "keyword"
	ModeHybrid  = "hybrid"
)
