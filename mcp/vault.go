package mcp

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
)

// addVaultTools registers links, mv, rollup and prune, which run
// host.Links, Move, Rollup and Prune.
func (s *srv) addVaultTools() {
	addTool(s, api.OpLinks, tool[memhost.LinksRequest, memhost.LinksResponse]{
		name: "links", title: "Links of a page",
		description: "A page's wikilinks, out and back: to follow its connections, or before renaming or rewriting it.",
		prepare: func(r *memhost.LinksRequest) error {
			if strings.TrimSpace(r.Path) == "" && !r.Unresolved {
				return fault.BadInputf("path", "path: give a page (e.g. knowledge/postgres.md), or unresolved: true for the broken links of the whole notebook")
			}
			return nil
		},
		reword: func(_ memhost.LinksRequest, err error) error { return about("path", err) },
		page:   func(r memhost.LinksRequest) string { return r.Path },
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.LinksRequest, r memhost.LinksResponse) string {
			return renderLinks(r)
		},
	})

	addTool(s, api.OpMove, tool[memhost.MoveRequest, memhost.MoveResponse]{
		name: "mv", title: "Rename a page", destructive: true,
		description: "Rename a page and update every wikilink to it. Use it instead of copying and deleting.",
		schema:      func(sc *jsonschema.Schema) { notEmpty(sc, "from", "to") },
		requestID:   func(r *memhost.MoveRequest) *string { return &r.RequestID },
		reword: func(_ memhost.MoveRequest, err error) error {
			if fault.KindOf(err) == fault.Conflict && fault.FieldOf(err) == "to" {
				// Not a race to retry: the name is taken.
				return &fault.Error{Kind: fault.BadInput, Field: "to", Message: err.Error() + "; choose another name, or read that page first"}
			}
			return about("from", err)
		},
		page: func(r memhost.MoveRequest) string { return r.From },
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.MoveRequest, r memhost.MoveResponse) string {
			return renderMove(r)
		},
	})

	addTool(s, api.OpRollup, tool[memhost.RollupRequest, memhost.RollupResponse]{
		name: "rollup", title: "Roll up daily logs", destructive: true, idempotent: true,
		description: "Write a week's or month's rollup page from its daily logs (one page to read, not many); a page a person edited is kept. Run it before prune.",
		schema:      func(sc *jsonschema.Schema) { sc.Properties["period"].Enum = []any{"week", "month"} },
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.RollupRequest, r memhost.RollupResponse) string {
			return renderRollup(r)
		},
	})

	addTool(s, api.OpPrune, tool[memhost.PruneRequest, memhost.PruneResponse]{
		name: "prune", title: "Archive old daily logs", destructive: true, idempotent: true,
		description: "Move old daily logs into daily/archive/, still searchable: only logs a rollup holds, else it names the rollups to write first.",
		// Deleting logs is for a person (memhost prune --delete).
		hide:   []string{"delete"},
		schema: func(sc *jsonschema.Schema) { atLeast(sc, "olderThanDays", 1) },
		reword: func(_ memhost.PruneRequest, err error) error { return rollupsFirst(err) },
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.PruneRequest, r memhost.PruneResponse) string {
			return renderPrune(r)
		},
	})
}

// rollupsFirst rewords prune's refusal (a *memhost.RollupsMissingError, in
// this process and through the server's client alike) for a model: which
// tool to call first, and with what.
func rollupsFirst(err error) error {
	var rm *memhost.RollupsMissingError
	if !errors.As(err, &rm) || len(rm.Missing) == 0 {
		return err
	}
	week := strings.TrimSuffix(path.Base(rm.Missing[0].Rollup), ".md")
	return &fault.Error{Kind: fault.BadInput, Message: fmt.Sprintf(
		"nothing archived: some of those daily logs are in no up-to-date rollup. Write the rollups first with the rollup tool "+
			"(period: week, date: the week, e.g. %q), then call prune again. Rollups to write: %s", week, strings.Join(rm.Rollups(), ", "))}
}

// renderLinks is links' text.
func renderLinks(r memhost.LinksResponse) string {
	var b strings.Builder
	if r.Path != "" {
		b.WriteString(r.Path)
		var meta []string
		if r.Title != "" {
			meta = append(meta, "title "+r.Title)
		}
		if len(r.Aliases) > 0 {
			meta = append(meta, "aliases "+strings.Join(r.Aliases, ", "))
		}
		if len(r.Tags) > 0 {
			meta = append(meta, "tags "+strings.Join(r.Tags, ", "))
		}
		if len(meta) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(meta, "; "))
		}
		fmt.Fprintf(&b, "\nout links: %d", len(r.Out))
		for _, l := range r.Out {
			to := l.Page
			if !l.Resolved {
				to = "no page (unresolved)"
			}
			fmt.Fprintf(&b, "\n- line %d %s -> %s", l.Line, wikilink(l), to)
		}
		fmt.Fprintf(&b, "\nback links: %d", len(r.Back))
		for _, l := range r.Back {
			fmt.Fprintf(&b, "\n- %s line %d %s", l.Page, l.Line, wikilink(l))
		}
	}
	if r.Unresolved != nil {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "unresolved links in the notebook: %d", len(r.Unresolved))
		for _, l := range r.Unresolved {
			fmt.Fprintf(&b, "\n- %s line %d %s", l.Page, l.Line, wikilink(l))
		}
	}
	return b.String()
}

// wikilink writes a link back as it was written: [[target#heading|alias]].
func wikilink(l memhost.LinkInfo) string {
	s := l.Target
	if l.Heading != "" {
		s += "#" + l.Heading
	}
	if l.Alias != "" {
		s += "|" + l.Alias
	}
	if l.Embed {
		return "![[" + s + "]]"
	}
	return "[[" + s + "]]"
}

// renderMove is mv's text.
func renderMove(r memhost.MoveResponse) string {
	s := fmt.Sprintf("Renamed %s to %s.", r.From, r.To)
	if len(r.Updated) == 0 {
		s += " No page linked to it."
	} else {
		var us []string
		for _, u := range r.Updated {
			us = append(us, fmt.Sprintf("%s (%d)", u.Path, u.Links))
		}
		s += " Links updated in " + strings.Join(us, ", ") + "."
	}
	for _, w := range r.Warnings {
		s += " Warning: " + w
	}
	return s
}

// renderRollup is rollup's text.
func renderRollup(r memhost.RollupResponse) string {
	if r.Kept {
		return fmt.Sprintf("Kept %s (%s, %s to %s) as it is: %s, so it is a person's page and is not rewritten from its %d daily %s.",
			r.Path, r.Period, r.From, r.To, r.Why, len(r.Logs), plural(len(r.Logs), "log"))
	}
	verb := "Wrote"
	switch {
	case r.Created:
		verb = "Created"
	case !r.Changed:
		verb = "Already up to date:"
	}
	s := fmt.Sprintf("%s %s (%s, %s to %s) from %d daily %s, %d %s.", verb, r.Path, r.Period, r.From, r.To,
		len(r.Logs), plural(len(r.Logs), "log"), r.Entries, entries(r.Entries))
	if r.Summary {
		s += " With a summary."
	}
	for _, w := range r.Warnings {
		s += " Warning: " + w
	}
	return s
}

func entries(n int) string {
	if n == 1 {
		return "entry"
	}
	return "entries"
}

// renderPrune is prune's text.
func renderPrune(r memhost.PruneResponse) string {
	var b strings.Builder
	if len(r.Archived) == 0 {
		fmt.Fprintf(&b, "No daily logs from before %s to archive.", r.Before)
		if len(r.Kept) == 0 {
			return b.String()
		}
	} else {
		verb := "Archived"
		if r.DryRun {
			verb = "Would archive (dry run, nothing changed)"
		}
		fmt.Fprintf(&b, "%s %d daily %s from before %s:", verb, len(r.Archived), plural(len(r.Archived), "log"), r.Before)
		for _, l := range r.Archived {
			fmt.Fprintf(&b, "\n- %s -> %s", l.From, l.To)
		}
	}
	if len(r.Kept) > 0 {
		fmt.Fprintf(&b, "\nKept in place %d daily %s whose text no rollup holds:", len(r.Kept), plural(len(r.Kept), "log"))
		for _, k := range r.Kept {
			fmt.Fprintf(&b, "\n- %s (%s): %s", k.Log, k.Rollup, k.Why)
		}
	}
	for _, w := range r.Warnings {
		b.WriteString("\nWarning: " + w)
	}
	return b.String()
}
