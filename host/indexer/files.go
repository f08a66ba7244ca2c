package indexer

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/internal/fsx"
)

// States of a page in FileInfo.
const (
	StateIndexed = "indexed"
	StateNew     = "new"
	StateEdited  = "edited"
	StateDeleted = "deleted"
	// StateTooLarge: the page is over MaxPageBytes (a transcript over
	// MaxTranscriptBytes) and is not indexed; a version indexed before it
	// grew is dropped by the next sync.
	StateTooLarge = "too-large"
	// StateUnreadable: the page cannot be read (its permissions).
	StateUnreadable = "unreadable"
	// StateUnindexable: anything else the scan refuses, such as a symlink
	// that leads out of the notebook.
	StateUnindexable = "unindexable"
)

// Indexable reports whether a state is one a sync can bring into the
// index; false for too-large, unreadable and unindexable pages.
func Indexable(state string) bool {
	return state != StateTooLarge && state != StateUnreadable && state != StateUnindexable
}

// Files compares the index with the notebook on disk, hashing only pages
// whose size or time changed.
func (x *Indexer) Files(ctx context.Context) (memhost.FilesResponse, error) {
	indexed, err := x.opts.Index.Files(ctx)
	if err != nil {
		return memhost.FilesResponse{}, err
	}
	disk, problems, err := x.scan()
	if err != nil {
		return memhost.FilesResponse{}, err
	}
	out := []memhost.FileInfo{}
	seen := map[string]bool{}
	var check []diskFile
	for _, d := range disk {
		seen[d.rel] = true
		f, ok := indexed[d.rel]
		if !ok {
			info := memhost.FileInfo{Path: d.rel, Size: d.size, Mtime: d.mtime.UTC().Format(time.RFC3339), Stale: true, State: StateNew}
			if state := unindexable(d); state != "" {
				info.Stale, info.State = false, state
			}
			out = append(out, info)
			continue
		}
		if mayHaveChanged(d, f) {
			check = append(check, d)
			continue
		}
		out = append(out, fileInfo(f, false, StateIndexed))
	}
	for r := range x.examine(ctx, check, indexed) {
		f := indexed[r.file.rel]
		switch {
		case r.skip && r.problem == "":
			out = append(out, fileInfo(f, true, StateDeleted)) // since the scan
		case r.skip:
			state := unindexable(r.file)
			if state == "" {
				state = StateUnreadable // it failed to read just now
			}
			out = append(out, memhost.FileInfo{Path: r.file.rel, Size: r.file.size, State: state})
		case r.update != nil:
			out = append(out, fileInfo(f, true, StateEdited))
		default:
			out = append(out, fileInfo(f, false, StateIndexed))
		}
	}
	for p, f := range indexed {
		if !seen[p] {
			out = append(out, fileInfo(f, true, StateDeleted))
		}
	}
	for _, p := range problems {
		if !seen[p.Path] {
			out = append(out, memhost.FileInfo{Path: p.Path, Stale: false, State: StateUnindexable})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return memhost.FilesResponse{Files: out}, ctx.Err()
}

// unindexable returns why no sync can index a page found on disk:
// StateTooLarge, StateUnreadable, or "" when it may be indexed. Only pages
// not indexed as they are pay for the open.
func unindexable(d diskFile) string {
	limit := int64(MaxPageBytes)
	if sessions.IsPath(d.rel) {
		limit = MaxTranscriptBytes
	}
	if d.size > limit {
		return StateTooLarge
	}
	// Opened without blocking: it was a regular file when scanned, but a
	// FIFO may have taken its place since.
	f, err := fsx.OpenFile(d.abs, os.O_RDONLY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "" // removed since the scan: nothing to say
	case errors.Is(err, fsx.ErrNotRegular):
		return StateUnindexable
	case err != nil:
		return StateUnreadable
	}
	f.Close()
	return ""
}

func fileInfo(f index.File, stale bool, state string) memhost.FileInfo {
	return memhost.FileInfo{Path: f.Path, Hash: f.Hash, Mtime: f.Mtime.UTC().Format(time.RFC3339), Size: f.Size, Chunks: f.Chunks, Stale: stale, State: state}
}
