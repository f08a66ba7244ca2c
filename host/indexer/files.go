package indexer

import (
	"context"
	"sort"
	"time"

	"github.com/memhost/memhost/index"
)

// FilesResponse lists pages known to the index or on disk.
type FilesResponse struct {
	Files []FileInfo `json:"files"`
}

// FileInfo is one page. Stale means the index does not hold the page as it
// is on disk: it is new, edited or deleted since the last sync.
type FileInfo struct {
	Path   string `json:"path"`
	Hash   string `json:"hash"` // as indexed; "" when not indexed
	Mtime  string `json:"mtime,omitempty"`
	Size   int64  `json:"size"`
	Chunks int    `json:"chunks"`
	Stale  bool   `json:"stale"`
	State  string `json:"state"` // indexed | new | edited | deleted | unindexable
}

// Files compares the index with the notebook on disk, hashing only pages
// whose size or time changed.
func (x *Indexer) Files(ctx context.Context) (FilesResponse, error) {
	indexed, err := x.opts.Index.Files(ctx)
	if err != nil {
		return FilesResponse{}, err
	}
	disk, problems, err := x.scan()
	if err != nil {
		return FilesResponse{}, err
	}
	out := []FileInfo{}
	seen := map[string]bool{}
	var check []diskFile
	for _, d := range disk {
		seen[d.rel] = true
		f, ok := indexed[d.rel]
		if !ok {
			out = append(out, FileInfo{Path: d.rel, Size: d.size, Mtime: d.mtime.UTC().Format(time.RFC3339), Stale: true, State: "new"})
			continue
		}
		if mayHaveChanged(d, f) {
			check = append(check, d)
			continue
		}
		out = append(out, fileInfo(f, false, "indexed"))
	}
	for r := range x.examine(ctx, check, indexed) {
		f := indexed[r.file.rel]
		switch {
		case r.skip:
			out = append(out, FileInfo{Path: r.file.rel, Size: r.file.size, Stale: true, State: "unindexable"})
		case r.update != nil:
			out = append(out, fileInfo(f, true, "edited"))
		default:
			out = append(out, fileInfo(f, false, "indexed"))
		}
	}
	for p, f := range indexed {
		if !seen[p] {
			out = append(out, fileInfo(f, true, "deleted"))
		}
	}
	for _, p := range problems {
		if !seen[p.Path] {
			out = append(out, FileInfo{Path: p.Path, Stale: false, State: "unindexable"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return FilesResponse{Files: out}, ctx.Err()
}

func fileInfo(f index.File, stale bool, state string) FileInfo {
	return FileInfo{Path: f.Path, Hash: f.Hash, Mtime: f.Mtime.UTC().Format(time.RFC3339), Size: f.Size, Chunks: f.Chunks, Stale: stale, State: state}
}
