package gitrepo

import (
	"errors"
	"path/filepath"
)

// Dedupe returns s without repeats, in order.
func Dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// ErrDirty means a file of the work tree changed while a merge or a
// fast-forward was writing it: nothing of the local edit is lost, the
// sync stops.
var ErrDirty = errors.New("files changed during the merge")

// Short is an object id as messages show it: its first 12 digits.
func Short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// GitDir is the repository's .git folder.
func (r *Repo) GitDir() string { return filepath.Join(r.Dir, ".git") }

// Modes of git's tree entries.
const (
	ModeFile = 0o100644 // a regular file, not executable
	ModeTree = 0o040000 // a folder
)
