package mcp

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/fault"
)

// The vault's tools: links (reading), and mv, rollup and prune (writing,
// not served read-only). They call host.Links, Move, Rollup and Prune.

// LinksArgs are links' arguments.
type LinksArgs struct {
	Page       string `json:"page,omitempty" jsonschema:"the page: a path inside the notebook (knowledge/postgres.md; .md may be left out) or a name as a wikilink gives it (\"Project Alpha\"); required unless unresolved is true"`
	Unresolved bool   `json:"unresolved,omitempty" jsonschema:"also list every link in the notebook that finds no page (broken links), with the page and line holding it"`
}

// MoveArgs are mv's arguments.
type MoveArgs struct {
	From string `json:"from" jsonschema:"the page to rename, a path inside the notebook (e.g. knowledge/staging-db.md)"`
	To   string `json:"to" jsonschema:"its new path inside the notebook (e.g. knowledge/databases/staging.md); folders are made; must not be an existing page"`
}

// RollupArgs are rollup's arguments.
type RollupArgs struct {
	Period string `json:"period" jsonschema:"week or month"`
	Date   string `json:"date,omitempty" jsonschema:"which week or month: a day in it (2026-02-24), a week (2026-W09) or a month (2026-02); default: the current one"`
}

// PruneArgs are prune's arguments.
type PruneArgs struct {
	OlderThanDays int  `json:"olderThanDays" jsonschema:"archive the daily logs of days more than this many days ago (e.g. 90)"`
	DryRun        bool `json:"dryRun,omitempty" jsonschema:"only say which logs would be archived; change nothing"`
}

// addVaultTools registers links and, unless read-only, mv, rollup and
// prune.
func (s *srv) addVaultTools(read *mcpsdk.ToolAnnotations) {
	add(s, &mcpsdk.Tool{Name: "links", Title: "Links of a page", Annotations: read,
		Description: "The wikilinks ([[page]], [[page#heading|alias]]) of a notebook page: its out links, each with the page it resolves to (or none), " +
			"and its back links, the pages that link to it; with its frontmatter title, aliases and tags. " +
			"Use it to follow what a page is connected to, or to see which pages refer to one before you rename or rewrite it. " +
			"With unresolved: true it also lists every link in the notebook that finds no page (broken links, pages still to write); " +
			"page may then be left out."},
		nil, map[string]string{"path": "page"},
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a LinksArgs) (memhost.LinksResponse, string, error) {
			if strings.TrimSpace(a.Page) == "" && !a.Unresolved {
				return memhost.LinksResponse{}, "", fault.BadInputf("page", "page: give a page (e.g. knowledge/postgres.md), or unresolved: true for the broken links of the whole notebook")
			}
			r, err := s.ops.Links(ctx, memhost.LinksRequest{Path: a.Page, Unresolved: a.Unresolved})
			return r, renderLinks(r), about("page", err)
		})

	if s.opts.ReadOnly {
		return
	}
	yes, no := ptr(true), ptr(false)

	add(s, &mcpsdk.Tool{Name: "mv", Title: "Rename a page",
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: yes, IdempotentHint: false, OpenWorldHint: no},
		Description: "Rename (move) a notebook page, never over an existing one, and rewrite the wikilinks to it in every page so they still find it: " +
			"the page part of each link changes, its #heading and |alias stay, nothing else of any page changes, frontmatter included. " +
			"Use it instead of writing a copy and deleting the original, which would leave the links to the old name broken. " +
			"Returns the new path and the pages whose links were updated."},
		func(sc *jsonschema.Schema) {
			sc.Properties["from"].MinLength, sc.Properties["to"].MinLength = ptr(1), ptr(1)
		}, nil,
		func(ctx context.Context, req *mcpsdk.CallToolRequest, a MoveArgs) (memhost.MoveResponse, string, error) {
			r, err := s.ops.Move(ctx, memhost.MoveRequest{From: a.From, To: a.To, RequestID: requestID(req)})
			if fault.KindOf(err) == fault.Conflict && fault.FieldOf(err) == "to" {
				// Not a race to retry: the name is taken.
				return r, "", &fault.Error{Kind: fault.BadInput, Field: "to", Message: err.Error() + "; choose another name, or read that page first"}
			}
			if err != nil {
				return r, "", about("from", err)
			}
			s.touched(Change{Path: r.From, Removed: true}, Change{Path: r.To})
			for _, u := range r.Updated {
				s.touched(Change{Path: u.Path})
			}
			return r, renderMove(r), nil
		})

	add(s, &mcpsdk.Tool{Name: "rollup", Title: "Roll up daily logs",
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: yes, IdempotentHint: true, OpenWorldHint: no},
		Description: "Write the rollup page of a week (daily/rollups/2026-W09.md) or a month (daily/rollups/2026-02.md) from the daily logs of its days: " +
			"each day a heading, each log entry under it (with a summary first when a generator plugin is configured). " +
			"Use it at the end of a week or month to have one page to read instead of many daily logs, and before prune, which archives only logs a rollup holds. " +
			"The page is regenerated from the logs each time (the same logs give the same page; its frontmatter is kept), " +
			"except a page a person edited since, which is theirs: it is left as it is and reported as kept, with why. " +
			"Returns the page, the logs rolled up and how many entries."},
		func(sc *jsonschema.Schema) {
			sc.Properties["period"].Enum = []any{"week", "month"}
		}, nil,
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a RollupArgs) (memhost.RollupResponse, string, error) {
			r, err := s.ops.Rollup(ctx, memhost.RollupRequest{Period: a.Period, Date: a.Date})
			if err != nil {
				return r, "", err
			}
			if r.Changed {
				s.touched(Change{Path: r.Path})
			}
			return r, renderRollup(r), nil
		})

	add(s, &mcpsdk.Tool{Name: "prune", Title: "Archive old daily logs",
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: yes, IdempotentHint: true, OpenWorldHint: no},
		Description: "Move the daily logs older than olderThanDays days from daily/ into daily/archive/, where they stay searchable. " +
			"It archives only logs held, as they are now, by their week's or month's rollup: when a log has no up-to-date rollup it archives nothing and names the rollups to write first (with the rollup tool). " +
			"A log whose rollup a person edited so that it no longer holds the log's text stays in daily/ and is reported as kept, with why. " +
			"Use it when the daily logs pile up, after rolling them up; try dryRun: true first to see what would move. " +
			"This tool never deletes a log (a person can, with memhost prune --delete)."},
		func(sc *jsonschema.Schema) {
			sc.Properties["olderThanDays"].Minimum = ptr(1.0)
		}, nil,
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a PruneArgs) (memhost.PruneResponse, string, error) {
			r, err := s.ops.Prune(ctx, memhost.PruneRequest{OlderThanDays: a.OlderThanDays, DryRun: a.DryRun})
			if err != nil {
				return r, "", rollupsFirst(err)
			}
			if !r.DryRun {
				for _, l := range r.Archived {
					s.touched(Change{Path: l.From, Removed: true}, Change{Path: l.To})
				}
			}
			return r, renderPrune(r), nil
		})
}

// touched tells the clients of pages a vault tool changed, unless
// Options.Changes reports them (as it does every write under memhost serve).
func (s *srv) touched(cs ...Change) {
	if s.opts.Changes != nil {
		return
	}
	for _, c := range cs {
		s.changed(c)
	}
}

// about names arg in an error about a page path that names no argument
// (the notebook's "path is outside the notebook: ../x.md").
func about(arg string, err error) error {
	if err == nil || fault.FieldOf(err) != "" {
		return err
	}
	switch k := fault.KindOf(err); k {
	case fault.BadInput, fault.Outside:
		return &fault.Error{Kind: k, Field: arg, Message: err.Error(), Err: err}
	}
	return err
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
