package mcp

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/knowledge"
)

// addFactTools registers facts and fact_add, which run host.Facts and
// FactAdd.
func (s *srv) addFactTools() {
	addTool(s, api.OpFacts, tool[knowledge.FactsRequest, knowledge.FactsResponse]{
		name: "facts", title: "Facts about an entity",
		description: "Facts known about a person, project or thing (or all): values, since when, source.",
		done: func(_ *mcpsdk.CallToolRequest, req knowledge.FactsRequest, r knowledge.FactsResponse) string {
			return renderFacts(r, req)
		},
	})

	addTool(s, api.OpFactAdd, tool[knowledge.FactAddRequest, knowledge.FactAddResponse]{
		name: "fact_add", title: "Add a fact", idempotent: true,
		description: "Store a fact about an entity. A new value supersedes the attribute's current one (kept struck through); the same value confirms it.",
		schema: func(sc *jsonschema.Schema) {
			notEmpty(sc, "entity", "attribute", "value")
			fraction(sc, "confidence")
		},
		requestID: func(r *knowledge.FactAddRequest) *string { return &r.RequestID },
		done: func(call *mcpsdk.CallToolRequest, _ knowledge.FactAddRequest, r knowledge.FactAddResponse) string {
			f := r.Fact
			s.wrote(call, stored{Tool: "fact_add", Path: r.Path, Section: f.Attribute, Lines: memhost.Lines{Start: f.Line, End: f.Line},
				Text: f.Attribute + ": " + f.Value})
			var b strings.Builder
			switch {
			case r.Confirmed:
				fmt.Fprintf(&b, "Already known: %s %s %s (^%s), confirmed.", r.Entity, f.Attribute, f.Value, f.ID)
			default:
				fmt.Fprintf(&b, "Added to %s: %s = %s (^%s).", r.Path, f.Attribute, f.Value, f.ID)
			}
			for _, old := range r.Superseded {
				fmt.Fprintf(&b, " Superseded %s (^%s), kept struck through.", old.Value, old.ID)
			}
			for _, w := range r.Warnings {
				b.WriteString(" Warning: " + w)
			}
			return b.String()
		},
	})
}

// renderFacts is facts' text: one line a fact.
func renderFacts(r knowledge.FactsResponse, req knowledge.FactsRequest) string {
	if len(r.Facts) == 0 {
		if req.Entity != "" {
			return "No facts about " + r.Entity + "."
		}
		return "No facts yet."
	}
	var b strings.Builder
	for _, f := range r.Facts {
		fmt.Fprintf(&b, "%s: %s = %s [%s", f.Entity, f.Attribute, f.Value, f.Status)
		if f.Seen != "" {
			fmt.Fprintf(&b, ", since %s", f.Seen)
		}
		if f.Until != "" {
			fmt.Fprintf(&b, ", until %s", f.Until)
		}
		if f.Source != "" {
			fmt.Fprintf(&b, ", from %s", f.Source)
		}
		b.WriteString("]\n")
	}
	return b.String()
}
