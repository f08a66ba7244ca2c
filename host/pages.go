package host

import (
	"context"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/prompt"
	"github.com/memhost/memhost/host/requests"
)

// GetRequest reads a page or a range of its lines (memory_get).
type GetRequest struct {
	Path      string `json:"path"`
	StartLine int    `json:"startLine,omitempty"` // 1-based; 0 means 1
	Lines     int    `json:"lines,omitempty"`     // 0 means to the end
}

// GetResponse is the text read.
type GetResponse struct {
	Path       string `json:"path"`
	Text       string `json:"text"`
	Lines      Lines  `json:"lines"`
	TotalLines int    `json:"totalLines"`
}

// Get reads a page.
func (h *Host) Get(ctx context.Context, req GetRequest) (GetResponse, error) {
	rel, err := h.notebook.Clean(req.Path)
	if err != nil {
		return GetResponse{}, err
	}
	if req.StartLine < 0 || req.Lines < 0 {
		return GetResponse{}, fault.BadInputf("startLine", "line numbers must be positive")
	}
	data, err := h.notebook.Read(rel)
	if err != nil {
		return GetResponse{}, err
	}
	lines := markdown.Lines(string(data))
	start := max(req.StartLine, 1)
	if start > len(lines) && !(start == 1 && len(lines) == 0) {
		return GetResponse{}, fault.BadInputf("startLine", "start line %d is past the end of %s (%d lines)", start, rel, len(lines))
	}
	end := len(lines)
	if req.Lines > 0 {
		end = min(end, start-1+req.Lines)
	}
	text := ""
	if end >= start {
		text = strings.Join(lines[start-1:end], "\n") + "\n"
	}
	return GetResponse{Path: rel, Text: text, Lines: Lines{start, end}, TotalLines: len(lines)}, nil
}

// WriteRequest appends to a page or an H2 section, or replaces the section
// (the whole page when no section is given) (notebook_write).
type WriteRequest struct {
	Path    string `json:"path"`
	Text    string `json:"text"`
	Section string `json:"section,omitempty"`
	Replace bool   `json:"replace,omitempty"`
	// RequestID, when set, makes the write idempotent: a run with the id
	// of one that landed writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
}

// WriteResponse says where text was written.
type WriteResponse struct {
	Path    string `json:"path"`
	Section string `json:"section,omitempty"`
	Lines   Lines  `json:"lines"`
	Created bool   `json:"created"` // the page did not exist before
	// Warnings are troubles after the write (the index could not be
	// updated, or was rebuilt): what was written is stored.
	Warnings []string `json:"warnings,omitempty"`
}

// Write writes to a page, creating it and its folders when missing, and
// indexes it before returning.
func (h *Host) Write(ctx context.Context, req WriteRequest) (out WriteResponse, err error) {
	defer h.wrote(&err, func() memhost.Change {
		return memhost.Change{Op: "write", Paths: memhost.Paths(out.Path), Note: "write: " + section(out.Path, out.Section), Result: &out}
	})
	text, err := notebook.CleanText(req.Text)
	if err != nil {
		return WriteResponse{}, err
	}
	if err := notebook.CheckSection(req.Section); err != nil {
		return WriteResponse{}, err
	}
	if req.Section != "" {
		if err := noSections("text", text, 0); err != nil {
			return WriteResponse{}, err
		}
	}
	rel, err := h.notebook.Clean(req.Path)
	if err != nil {
		return WriteResponse{}, err
	}
	resp := WriteResponse{Path: rel, Section: notebook.SectionName(req.Section)}
	_, _, err = h.once.Update(ctx, once.Request{Op: "write", ID: req.RequestID, Resp: &resp}, rel, func(old []byte, exists bool) ([]byte, error) {
		resp.Created = !exists
		var e notebook.Edit
		if req.Replace {
			e = notebook.Replace(string(old), req.Section, text)
		} else {
			e = notebook.Append(string(old), req.Section, text)
		}
		resp.Lines = Lines{e.StartLine, e.EndLine}
		return []byte(e.Page), nil
	})
	if err != nil {
		return WriteResponse{}, err
	}
	resp.Warnings = h.indexWritten(ctx, rel)
	return resp, nil
}

// RemoveRequest names a page to delete.
type RemoveRequest struct {
	Path string `json:"path"`
	// RequestID, when set, makes the write idempotent: a run with the id
	// of one that landed writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
}

// RemoveResponse names the page removed.
type RemoveResponse struct {
	Path string `json:"path"`
	// Warnings are troubles after the write (the index could not be
	// updated, or was rebuilt): what was written is stored.
	Warnings []string `json:"warnings,omitempty"`
}

// Remove deletes a page and drops it from the index.
func (h *Host) Remove(ctx context.Context, req RemoveRequest) (out RemoveResponse, err error) {
	defer h.wrote(&err, func() memhost.Change {
		return memhost.Change{Op: "rm", Removed: memhost.Paths(out.Path), Note: "rm: " + out.Path, Result: &out}
	})
	rel, err := h.notebook.Clean(req.Path)
	if err != nil {
		return RemoveResponse{}, err
	}
	resp := RemoveResponse{Path: rel}
	var landed *requests.Record
	if err := h.notebook.RemoveGuarded(ctx, rel, h.once.Guard(once.Request{Op: "rm", ID: req.RequestID, Resp: &resp}, rel, "", &landed)); err != nil {
		return RemoveResponse{}, err
	}
	resp.Warnings = h.indexWritten(ctx, rel)
	return resp, nil
}

// ContextRequest asks for the system-prompt block; it has no parameters.
type ContextRequest struct{}

// Prompt block types, from package prompt.
type (
	ContextResponse = prompt.Block
	ContextFile     = prompt.File
)

// Context assembles the block an agent puts in its system prompt (see
// prompt.Build): reference pages, then today's and recent daily logs,
// then the current facts of the most-mentioned entities (contextFacts).
func (h *Host) Context(ctx context.Context, _ ContextRequest) (ContextResponse, error) {
	b, err := prompt.Build(h.notebook, h.config().Memory.Prompt, h.now().In(h.loc()))
	if err != nil {
		return b, err
	}
	return h.ContextFacts(ctx, b)
}
