// Package memhost holds memhost's domain types: what the operations take
// and return (the core's requests and responses, hits, lines, the index's
// fact, entity and relation rows), and Change, what a write tells the rest
// of the program it changed. It imports nothing of ours, so that every
// other package, the SQL one included, can speak in these types. (The
// feature services' types are still in their packages: issue 27.)
package memhost
