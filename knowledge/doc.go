// Package knowledge holds the domain types of the semantic tier: facts as
// entity pages hold them (Fact) and as the index stores them (FactRow,
// EntityRow, RelationRow), and the requests and responses of the fact and
// consolidation operations. Entity pages live in the notebook's
// knowledge/entities/. Like the root package, of which it is the part one
// tier needs, it imports nothing of ours, so every package may use it.
package knowledge
