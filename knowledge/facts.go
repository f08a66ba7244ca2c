package knowledge

// FactRow is one fact as the index holds it.
type FactRow struct {
	FactID        string              `json:"id"`
	Path          string              `json:"path"`
	Line          int                 `json:"line"`
	Entity        string              `json:"entity"`
	Attribute     string              `json:"attribute"`
	Value         string              `json:"value"`
	Confidence    float64             `json:"confidence"`
	Source        string              `json:"source,omitempty"`
	SourceSession string              `json:"sourceSession,omitempty"`
	SourceTurn    string              `json:"sourceTurn,omitempty"`
	SourcePath    string              `json:"sourcePath,omitempty"`
	SourceLine    int                 `json:"sourceLine,omitempty"`
	Seen          string              `json:"seen,omitempty"`
	Confirmed     string              `json:"confirmed,omitempty"`
	Until         string              `json:"until,omitempty"`
	Forgotten     string              `json:"forgotten,omitempty"`
	Supersedes    string              `json:"supersedes,omitempty"`
	SupersededBy  string              `json:"supersededBy,omitempty"`
	Status        string              `json:"status"`
	Extra         []map[string]string `json:"extra,omitempty"` // [{"key": k, "value": v}] in page order
	// Score is the match's score in SearchFacts (0..1, the best 1).
	Score float64 `json:"score,omitempty"`
}

// RelationRow is an edge of the entity graph.
type RelationRow struct {
	From     string  `json:"from"`
	Relation string  `json:"relation"`
	To       string  `json:"to"`
	Weight   float64 `json:"weight"`
	Source   string  `json:"source,omitempty"`
	FactID   string  `json:"factId"`
	Path     string  `json:"path"`
	Since    string  `json:"since,omitempty"`
}

// EntityRow is one entity page as the index holds it.
type EntityRow struct {
	Slug      string   `json:"slug"`
	Path      string   `json:"path"`
	Title     string   `json:"title"`
	Aliases   []string `json:"aliases"`
	Tags      []string `json:"tags"`
	Created   string   `json:"created,omitempty"`
	Updated   string   `json:"updated,omitempty"`
	Current   int      `json:"current"`   // current facts
	History   int      `json:"history"`   // superseded, forgotten and retired facts
	Mentions  int      `json:"mentions"`  // relations pointing at it
	Relations int      `json:"relations"` // relations out of it
}

// Fact is one (entity, attribute, value) with its provenance.
type Fact struct {
	ID         string  `json:"id"` // block id, without the ^; derived (see Page) when the line has none
	Entity     string  `json:"entity"`
	Attribute  string  `json:"attribute"`
	Value      string  `json:"value"`
	Confidence float64 `json:"confidence"`          // 0..1
	Seen       string  `json:"seen,omitempty"`      // YYYY-MM-DD, first seen
	Confirmed  string  `json:"confirmed,omitempty"` // YYYY-MM-DD, last confirmed; "" means Seen
	Until      string  `json:"until,omitempty"`     // YYYY-MM-DD it stopped being current
	ForgotOn   string  `json:"forgotten,omitempty"` // YYYY-MM-DD it was forgotten
	Supersedes string  `json:"supersedes,omitempty"`
	Source     string  `json:"source,omitempty"`
	Struck     bool    `json:"-"`
	Status     string  `json:"status"` // Current, Superseded, Forgotten or Retired (set by Parse)
	// SupersededBy is the id of the fact that superseded this one (set by
	// Parse from the other fact's Supersedes).
	SupersededBy string `json:"supersededBy,omitempty"`
	Line         int    `json:"line"` // 1-based line on the page
	// Extra are inline fields memhost does not know, kept in order.
	Extra []Field `json:"extra,omitempty"`
	// HasID reports whether the page holds the id (else it was derived).
	HasID bool `json:"-"`
}

// Field is an inline field [key:: value].
type Field struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// LastConfirmed is Confirmed, or Seen when it is empty.
func (f Fact) LastConfirmed() string {
	if f.Confirmed != "" {
		return f.Confirmed
	}
	return f.Seen
}
