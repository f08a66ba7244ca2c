package host

import (
	"context"
	"os"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/route"
)

// Categories of the notebook that remember writes to.
const (
	CategoryLists     = notebook.Lists
	CategoryReference = notebook.Reference
	CategoryKnowledge = notebook.Knowledge
)

// Remember routes text to a page (see Route), appends it as a list item
// under the section, and indexes the page before returning. Text already on
// the page (ignoring case, spacing and list markers) is not added again.
func (o hostOps) Remember(ctx context.Context, req memhost.RememberRequest) (out memhost.RememberResponse, err error) {
	h := o.h
	text, err := notebook.CleanText(req.Text)
	if err != nil {
		return memhost.RememberResponse{}, err
	}
	text, redacted, err := h.redact("text", text)
	if err != nil {
		return memhost.RememberResponse{}, err
	}
	defer func() {
		if err == nil {
			out.Redacted = redacted
		}
	}()
	if err := noSections("text", text, 0); err != nil {
		return memhost.RememberResponse{}, err
	}
	if err := notebook.CheckSection(req.Section); err != nil {
		return memhost.RememberResponse{}, err
	}
	switch req.Category {
	case "", CategoryLists, CategoryReference, CategoryKnowledge:
	default:
		return memhost.RememberResponse{}, fault.BadInputf("category", "unknown category %q (choose from lists, reference, knowledge)", req.Category)
	}
	file := strings.TrimSuffix(strings.TrimSpace(req.File), ".md")
	if strings.ContainsAny(file, `/\`) || file == "." || file == ".." {
		return memhost.RememberResponse{}, fault.BadInputf("file", "page name %q: give a name such as \"contacts\", not a path", req.File)
	}
	if err := notebook.CheckName(file); err != nil {
		return memhost.RememberResponse{}, fault.BadInputf("file", "page name %q: %v", req.File, err)
	}
	if req.Auto && (req.Category != "" || file != "" || req.Section != "") {
		return memhost.RememberResponse{}, fault.BadInputf("auto", "automatic routing chooses the category, page and section itself: give none of them")
	}
	var auto struct {
		r       route.Routed
		tags    []string
		ok      bool
		warning string
	}
	if req.Auto {
		auto.r, auto.tags, auto.ok, auto.warning = route.Ask(ctx, h.notebook, text, h.providers.Generator)
	}
	// Route reads the contacts page's sections (and which pages exist)
	// before the write takes the notebook's lock: routing chooses the page
	// that Update then locks and reads, and the lock is not reentrant, so
	// reading them under it would mean routing inside a lock taken for no
	// page yet. The window is harmless: Update reads the page afresh and
	// writes it whole under the lock, never from what Route saw; a
	// person's section is found again by name there (PersonSection) and
	// created when it is gone; and a section added in between only means
	// the text goes where it would have gone had this remember come first.
	// At worst a section renamed in between gets the entry in a new
	// section under its old name: visible, nothing lost.
	r := route.Route(text, req.Category, file, pages{h})
	if auto.ok {
		r = auto.r
	}
	if req.Section != "" {
		r.Section = notebook.SectionName(req.Section)
		r.Entry, r.Person = "", false // the user chose the section: keep their text whole
	}
	if r.Entry != "" {
		text = r.Entry
	}
	rel, err := h.notebook.Clean(r.Path)
	if err != nil {
		return memhost.RememberResponse{}, err
	}
	entry := text
	if !strings.Contains(text, "\n") && !notebook.IsListItem(text) {
		entry = "- " + text
	}
	resp := memhost.RememberResponse{Path: rel, Section: r.Section}
	if req.Auto {
		resp.Routing = route.RoutedByRules
		if auto.ok {
			resp.Routing = route.RoutedByGenerator
		} else {
			resp.Warnings = append(resp.Warnings, auto.warning)
		}
	}
	rel, _, err = h.once.Update(ctx, once.Request{Op: api.OpRemember.Name, ID: req.RequestID, Resp: &resp}, rel, func(old []byte, exists bool) ([]byte, error) {
		resp.Created = !exists
		page := string(old)
		if start, end, ok := notebook.FindEntry(page, entry); ok {
			resp.Duplicate, resp.Lines = true, memhost.Lines{Start: start, End: end}
			resp.Section = notebook.SectionAt(page, start)
			return nil, notebook.ErrUnchanged
		}
		if !exists {
			page = "# " + notebook.Title(rel) + "\n"
		}
		if r.Person {
			r.Section = notebook.PersonSection(page, r.Section)
		}
		if r.Section == "" {
			r.Section = notebook.Place(page, entry)
		}
		resp.Section, resp.NewSection = r.Section, false
		if r.Section != "" {
			heading, found := notebook.FindSection(page, r.Section)
			if found {
				resp.Section = heading
			}
			resp.NewSection = !found
		}
		if tagged, changed := notebook.AddTags(page, auto.tags); changed {
			page, resp.Tags = tagged, auto.tags
		}
		e := notebook.Append(page, r.Section, entry)
		resp.Lines = memhost.Lines{Start: e.StartLine, End: e.EndLine}
		return []byte(e.Page), nil
	})
	if resp.Duplicate {
		return resp, nil
	}
	if err != nil {
		return memhost.RememberResponse{}, err
	}
	resp.Warnings = append(resp.Warnings, h.indexWritten(ctx, rel)...)
	return resp, nil
}

func (h *Host) pageExists(rel string) bool {
	fi, err := os.Stat(h.notebook.Abs(rel))
	return err == nil && fi.Mode().IsRegular()
}

// pages is the notebook as routing sees it.
type pages struct{ h *Host }

func (p pages) Exists(rel string) bool { return p.h.pageExists(rel) }

// Sections reads the page's headings; a page that cannot be read, or is
// too large to read on every remember, has none, and routing then does
// without them.
func (p pages) Sections(rel string) []string {
	if fi, err := os.Stat(p.h.notebook.Abs(rel)); err != nil || !fi.Mode().IsRegular() || fi.Size() > route.MaxCatalogueBytes {
		return nil
	}
	data, err := p.h.notebook.Read(rel)
	if err != nil {
		return nil
	}
	return notebook.Sections(string(data))
}

// noSections refuses text that would start sections of its own: an H1 or
// H2 line (outside code) in an entry, a daily-log entry or a section's
// content would split the page there, so that later entries land under it
// and a retried write finds nothing to replace and writes it again.
// skip is the number of the text's lines before it (for the line number
// named).
func noSections(field, text string, skip int) error {
	lines := markdown.Lines(text)
	for i, level := range markdown.HeadingLevels(lines) {
		if level == 1 || level == 2 {
			return fault.BadInputf(field, "the text holds a heading (%q, line %d), which would start a section of its own; use ### or lower inside an entry, or write the whole page", notebook.Shorten(lines[i], 60), skip+i+1)
		}
	}
	for i, level := range markdown.SetextLevels(lines) {
		if level != 0 {
			return fault.BadInputf(field, "the text holds a heading (%q, line %d, underlined by line %d), which would start a section of its own; put a blank line before a rule of = or -, or write the whole page", notebook.Shorten(lines[i], 60), skip+i+1, skip+i+2)
		}
	}
	return nil
}

// Who chose where remember wrote: see route.RoutedByRules.
const (
	RoutedByRules     = route.RoutedByRules
	RoutedByGenerator = route.RoutedByGenerator
)
