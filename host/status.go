package host

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/memhost/memhost/index"
)

// StatusResponse summarises a home.
type StatusResponse struct {
	Home        string `json:"home"`
	Notebook    string `json:"notebook"`
	Files       int    `json:"files"`  // indexed pages
	Chunks      int    `json:"chunks"` // indexed chunks
	Stale       int    `json:"stale"`  // pages new, edited or deleted since the last sync
	LastSync    string `json:"lastSync,omitempty"`
	DBSizeBytes int64  `json:"dbSizeBytes"`
	Mode        string `json:"mode"`
	Reason      string `json:"reason"`             // why the mode is keyword; "" when hybrid
	Provider    string `json:"provider,omitempty"` // the active embeddings plugin
	Model       string `json:"model,omitempty"`    // its model id
	Dimensions  int    `json:"dimensions,omitempty"`
	Pending     int    `json:"pending"`  // chunks waiting for a vector of the model
	Embedded    int    `json:"embedded"` // chunks with one
	// Pre-compaction flushes asked of agents (memhost session check).
	Flushes   int           `json:"flushes"`
	LastFlush *FlushReceipt `json:"lastFlush,omitempty"`
}

// Status reports the index without changing it: stale pages are counted,
// not indexed.
func (h *Host) Status(ctx context.Context) (StatusResponse, error) {
	resp := StatusResponse{Home: h.home, Notebook: h.notebook.Root(), Mode: ModeKeyword}
	st, err := h.idx.Stats(ctx)
	if err != nil {
		return resp, err
	}
	resp.Files, resp.Chunks, resp.DBSizeBytes = st.Files, st.Chunks, st.SizeBytes
	if resp.LastSync, err = h.idx.Meta(ctx, "last_sync"); err != nil {
		return resp, err
	}
	files, err := h.Files(ctx)
	if err != nil {
		return resp, err
	}
	for _, f := range files.Files {
		if f.Stale {
			resp.Stale++
		}
	}
	resp.Embedded, resp.Pending, err = h.idx.VectorCounts(ctx)
	if err != nil {
		return resp, err
	}
	resp.Mode, resp.Reason = h.searchMode(ctx, &resp)
	rs, err := h.receipts()
	if err != nil {
		return resp, err
	}
	if resp.Flushes = len(rs); len(rs) > 0 {
		resp.LastFlush = &rs[len(rs)-1]
	}
	return resp, nil
}

// searchMode says what a recall would do now, without embedding anything
// or changing the index's model.
func (h *Host) searchMode(ctx context.Context, resp *StatusResponse) (mode, why string) {
	sem, err := h.ready(ctx)
	if err != nil {
		return ModeKeyword, reason(err)
	}
	resp.Provider, resp.Model, resp.Dimensions = sem.name, sem.info.ModelID, sem.info.Dimensions
	current, err := h.idx.VectorModel(ctx)
	if err != nil {
		return ModeKeyword, err.Error()
	}
	if current.Model != sem.model.Model || current.Dimensions != sem.model.Dimensions {
		resp.Pending, resp.Embedded = resp.Pending+resp.Embedded, 0 // all of them, for the new model
	}
	if resp.Pending > 0 {
		total := resp.Pending + resp.Embedded
		return ModeKeyword, fmt.Sprintf("embedding with %s: %d of %d chunks done (%.0f%%); hybrid when complete",
			sem.name, resp.Embedded, total, 100*float64(resp.Embedded)/float64(max(total, 1)))
	}
	return ModeHybrid, ""
}

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
func (h *Host) Files(ctx context.Context) (FilesResponse, error) {
	indexed, err := h.idx.Files(ctx)
	if err != nil {
		return FilesResponse{}, err
	}
	disk, problems, err := h.scan()
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
		if h.mayHaveChanged(d, f) {
			check = append(check, d)
			continue
		}
		out = append(out, fileInfo(f, false, "indexed"))
	}
	for r := range h.examine(ctx, check, indexed) {
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
