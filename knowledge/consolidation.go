package knowledge

// ConsolidateRequest asks for the episodes not yet consolidated to be
// turned into facts.
type ConsolidateRequest struct {
	// Since limits the episodes to those at or after it: YYYY-MM-DD (the
	// day's start) or RFC 3339. "" for all.
	Since string `json:"since,omitempty"`
}

// ConsolidateResponse says what a consolidation did.
type ConsolidateResponse struct {
	Episodes     int                `json:"episodes"` // episodes read that were not consolidated before
	Batches      int                `json:"batches"`  // generator calls that were answered well
	Applied      []ConsolidatedFact `json:"applied"`
	Skipped      []SkippedBatch     `json:"skipped"`
	Model        string             `json:"model,omitempty"`
	InputTokens  int                `json:"inputTokens"`
	OutputTokens int                `json:"outputTokens"`
	// Warnings are troubles after writes (a page written but not indexed
	// yet): what was written is stored.
	Warnings []string `json:"warnings,omitempty"`
	// Written are the pages the facts were written to, once each, in
	// order: what the run changed (not part of the answer's JSON).
	Written []string `json:"-"`
}

// ConsolidatedFact is one fact the generator found, as fact add applied it.
type ConsolidatedFact struct {
	Entity     string   `json:"entity"` // the slug
	Attribute  string   `json:"attribute"`
	Value      string   `json:"value"`
	ID         string   `json:"id"`
	Source     string   `json:"source"`
	Day        string   `json:"day"`
	Confirmed  bool     `json:"confirmed"` // already known: its dates were updated
	Stale      bool     `json:"stale"`     // older than the current value: not written
	Superseded []string `json:"superseded,omitempty"`
}

// SkippedBatch is a batch of episodes whose answers were bad twice: they
// stay unconsolidated, and the next run tries them again.
type SkippedBatch struct {
	Group    string   `json:"group"`    // the session or daily page
	Episodes []string `json:"episodes"` // their sources
	Reason   string   `json:"reason"`
}

// ConsolidationRun is what one consolidation did, kept in
// brain/consolidated.json as its "last" for status.
type ConsolidationRun struct {
	Started  string `json:"started"`  // RFC 3339
	Finished string `json:"finished"` // RFC 3339
	Episodes int    `json:"episodes"` // episodes read that were not consolidated before
	Applied  int    `json:"applied"`  // facts applied (added, superseding, or confirmed)
	Skipped  int    `json:"skipped"`  // batches skipped after two bad answers
	Model    string `json:"model,omitempty"`
	Error    string `json:"error,omitempty"` // why the run stopped, when it did
	Warnings int    `json:"warnings,omitempty"`
}

// ConsolidationStatus is the generator and the last consolidation, as
// status shows them. It does not start the generator plugin: memhost
// plugins status does, to check it answers.
type ConsolidationStatus struct {
	Plugin   string            `json:"plugin,omitempty"` // memory.generator.plugin; "" for none
	State    string            `json:"state"`            // "none", "configured" or "in process" (SetGenerator)
	EveryMin int               `json:"everyMin"`         // memhost serve consolidates this often; 0 = off
	Last     *ConsolidationRun `json:"last,omitempty"`
}

// FactAddRequest adds a fact about an entity.
type FactAddRequest struct {
	Entity     string  `json:"entity" jsonschema:"a name, e.g. Sarah Chen"` // a name ("Sarah Chen"), its slug, title or an alias
	Attribute  string  `json:"attribute" jsonschema:"short, lower-case, e.g. works at"`
	Value      string  `json:"value" jsonschema:"one line; an entity as [[slug]]"`
	Source     string  `json:"source,omitempty" jsonschema:"e.g. SESSION turn TURN"` // "SESSION turn TURN", "PATH line N", or free text
	Confidence float64 `json:"confidence,omitempty"`                                 // 0 means 1
	// Keep adds the value beside the attribute's current values (an
	// attribute with several values) instead of superseding them.
	Keep bool `json:"keep,omitempty" jsonschema:"keep the current values too"`
	// RequestID, when set, makes the write idempotent: a run with the id
	// of one that landed writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
}

// FactAddResponse says what fact add did.
type FactAddResponse struct {
	Path string `json:"path"`
	// Redacted lists the secrets replaced in the value and the source
	// before they were stored (the secrets policy redact).
	Redacted  []Redaction `json:"redacted,omitempty"`
	Entity    string      `json:"entity"` // the slug
	Created   bool        `json:"created"`
	Fact      Fact        `json:"fact"`
	Confirmed bool        `json:"confirmed"` // the value was already current: only its dates changed
	// Stale: nothing was written; Fact is the current value, confirmed
	// after the day of the fact given (consolidation only).
	Stale      bool      `json:"stale,omitempty"`
	Superseded []Fact    `json:"superseded"`
	NearDups   []NearDup `json:"nearDuplicates,omitempty"`
	// Similarity says whether near-duplicates were looked for by
	// embedding, and if not why ("" when they were).
	Similarity string   `json:"similarity,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

// NearDup is a current fact found to restate the new one.
type NearDup struct {
	ID     string  `json:"id"`
	Cosine float64 `json:"cosine"`
}

// FactsRequest lists facts.
type FactsRequest struct {
	Entity  string `json:"entity,omitempty" jsonschema:"name, slug or alias; default all"`      // "" for every entity
	History bool   `json:"history,omitempty" jsonschema:"also superseded and forgotten values"` // also superseded, forgotten and retired facts
}

// FactsResponse holds facts in page order.
type FactsResponse struct {
	Entity string    `json:"entity,omitempty"` // the slug, when one was asked for
	Facts  []FactRow `json:"facts"`
}

// FactForgetRequest names the facts to forget: one by its id, or the
// current values of an entity's attribute (only Value's, when given).
type FactForgetRequest struct {
	ID        string `json:"id,omitempty"`
	Entity    string `json:"entity,omitempty"`
	Attribute string `json:"attribute,omitempty"`
	Value     string `json:"value,omitempty"`
	// RequestID, when set, makes the write idempotent: a run with the id
	// of one that landed writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
}

// FactForgetResponse lists the facts forgotten.
type FactForgetResponse struct {
	Path      string   `json:"path"`
	Forgotten []Fact   `json:"forgotten"`
	Warnings  []string `json:"warnings,omitempty"`
}

// EntitiesRequest lists the entities; it has no parameters.
type EntitiesRequest struct{}

// EntitiesResponse lists the entity pages by slug.
type EntitiesResponse struct {
	Entities []EntityRow `json:"entities"`
}

// RelationsRequest names an entity.
type RelationsRequest struct {
	Entity string `json:"entity"`
}

// RelationsResponse holds the entity's edges: Out from its current facts'
// wikilinks, In from other pages' links to it.
type RelationsResponse struct {
	Entity string        `json:"entity"`
	Out    []RelationRow `json:"out"`
	In     []RelationRow `json:"in"`
}
