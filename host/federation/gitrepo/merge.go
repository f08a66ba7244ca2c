package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strconv"

	"github.com/memhost/memhost/host/federation/filemerge"
)

// Three-way merges of one file. Git's own merge (merge-tree) merges what
// it can line by line; a file it cannot merge is decided by the rules of
// memhost's files in package filemerge (see its comment); MergeText runs
// git merge-file for the text rule.

// MergeText merges a text file line-wise against base with git
// merge-file; ok is false when some hunk changed the same lines on both
// sides (filemerge's rules).
func (r *Repo) MergeText(ctx context.Context, tmp string, base, ours, theirs []byte) (merged []byte, ok bool, err error) {
	dir, err := os.MkdirTemp(tmp, "merge-")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(dir)
	// git runs in the repository's folder: the files are named from the
	// root (tmp may be relative to this process's, as a home given as
	// --home b is).
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, false, err
	}
	files := [3]string{filepath.Join(dir, "ours"), filepath.Join(dir, "base"), filepath.Join(dir, "theirs")}
	for i, data := range [][]byte{ours, base, theirs} {
		if err := os.WriteFile(files[i], data, 0o600); err != nil {
			return nil, false, err
		}
	}
	out, err := r.GitIO(ctx, nil, nil, "merge-file", "-p", "--diff3", "--marker-size="+strconv.Itoa(filemerge.MarkerSize), files[0], files[1], files[2])
	if err != nil && ExitCode(err) < 0 || ExitCode(err) > 127 {
		return nil, false, err
	}
	if err == nil {
		return out, true, nil
	}
	merged, ok = filemerge.ResolveInsertions(out, ours, theirs)
	return merged, ok, nil
}
