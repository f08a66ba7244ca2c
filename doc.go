// Package memhost holds memhost's domain types: what the operations take
// and return (pages, hits, turns, facts, entities, relations, every request
// and response), and Change, what a write tells the rest of the program it
// changed. It imports nothing of ours but host/fault (a leaf), so that
// every other package, the SQL one included, can speak in these types.
package memhost
