// Package memhost holds memhost's domain types: what the operations take
// and return (every request and response, turns, hits, lines, health
// reports), and Change, what a write tells the rest of the program it
// changed. The semantic tier's types (facts, entities, relations,
// consolidation) are in knowledge. It imports nothing of ours but four
// leaves (knowledge, fault, internal/jsoncheck, internal/origin: see
// internal/lint), so that every other package, the SQL one included, can
// speak in these types.
package memhost
