package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/browse"
	"github.com/memhost/memhost/host/notebook"
)

// TestPageMaxBytes: a page read with MaxBytes answers its start, cut back
// to a whole UTF-8 character, truncated and without a hash (a save naming
// it can never overwrite the whole); a page within the bound is whole. A
// FIFO is refused without blocking.
func TestPageMaxBytes(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	ctx := context.Background()
	dir := h.NotebookDir()
	text := "ab" + strings.Repeat("é", 10) // 2 + 20 bytes
	os.WriteFile(filepath.Join(dir, "p.md"), []byte(text), 0o644)

	p, err := h.Page(ctx, memhost.PageRequest{Path: "p.md", MaxBytes: 5}) // "ab" + é + half an é
	if err != nil || !p.Truncated || p.Text != "abé" || p.Hash != "" || p.SizeBytes != int64(len(text)) {
		t.Fatalf("truncated: %+v %v", p, err)
	}
	if _, err := h.SavePage(ctx, memhost.SavePageRequest{Path: "p.md", Text: p.Text, BaseHash: p.Hash}); err == nil {
		t.Fatal("a save of the truncated text with its (empty) hash overwrote the page")
	}
	p, err = h.Page(ctx, memhost.PageRequest{Path: "p.md", MaxBytes: int64(len(text))})
	if err != nil || p.Truncated || p.Text != text || p.Hash != browse.PageHash([]byte(text)) {
		t.Fatalf("whole within the bound: %+v %v", p, err)
	}

	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := h.Page(ctx, memhost.PageRequest{Path: "fifo.md", MaxBytes: 5}); done <- err }()
	select {
	case err := <-done:
		if fault.KindOf(err) != fault.BadInput || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("reading the start of a FIFO blocks")
	}
	if _, err := h.Page(ctx, memhost.PageRequest{Path: "none.md", MaxBytes: 5}); !errors.Is(err, notebook.ErrNotFound) {
		t.Errorf("a missing page: %v", err)
	}
}
