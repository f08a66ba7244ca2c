package federation

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
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
//     sibling page (NAME.conflict-ID.md), reported as a Conflict.

// Conflict is a file both sides changed in ways that cannot be merged:
// ours stays at Path, theirs is in Sibling (home-relative paths).
type Conflict struct {
	Path    string `json:"path"`
	Sibling string `json:"sibling"`
	Time    string `json:"time"`
	Reason  string `json:"reason"`
}

// mergeJSONL merges append-only JSONL files by union of entries.
func mergeJSONL(base, ours, theirs []byte) []byte {
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

// markerSize is the length of the conflict markers asked of git
// merge-file: long enough that no page line is taken for one.
const markerSize = 41

// mergeText merges a text file line-wise against base with git
// merge-file; ok is false when some hunk changed the same lines on both
// sides (see the comment at the top).
func (r *Repo) mergeText(ctx context.Context, tmp string, base, ours, theirs []byte) (merged []byte, ok bool, err error) {
	dir, err := os.MkdirTemp(tmp, "merge-")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(dir)
	files := [3]string{filepath.Join(dir, "ours"), filepath.Join(dir, "base"), filepath.Join(dir, "theirs")}
	for i, data := range [][]byte{ours, base, theirs} {
		if err := os.WriteFile(files[i], data, 0o600); err != nil {
			return nil, false, err
		}
	}
	out, err := r.gitIO(ctx, nil, nil, "merge-file", "-p", "--diff3", "--marker-size=41", files[0], files[1], files[2])
	if err != nil && exitCode(err) < 0 || exitCode(err) > 127 {
		return nil, false, err
	}
	if err == nil {
		return out, true, nil
	}
	merged, ok = resolveInsertions(out, ours, theirs)
	return merged, ok, nil
}

// resolveInsertions resolves the diff3 conflict blocks of merge-file's
// output where the base part is empty (both sides inserted lines at the
// same place): ours, then theirs' lines ours does not hold. ok is false
// if any block changed base lines.
func resolveInsertions(out, ours, theirs []byte) ([]byte, bool) {
	open := strings.Repeat("<", markerSize)
	mid := strings.Repeat("|", markerSize)
	sep := strings.Repeat("=", markerSize)
	end := strings.Repeat(">", markerSize)
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
			have := map[string]bool{}
			for _, x := range o {
				res.WriteString(x)
				have[strings.TrimRight(x, "\r\n")] = true
			}
			if len(o) > 0 && !strings.HasSuffix(o[len(o)-1], "\n") {
				res.WriteString("\n")
			}
			for _, x := range t {
				k := strings.TrimRight(x, "\r\n")
				if k != "" && have[k] {
					continue
				}
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

// siblingPath is where theirs of a conflicting file is kept: beside it,
// NAME.conflict-ID.EXT, ID the first 8 digits of their commit.
func siblingPath(p, theirsCommit string) string {
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
