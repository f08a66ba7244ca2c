// Package sessions keeps conversation transcripts: sessions/ID.jsonl in the
// home, one JSON turn per line (memhost.Turn), only ever appended to.
// It writes turns (whole lines, flushed to disk, one writer at a time per
// file), imports transcripts of other formats (Claude Code's), reads a
// transcript's working context for compaction, records flush receipts,
// and turns a transcript's lines into index chunks. Every JSONL file is
// read through ReadLines.
//
// It knows nothing of the index beyond index.Chunk: the caller indexes a
// transcript after a write (package host does, before it returns).
package sessions
