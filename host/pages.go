package host

import (
	"context"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/prompt"
	"github.com/memhost/memhost/host/requests"
)

// Get reads a page.
func (o hostOps) Get(ctx context.Context, req memhost.GetRequest) (memhost.GetResponse, error) {
	h := o.h
	rel, err := h.notebook.Clean(req.Path)
	if err != nil {
		return memhost.GetResponse{}, err
	}
	if req.StartLine < 0 || req.Lines < 0 {
		return memhost.GetResponse{}, fault.BadInputf("startLine", "line numbers must be positive")
	}
	data, err := h.notebook.Read(rel)
	if err != nil {
		return memhost.GetResponse{}, err
	}
	lines := markdown.Lines(string(data))
	start := max(req.StartLine, 1)
	if start > len(lines) && !(start == 1 && len(lines) == 0) {
		return memhost.GetResponse{}, fault.BadInputf("startLine", "start line %d is past the end of %s (%d lines)", start, rel, len(lines))
	}
	end := len(lines)
	if req.Lines > 0 {
		end = min(end, start-1+req.Lines)
	}
	text := ""
	if end >= start {
		text = strings.Join(lines[start-1:end], "\n") + "\n"
	}
	return memhost.GetResponse{Path: rel, Text: text, Lines: memhost.Lines{Start: start, End: end}, TotalLines: len(lines)}, nil
}

// Write writes to a page, creating it and its folders when missing, and
// indexes it before returning.
func (o hostOps) Write(ctx context.Context, req memhost.WriteRequest) (out memhost.WriteResponse, err error) {
	h := o.h
	text, err := notebook.CleanText(req.Text)
	if err != nil {
		return memhost.WriteResponse{}, err
	}
	text, redacted, err := h.redact("text", text)
	if err != nil {
		return memhost.WriteResponse{}, err
	}
	defer func() {
		if err == nil {
			out.Redacted = redacted
		}
	}()
	if err := notebook.CheckSection(req.Section); err != nil {
		return memhost.WriteResponse{}, err
	}
	if req.Section != "" {
		if err := noSections("text", text, 0); err != nil {
			return memhost.WriteResponse{}, err
		}
	}
	rel, err := h.notebook.Clean(req.Path)
	if err != nil {
		return memhost.WriteResponse{}, err
	}
	resp := memhost.WriteResponse{Path: rel, Section: notebook.SectionName(req.Section)}
	_, _, err = h.once.Update(ctx, once.Request{Op: api.OpWrite.Name, ID: req.RequestID, Resp: &resp}, rel, func(old []byte, exists bool) ([]byte, error) {
		resp.Created = !exists
		var e notebook.Edit
		if req.Replace {
			e = notebook.Replace(string(old), req.Section, text)
		} else {
			e = notebook.Append(string(old), req.Section, text)
		}
		resp.Lines = memhost.Lines{Start: e.StartLine, End: e.EndLine}
		return []byte(e.Page), nil
	})
	if err != nil {
		return memhost.WriteResponse{}, err
	}
	resp.Warnings = h.indexWritten(ctx, rel)
	return resp, nil
}

// Remove deletes a page and drops it from the index.
func (o hostOps) Remove(ctx context.Context, req memhost.RemoveRequest) (out memhost.RemoveResponse, err error) {
	h := o.h
	rel, err := h.notebook.Clean(req.Path)
	if err != nil {
		return memhost.RemoveResponse{}, err
	}
	resp := memhost.RemoveResponse{Path: rel}
	var landed *requests.Record
	if err := h.notebook.RemoveGuarded(ctx, rel, h.once.Guard(once.Request{Op: api.OpRemove.Name, ID: req.RequestID, Resp: &resp}, rel, "", &landed)); err != nil {
		return memhost.RemoveResponse{}, err
	}
	resp.Warnings = h.indexWritten(ctx, rel)
	return resp, nil
}

// Context assembles the block an agent puts in its system prompt (see
// prompt.Build): reference pages, then today's and recent daily logs,
// then the current facts of the most-mentioned entities (contextFacts).
// With a query it is the memory context instead (recall.MemoryContext),
// with a session that session's working memory (SessionService.Working).
func (o hostOps) Context(ctx context.Context, req memhost.ContextRequest) (memhost.ContextResponse, error) {
	h := o.h
	switch {
	case req.Session != "":
		return h.impl.SessionService.Working(ctx, req)
	case req.Query != "" || req.Memory():
		return h.impl.RecallService.MemoryContext(ctx, req) // settings without a query: the query is missing
	}
	b, err := prompt.Build(h.notebook, h.config().Memory.Prompt, h.now().In(h.loc()))
	if err != nil {
		return b, err
	}
	return h.impl.ContextFacts(ctx, b)
}
