package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/knowledge"
)

// FactsArgs are facts' arguments.
type FactsArgs struct {
	Entity  string `json:"entity,omitempty" jsonschema:"a person, project or thing: its name (\"Sarah Chen\"), slug (sarah-chen) or an alias; default: every entity"`
	History bool   `json:"history,omitempty" jsonschema:"also the values that were superseded or forgotten, with their dates"`
}

// FactAddArgs are fact_add's arguments.
type FactAddArgs struct {
	Entity     string  `json:"entity" jsonschema:"who or what the fact is about, by name (e.g. \"Sarah Chen\"); its page is made when missing"`
	Attribute  string  `json:"attribute" jsonschema:"what about it, a short lower-case phrase (e.g. \"works at\", \"phone\", \"prefers\")"`
	Value      string  `json:"value" jsonschema:"the value, one line; another entity as a wikilink (e.g. \"[[acme-corp]]\")"`
	Source     string  `json:"source,omitempty" jsonschema:"where it came from: \"SESSION turn TURN\", \"PATH line N\" or free text"`
	Confidence float64 `json:"confidence,omitempty" jsonschema:"0..1 (default 1)"`
	Keep       bool    `json:"keep,omitempty" jsonschema:"add the value beside the current ones (an attribute with several values) instead of superseding them"`
}

// addFactTools registers facts (reading) and, unless read-only, fact_add.
func (s *srv) addFactTools(read *mcpsdk.ToolAnnotations) {
	add(s, &mcpsdk.Tool{Name: "facts", Title: "Facts about an entity", Annotations: read,
		Description: "The facts known about a person, project or thing (or every entity): attribute, value, status, first seen and last confirmed dates, source and confidence, " +
			"read from its page knowledge/entities/<slug>.md. Current values only, unless history: true, which adds the superseded values " +
			"(with the day they stopped) and forgotten ones."},
		nil, nil,
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a FactsArgs) (knowledge.FactsResponse, string, error) {
			r, err := s.ops.Facts(ctx, knowledge.FactsRequest{Entity: a.Entity, History: a.History})
			return r, renderFacts(r, a), err
		})
	if s.opts.ReadOnly {
		return
	}
	no := new(bool)
	add(s, &mcpsdk.Tool{Name: "fact_add", Title: "Add a fact",
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: no, IdempotentHint: true, OpenWorldHint: no},
		Description: "Store a fact about an entity on its page knowledge/entities/<slug>.md. A different current value of the same attribute is superseded: " +
			"kept on the page struck through with its dates, not deleted (keep: true adds a value beside it instead). The same value again only confirms it. " +
			"Returns the fact with its id, what it superseded, and near-duplicates when embeddings are ready."},
		func(sc *jsonschema.Schema) {
			for _, k := range []string{"entity", "attribute", "value"} {
				sc.Properties[k].MinLength = ptr(1)
			}
			sc.Properties["confidence"].Minimum, sc.Properties["confidence"].Maximum = ptr(0.0), ptr(1.0)
		}, nil,
		func(ctx context.Context, req *mcpsdk.CallToolRequest, a FactAddArgs) (knowledge.FactAddResponse, string, error) {
			r, err := s.ops.FactAdd(ctx, knowledge.FactAddRequest{Entity: a.Entity, Attribute: a.Attribute, Value: a.Value, Source: a.Source,
				Confidence: a.Confidence, Keep: a.Keep, RequestID: requestID(req)})
			if err != nil {
				return r, "", err
			}
			f := r.Fact
			s.wrote(req, stored{Tool: "fact_add", Path: r.Path, Section: f.Attribute, Lines: memhost.Lines{Start: f.Line, End: f.Line},
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
			return r, b.String(), nil
		})
}

// renderFacts is facts' text: one line a fact.
func renderFacts(r knowledge.FactsResponse, a FactsArgs) string {
	if len(r.Facts) == 0 {
		if a.Entity != "" {
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
