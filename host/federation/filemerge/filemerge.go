// Package filemerge holds memhost's rules for merging one notebook or
// sessions file that git could not merge line by line: append-only JSONL
// by union of entries, markdown by uniting lines both sides inserted, and
// the naming of the sibling page that keeps the other side of a conflict.
// It is pure (bytes in, bytes out; running git merge-file is the caller's)
// and may import only the standard library.
package filemerge

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"
	"time"
)

// Three-way merges of one file. Git's own merge (merge-tree) merges what
// it can line by line; a file it cannot merge comes here with its three
// versions (base empty when the file was added on both sides), and the
// rules of memhost's files decide:
//
//   - JSONL (transcripts, receipts): entries are only ever appended, so the
//     result is ours followed by every entry of theirs that ours lacks,
//     entries compared by their "id" (a transcript turn's id) or, without
//     one, by the whole line. Nothing is duplicated, nothing lost.
//   - Text (markdown pages, daily logs): a diff3 merge where every hunk
//     both sides changed is pure insertion on both sides (both appended at
//     the same place) takes ours then theirs' lines that ours does not
//     have. A hunk where both sides changed the same existing lines cannot
//     be merged: ours stays at the path and theirs is kept whole in a
//     sibling page (NAME.conflict-ID.md), reported as a Conflict. So is a
//     page both sides created with different content (AddedOnBoth), but a
//     daily log, which both sides append to, or a list (IsList).

// JSONL merges append-only JSONL files by union of entries.
func JSONL(base, ours, theirs []byte) []byte {
	key := func(line []byte) string {
		var e struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &e) == nil && len(e.ID) > 0 && string(e.ID) != `""` && string(e.ID) != "null" {
			return "id:" + string(e.ID)
		}
		return "line:" + string(line)
	}
	removed := map[string]bool{} // in base, gone from one side: a side's deliberate removal stays
	inOurs := map[string]bool{}
	for _, l := range splitLines(ours) {
		inOurs[key(l)] = true
	}
	inTheirs := map[string]bool{}
	for _, l := range splitLines(theirs) {
		inTheirs[key(l)] = true
	}
	for _, l := range splitLines(base) {
		if k := key(l); !inOurs[k] || !inTheirs[k] {
			removed[k] = true
		}
	}
	var out bytes.Buffer
	seen := map[string]bool{}
	add := func(l []byte) {
		k := key(l)
		if seen[k] || removed[k] {
			return
		}
		seen[k] = true
		out.Write(l)
		out.WriteByte('\n')
	}
	for _, l := range splitLines(ours) {
		add(l)
	}
	for _, l := range splitLines(theirs) {
		add(l)
	}
	return out.Bytes()
}

// splitLines splits a file into its non-empty lines.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// merge-file: long enough that no page line is taken for one.
const MarkerSize = 41

// ResolveInsertions resolves the diff3 conflict blocks of merge-file's
// output where the base part is empty (both sides inserted lines at the
// same place): ours, then theirs' lines ours does not hold. ok is false
// if any block changed base lines.
func ResolveInsertions(out, ours, theirs []byte) ([]byte, bool) {
	open := strings.Repeat("<", MarkerSize)
	mid := strings.Repeat("|", MarkerSize)
	sep := strings.Repeat("=", MarkerSize)
	end := strings.Repeat(">", MarkerSize)
	lines := strings.SplitAfter(string(out), "\n")
	var res strings.Builder
	const (
		outside = iota
		inOurs
		inBase
		inTheirs
	)
	state := outside
	var o, b, t []string
	for _, l := range lines {
		trimmed := strings.TrimRight(l, "\r\n")
		switch {
		case state == outside && strings.HasPrefix(trimmed, open):
			state, o, b, t = inOurs, nil, nil, nil
		case state == inOurs && strings.HasPrefix(trimmed, mid):
			state = inBase
		case (state == inBase || state == inOurs) && trimmed == sep:
			state = inTheirs
		case state == inTheirs && strings.HasPrefix(trimmed, end):
			state = outside
			if len(b) > 0 {
				return nil, false
			}
			if len(o) > 0 && !strings.HasSuffix(o[len(o)-1], "\n") {
				o[len(o)-1] += "\n"
			}
			for _, x := range unionLines(o, t) {
				res.WriteString(x)
			}
		case state == inOurs:
			o = append(o, l)
		case state == inBase:
			b = append(b, l)
		case state == inTheirs:
			t = append(t, l)
		default:
			res.WriteString(l)
		}
	}
	if state != outside {
		return nil, false
	}
	return []byte(res.String()), true
}

// unionLines interleaves two versions of inserted lines: the lines they
// share (a longest common subsequence) once, every other line of each in
// its place, ours before theirs where both inserted something different.
func unionLines(o, t []string) []string {
	key := func(s string) string { return strings.TrimRight(s, "\r\n") }
	if len(o)*len(t) > 4_000_000 { // too large for the table: ours, then theirs' new lines
		have := map[string]bool{}
		for _, x := range o {
			have[key(x)] = true
		}
		out := append([]string(nil), o...)
		for _, x := range t {
			if !have[key(x)] {
				out = append(out, x)
			}
		}
		return out
	}
	// lcs[i][j] is the LCS length of o[i:] and t[j:].
	lcs := make([][]int, len(o)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(t)+1)
	}
	for i := len(o) - 1; i >= 0; i-- {
		for j := len(t) - 1; j >= 0; j-- {
			if key(o[i]) == key(t[j]) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(o) && j < len(t) {
		switch {
		case key(o[i]) == key(t[j]):
			out = append(out, o[i])
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, o[i])
			i++
		default:
			out = append(out, t[j])
			j++
		}
	}
	out = append(out, o[i:]...)
	return append(out, t[j:]...)
}

// AddedOnBoth merges a text file both sides created (no merge base).
// Against an empty base every line of each side is an insertion at the
// same place, which mergeText would unite; but two pages created apart
// under one name ("colour: blue", "colour: green") are two versions of the
// same thing, as much as an existing line changed on both sides. Only when
// one side holds every line of the other, in order (it extended it), is
// the longer one the merge.
func AddedOnBoth(ours, theirs []byte) ([]byte, bool) {
	o, t := strings.SplitAfter(string(ours), "\n"), strings.SplitAfter(string(theirs), "\n")
	switch n := len(unionLines(o, t)); {
	case n == len(o):
		return ours, true
	case n == len(t):
		return theirs, true
	}
	return nil, false
}

// IsDailyLog reports whether p is a daily log (NOTEBOOK/daily/YYYY-MM-DD.md):
// an append-only log that two machines both start on the same day, whose
// entries are united like a transcript's even when both created it.
func IsDailyLog(p string) bool {
	if path.Base(path.Dir(p)) != "daily" {
		return false
	}
	_, err := time.Parse("2006-01-02.md", path.Base(p))
	return err == nil
}

// IsList reports whether p is a page of the notebook's lists/ folder
// (NOTEBOOK/lists/...): a collection of items, which remember appends to,
// so that two machines that each started the same list keep every item.
func IsList(p string) bool {
	parts := strings.Split(p, "/")
	return len(parts) >= 3 && parts[1] == "lists" && strings.HasSuffix(p, ".md")
}

// SiblingPath is where theirs of a conflicting file is kept: beside it,
// NAME.conflict-ID.EXT, ID the first 8 digits of their commit.
func SiblingPath(p, theirsCommit string) string {
	ext := path.Ext(p)
	id := theirsCommit
	if len(id) > 8 {
		id = id[:8]
	}
	return strings.TrimSuffix(p, ext) + ".conflict-" + id + ext
}

// IsConflictSibling reports whether a path is a sibling page made by a
// merge (see Conflict).
func IsConflictSibling(p string) bool {
	base := path.Base(p)
	base = strings.TrimSuffix(base, path.Ext(base))
	i := strings.LastIndex(base, ".conflict-")
	return i > 0 && len(base)-i-len(".conflict-") == 8
}

// IsText: no NUL byte in the first 8000 bytes (git's own test).
func IsText(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return !bytes.ContainsRune(b, 0)
}
