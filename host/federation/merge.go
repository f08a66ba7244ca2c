package federation

import (
	"context"
	"os"
	"path/filepath"
	"strconv"

	"github.com/memhost/memhost/host/federation/filemerge"
)

// Three-way merges of one file. Git's own merge (merge-tree) merges what
// it can line by line; a file it cannot merge is decided by the rules of
// memhost's files in package filemerge (see its comment); this file runs
// git merge-file for the text rule and re-exports the rules host uses.

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
	out, err := r.gitIO(ctx, nil, nil, "merge-file", "-p", "--diff3", "--marker-size="+strconv.Itoa(filemerge.MarkerSize), files[0], files[1], files[2])
	if err != nil && exitCode(err) < 0 || exitCode(err) > 127 {
		return nil, false, err
	}
	if err == nil {
		return out, true, nil
	}
	merged, ok = filemerge.ResolveInsertions(out, ours, theirs)
	return merged, ok, nil
}

// MergeJSONL merges two versions of an append-only JSONL file (see the
// rules at the top); base may be nil.
func MergeJSONL(base, ours, theirs []byte) []byte { return filemerge.JSONL(base, ours, theirs) }

// MergeText merges two versions of a text file line-wise against base
// (nil when unknown: then only lines both sides share are matched, and
// every other line of both is kept); ok is false when both sides changed
// the same lines. tmp is a folder for git merge-file's inputs.
func (r *Repo) MergeText(ctx context.Context, tmp string, base, ours, theirs []byte) ([]byte, bool, error) {
	return r.mergeText(ctx, tmp, base, ours, theirs)
}

// SiblingPath is where the other side of a file that cannot be merged is
// kept: NAME.conflict-ID.EXT beside it, ID the first 8 characters of id.
func SiblingPath(p, id string) string { return filemerge.SiblingPath(p, id) }

// IsConflictSibling reports whether a path is a sibling page made by a
// merge (see Conflict).
func IsConflictSibling(p string) bool { return filemerge.IsConflictSibling(p) }
