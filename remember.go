package memhost

import "fmt"

// RememberRequest stores a fact, preference, contact or list item.
type RememberRequest struct {
	Text     string `json:"text" jsonschema:"one short self-contained sentence"`
	Category string `json:"category,omitempty"`                                              // lists | reference | knowledge; "" routes by content
	File     string `json:"file,omitempty" jsonschema:"page in the category, e.g. contacts"` // page name within the category, e.g. "contacts"
	Section  string `json:"section,omitempty" jsonschema:"H2 section, e.g. a person's name"` // H2 section to add under
	// Auto has the generator choose category, page, section and tags
	// (autoroute.go); the rules route when it cannot.
	Auto bool `json:"auto,omitempty" jsonschema:"let the generator model route it"`
	// RequestID, when set, makes the write idempotent: a run with the id
	// of one that landed writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
}

// RememberResponse says where the text went.
type RememberResponse struct {
	Path string `json:"path"`
	// Section is the H2 section that holds the text, as the page spells
	// it; "" only when the text is in no section (the page has none, or
	// a duplicate is above the first).
	Section    string   `json:"section,omitempty"`
	NewSection bool     `json:"newSection,omitempty"` // the section was created for the text
	Lines      Lines    `json:"lines"`
	Duplicate  bool     `json:"duplicate"` // already on the page: nothing written
	Created    bool     `json:"created"`
	Routing    string   `json:"routing,omitempty"` // with Auto: generator, or rules when it could not route
	Tags       []string `json:"tags,omitempty"`    // added to the page's frontmatter by the generator's choice
	// Warnings are troubles after the write (the index could not be
	// updated, or was rebuilt): what was written is stored.
	Warnings []string `json:"warnings,omitempty"`
	// Redacted are the secrets replaced before the text was stored.
	Redacted []Redaction `json:"redacted,omitempty"`
}

// Where says where the text is: the page, the section (or that there is
// none) and the lines, e.g. "reference/contacts.md § Sarah Chen (line 12)"
// or "knowledge/facts.md § Notes (new section, line 9)". The CLI and MCP
// both print it, so that they name a place the same way.
func (r RememberResponse) Where() string {
	lines := fmt.Sprintf("line %d", r.Lines.Start)
	if r.Lines.End > r.Lines.Start {
		lines = fmt.Sprintf("lines %d-%d", r.Lines.Start, r.Lines.End)
	}
	switch {
	case r.Section == "":
		return fmt.Sprintf("%s, no section (%s)", r.Path, lines)
	case r.NewSection:
		return fmt.Sprintf("%s § %s (new section, %s)", r.Path, r.Section, lines)
	}
	return fmt.Sprintf("%s § %s (%s)", r.Path, r.Section, lines)
}
