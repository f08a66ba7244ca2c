package facts

import (
	"github.com/memhost/memhost/index/factrows"
	"github.com/memhost/memhost/knowledge"
)

// Rows are the index rows of an entity page.
func Rows(e Entity) *factrows.Entity {
	r := &factrows.Entity{Slug: e.Slug, Title: e.Meta.Title, Aliases: e.Meta.Aliases, Tags: e.Meta.Tags,
		Created: e.Meta.Created, Updated: e.Meta.Updated}
	if r.Title == "" {
		r.Title = e.Slug
	}
	for _, f := range e.Facts {
		session, turn, path, line := ParseSource(f.Source)
		row := knowledge.FactRow{FactID: f.ID, Path: Path(e.Slug), Line: f.Line, Entity: e.Slug, Attribute: f.Attribute, Value: f.Value,
			Confidence: f.Confidence, Source: f.Source, SourceSession: session, SourceTurn: turn, SourcePath: path, SourceLine: line,
			Seen: f.Seen, Confirmed: f.Confirmed, Until: f.Until, Forgotten: f.ForgotOn, Supersedes: f.Supersedes,
			SupersededBy: f.SupersededBy, Status: f.Status}
		for _, x := range f.Extra {
			row.Extra = append(row.Extra, map[string]string{"key": x.Key, "value": x.Value})
		}
		r.Facts = append(r.Facts, row)
	}
	for _, rel := range e.Relations() {
		r.Relations = append(r.Relations, knowledge.RelationRow{From: rel.From, Relation: rel.Relation, To: rel.To, Weight: rel.Weight,
			Source: rel.Source, FactID: rel.FactID, Since: rel.Since})
	}
	return r
}

// FromRows is the entity the index rows of a page describe: what Render
// needs to write the page again (TestRoundTripThroughIndex).
func FromRows(er knowledge.EntityRow, rows []knowledge.FactRow) Entity {
	e := Entity{Slug: er.Slug, Meta: Meta{Title: er.Title, Aliases: er.Aliases, Tags: er.Tags, Created: er.Created, Updated: er.Updated}}
	if len(e.Meta.Aliases) == 0 {
		e.Meta.Aliases = nil
	}
	if len(e.Meta.Tags) == 0 {
		e.Meta.Tags = nil
	}
	for _, r := range rows {
		f := knowledge.Fact{ID: r.FactID, Entity: r.Entity, Attribute: r.Attribute, Value: r.Value, Confidence: r.Confidence, Seen: r.Seen,
			Confirmed: r.Confirmed, Until: r.Until, ForgotOn: r.Forgotten, Supersedes: r.Supersedes, Source: r.Source,
			Status: r.Status, SupersededBy: r.SupersededBy, Line: r.Line, HasID: true, Struck: r.Status != Current}
		for _, x := range r.Extra {
			f.Extra = append(f.Extra, knowledge.Field{Key: x["key"], Value: x["value"]})
		}
		e.Facts = append(e.Facts, f)
	}
	return e
}
