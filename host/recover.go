package host

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/memhost/memhost/index"
)

// indexWritten indexes files memhost has just written. The write is the
// commit point: trouble indexing after it comes back as warnings, never as
// an error, so that an agent does not write the same thing again. A
// corrupt index is moved aside and rebuilt from the files (recoverIndex);
// a page left unindexed is indexed by the next sync.
func (h *Host) indexWritten(ctx context.Context, rels ...string) []string {
	gen := h.idx.Generation()
	err := h.indexer.SyncPaths(ctx, rels...)
	if err == nil {
		return nil
	}
	if index.IsCorrupt(err) {
		msg, rerr := h.recoverIndex(ctx, err, gen)
		if rerr == nil {
			return []string{msg}
		}
		err = rerr
	}
	h.log.Warn("indexing after a write", "paths", rels, "err", err)
	return []string{fmt.Sprintf("written, but not indexed yet (%v); the next sync indexes it", err)}
}

// recoverIndex moves the corrupt index aside (brain/memory.db.corrupt-…,
// kept for inspection) and builds a new one from the notebook and the
// sessions. cause is the error that showed the damage, met in the index's
// Generation gen: if the file was replaced since (by a concurrent
// recovery, or another process), it is only synced.
func (h *Host) recoverIndex(ctx context.Context, cause error, gen int64) (string, error) {
	aside, err := h.idx.Replace(ctx, gen)
	if err != nil {
		return "", fmt.Errorf("the index is corrupt (%v) and could not be moved aside: %w", cause, err)
	}
	res, err := h.indexer.Sync(ctx)
	if err != nil {
		return "", fmt.Errorf("the index was corrupt (%v); rebuilding it failed: %w", cause, err)
	}
	h.queue.Kick()
	where := "another process or request moved it aside"
	if aside != "" {
		where = "moved aside to " + h.rel(aside)
	}
	msg := fmt.Sprintf("the index was corrupt (%v): %s and rebuilt from the files (%d indexed)", cause, where, res.Indexed)
	h.log.Warn(msg)
	return msg, nil
}

// rel names a file of the home relative to it (see relTo).
func (h *Host) rel(path string) string { return relTo(h.home, []string{path})[0] }

// withIndex runs fn; if it fails because the index is corrupt, the index
// is rebuilt (recoverIndex) and fn runs once more.
func (h *Host) withIndex(ctx context.Context, fn func() error) error {
	gen := h.idx.Generation()
	err := fn()
	if !index.IsCorrupt(err) {
		return err
	}
	if _, rerr := h.recoverIndex(ctx, err, gen); rerr != nil {
		return rerr
	}
	return fn()
}

// relTo names paths relative to the home where they lie in it.
func relTo(home string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if r, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(r, "..") {
			p = r
		}
		out[i] = filepath.ToSlash(p)
	}
	return out
}
