// Package ftsrank adds bm25_topk to SQLite's FTS5: bm25 for a query that
// keeps only its k best rows, which skips the rows that cannot be among
// them (bm25_topk.c says how, and when it is exact). In an OR query of a
// common word most matching rows are such rows, and bm25 spends most of
// its time reading each one's length.
package ftsrank

// #cgo linux LDFLAGS: -lm
// #include "fts5.h"
// int memhostFtsrankInit(sqlite3*, char**, const sqlite3_api_routines*);
import "C"

import "sync"

var once sync.Once

// Auto registers bm25_topk on every SQLite connection the process opens
// from now on (sqlite3_auto_extension), as sqlite-vec's Auto does.
//
//	bm25_topk(table, k, w0, w1, ...)
//
// is bm25(table, w0, w1, ...) for a query ordered by it with LIMIT k and
// no filter on another table; rows that cannot rank among the k best
// score 0.0 (worse than any score). k = 0 is bm25 itself.
func Auto() {
	once.Do(func() { C.sqlite3_auto_extension((*[0]byte)(C.memhostFtsrankInit)) })
}
