package notecmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/host/facts"
	"github.com/memhost/memhost/knowledge"
)

// factCommands are the semantic tier's commands: fact add/forget, facts,
// entities, relations and consolidate.
func factCommands(a cmds) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "fact",
			Usage: "add or forget a fact about an entity (knowledge/entities/ENTITY.md)",
			Commands: []*cli.Command{
				{
					Name:      "add",
					Usage:     "add a fact; a current value of the attribute (or a near-duplicate, by embedding) is superseded and kept as history",
					ArgsUsage: "ENTITY ATTRIBUTE VALUE",
					Description: "The entity is a name (\"Sarah Chen\"), its slug (sarah-chen), or a title or alias of an existing page.\n" +
						"A value naming another entity as a wikilink ([[acme-corp]]) is a relation.\n\n" +
						"Examples:\n" +
						"  memhost fact add \"Sarah Chen\" \"works at\" \"[[acme-corp]]\" --source \"chat-1 turn 8f3a2b1c9d0e\"\n" +
						"  memhost fact add sarah-chen likes \"green tea\" --keep --confidence 0.8",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "source", Usage: "where the fact comes from: \"SESSION turn TURN\", \"PATH line N\", or any text"},
						&cli.FloatFlag{Name: "confidence", Usage: "0..1 (default 1)", HideDefault: true},
						&cli.BoolFlag{Name: "keep", Usage: "add beside the attribute's current values instead of superseding them"},
					},
					Action: a.factAdd,
				},
				{
					Name:      "forget",
					Usage:     "strike a fact through as forgotten (the line stays on the page as the audit trail)",
					ArgsUsage: "ID | ENTITY ATTRIBUTE [VALUE]",
					Description: "Examples:\n" +
						"  memhost fact forget f86f95b\n" +
						"  memhost fact forget sarah-chen email",
					Action: a.factForget,
				},
			},
		},
		{
			Name:      "facts",
			Usage:     "list the current facts of an entity, or of every entity",
			ArgsUsage: "[ENTITY]",
			Description: "Examples:\n" +
				"  memhost facts sarah-chen --history\n" +
				"  memhost facts --json",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "history", Usage: "also show superseded, forgotten and retired facts"}},
			Action: a.facts,
		},
		{
			Name:        "entities",
			Usage:       "list the entity pages with their facts and relations counts",
			ArgsUsage:   " ",
			Description: "Examples:\n  memhost entities",
			Action:      a.entities,
		},
		{
			Name:        "relations",
			Usage:       "list the relations out of and into an entity (wikilinks in current facts)",
			ArgsUsage:   "ENTITY",
			Description: "Examples:\n  memhost relations acme-corp",
			Action:      a.relations,
		},
		{
			Name:      "consolidate",
			Usage:     "turn conversations and daily logs not yet consolidated into facts, with the text generator",
			ArgsUsage: " ",
			Description: "Needs a generator (memory.generator.plugin). Episodes are read in batches; an answer that is not\n" +
				"valid JSON for the schema is asked again once, then the batch is skipped and tried next time.\n" +
				"What was consolidated is recorded in brain/consolidated.json, so a second run adds nothing;\n" +
				"memhost status shows the last run. memhost serve runs it every memory.generator.consolidateEveryMin\n" +
				"minutes when that is set (0, the default, is off).\n\n" +
				"Examples:\n" +
				"  memhost consolidate\n" +
				"  memhost consolidate --since 2026-11-01",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "since", Usage: "only episodes at or after YYYY-MM-DD or an RFC 3339 time"}},
			Action: a.consolidate,
		},
	}
}

func (a cmds) factAdd(ctx context.Context, cmd *cli.Command) error {
	if n := cmd.Args().Len(); n != 3 {
		return cmdapp.Usagef("fact add takes ENTITY ATTRIBUTE VALUE, got %d arguments (quote values with spaces)", n)
	}
	args := cmd.Args().Slice()
	req := knowledge.FactAddRequest{Entity: args[0], Attribute: args[1], Value: args[2], Source: cmd.String("source"),
		Confidence: cmd.Float("confidence"), Keep: cmd.Bool("keep"), RequestID: a.RequestID(cmd)}
	if cmd.IsSet("confidence") && (req.Confidence <= 0 || req.Confidence > 1) {
		return cmdapp.Usagef("--confidence must be more than 0 and at most 1, got %g", req.Confidence)
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.FactAdd(ctx, req)
		if err != nil {
			return err
		}
		a.Warn(resp.Warnings...)
		a.Redacted(resp.Redacted)
		return a.Out(cmd, resp, func(w io.Writer) {
			f := resp.Fact
			switch {
			case resp.Confirmed:
				fmt.Fprintf(w, "already known: %s: %s = %s (^%s); confirmed %s\n", resp.Path, f.Attribute, f.Value, f.ID, f.LastConfirmed())
				return
			case resp.Created:
				fmt.Fprintf(w, "added to %s (new page): %s = %s (^%s)\n", resp.Path, f.Attribute, f.Value, f.ID)
			default:
				fmt.Fprintf(w, "added to %s: %s = %s (^%s)\n", resp.Path, f.Attribute, f.Value, f.ID)
			}
			near := map[string]float64{}
			for _, d := range resp.NearDups {
				near[d.ID] = d.Cosine
			}
			for _, s := range resp.Superseded {
				why := "a newer value of " + s.Attribute
				if c, ok := near[s.ID]; ok {
					why = fmt.Sprintf("a near-duplicate, cosine %.2f", c)
				}
				fmt.Fprintf(w, "superseded ^%s: %s = %s (%s; seen %s, until %s)\n", s.ID, s.Attribute, s.Value, why, orDash(s.Seen), s.Until)
			}
		})
	})
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a cmds) factForget(ctx context.Context, cmd *cli.Command) error {
	args := cmd.Args().Slice()
	var req knowledge.FactForgetRequest
	switch len(args) {
	case 1:
		req.ID = args[0]
	case 2:
		req.Entity, req.Attribute = args[0], args[1]
	case 3:
		req.Entity, req.Attribute, req.Value = args[0], args[1], args[2]
	default:
		return cmdapp.Usagef("fact forget takes ID, or ENTITY ATTRIBUTE [VALUE]; got %d arguments", len(args))
	}
	req.RequestID = a.RequestID(cmd)
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.FactForget(ctx, req)
		if err != nil {
			return err
		}
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			for _, f := range resp.Forgotten {
				fmt.Fprintf(w, "forgot ^%s in %s: %s = %s (struck through, kept as history)\n", f.ID, resp.Path, f.Attribute, f.Value)
			}
		})
	})
}

func (a cmds) facts(ctx context.Context, cmd *cli.Command) error {
	var req knowledge.FactsRequest
	switch cmd.Args().Len() {
	case 0:
	case 1:
		req.Entity = cmd.Args().First()
	default:
		return cmdapp.Usagef("facts takes at most one ENTITY, got %d arguments (quote names with spaces)", cmd.Args().Len())
	}
	req.History = cmd.Bool("history")
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Facts(ctx, req)
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) { printFacts(w, resp.Facts) })
	})
}

// printFacts prints facts grouped by entity, in page order.
func printFacts(w io.Writer, rows []knowledge.FactRow) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "(no facts)")
		return
	}
	last := ""
	for _, f := range rows {
		if f.Entity != last {
			if last != "" {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "%s  (%s)\n", f.Entity, f.Path)
			last = f.Entity
		}
		var notes []string
		if f.Confidence != 1 {
			notes = append(notes, "confidence "+facts.FormatConfidence(f.Confidence))
		}
		if f.Seen != "" {
			notes = append(notes, "seen "+f.Seen)
		}
		if f.Confirmed != "" && f.Confirmed != f.Seen {
			notes = append(notes, "confirmed "+f.Confirmed)
		}
		if f.Source != "" {
			notes = append(notes, "from "+f.Source)
		}
		value := f.Value
		switch f.Status {
		case facts.Superseded:
			value = "~~" + value + "~~"
			notes = append([]string{"superseded by ^" + f.SupersededBy + " on " + orDash(f.Until)}, notes...)
		case facts.Forgotten:
			value = "~~" + value + "~~"
			notes = append([]string{"forgotten " + f.Forgotten}, notes...)
		case facts.Retired:
			value = "~~" + value + "~~"
			notes = append([]string{"struck through by hand"}, notes...)
		}
		n := ""
		if len(notes) > 0 {
			n = "  (" + strings.Join(notes, "; ") + ")"
		}
		fmt.Fprintf(w, "  %s: %s%s  ^%s\n", f.Attribute, value, n, f.FactID)
	}
}

func (a cmds) entities(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Entities(ctx, knowledge.EntitiesRequest{})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			if len(resp.Entities) == 0 {
				fmt.Fprintln(w, "(no entity pages in knowledge/entities/)")
				return
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ENTITY\tTITLE\tFACTS\tHISTORY\tLINKS IN\tLINKS OUT\tUPDATED")
			for _, e := range resp.Entities {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", e.Slug, e.Title, e.Current, e.History, e.Mentions, e.Relations, orDash(e.Updated))
			}
			tw.Flush()
		})
	})
}

func (a cmds) relations(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() != 1 {
		return cmdapp.Usagef("relations takes one ENTITY, got %d arguments (quote names with spaces)", cmd.Args().Len())
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Relations(ctx, knowledge.RelationsRequest{Entity: cmd.Args().First()})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			for _, g := range []struct {
				name string
				rows []knowledge.RelationRow
			}{{"OUT", resp.Out}, {"IN", resp.In}} {
				fmt.Fprintf(w, "%s (%d)\n", g.name, len(g.rows))
				for _, r := range g.rows {
					fmt.Fprintf(w, "  %s —%s→ %s  (^%s in %s)\n", r.From, r.Relation, r.To, r.FactID, r.Path)
				}
			}
		})
	})
}

func (a cmds) consolidate(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Consolidate(ctx, knowledge.ConsolidateRequest{Since: cmd.String("since")})
		if err != nil {
			return err
		}
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			if resp.Episodes == 0 {
				fmt.Fprintln(w, "nothing new to consolidate")
				return
			}
			model := ""
			if resp.Model != "" {
				model = fmt.Sprintf("; %s, %d tokens in, %d out", resp.Model, resp.InputTokens, resp.OutputTokens)
			}
			fmt.Fprintf(w, "consolidated %d episodes in %d batches%s\n", resp.Episodes, resp.Batches, model)
			for _, f := range resp.Applied {
				what := "added"
				switch {
				case f.Stale:
					what = "not applied (older than the current value)"
				case f.Confirmed:
					what = "confirmed"
				case len(f.Superseded) > 0:
					what = "added, superseding ^" + strings.Join(f.Superseded, ", ^")
				}
				fmt.Fprintf(w, "  %s: %s = %s  ^%s  %s  (from %s)\n", f.Entity, f.Attribute, f.Value, f.ID, what, f.Source)
			}
			for _, s := range resp.Skipped {
				fmt.Fprintf(w, "skipped %s (%d episodes, tried again next run): %s\n", s.Group, len(s.Episodes), s.Reason)
			}
		})
	})
}

// PrintFactsGroup prints recall's FACTS group, when it found any.
func PrintFactsGroup(w io.Writer, rows []knowledge.FactRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "FACTS (%d)\n", len(rows))
	for _, f := range rows {
		fmt.Fprintf(w, "  %s  %s: %s  (%s:%d ^%s)  %.2f\n", f.Entity, f.Attribute, f.Value, f.Path, f.Line, f.FactID, f.Score)
	}
}

// PrintConsolidation writes status's generator: and consolidated: lines,
// when a generator is configured or a consolidation ran (a home without
// either shows neither, as before generators).
func PrintConsolidation(w io.Writer, g knowledge.ConsolidationStatus) {
	if g.State != "none" {
		gen := g.Plugin + " (" + g.State + ")"
		if g.Plugin == "" {
			gen = g.State
		}
		if g.EveryMin > 0 {
			gen += fmt.Sprintf(", consolidating every %d min under memhost serve", g.EveryMin)
		}
		fmt.Fprintf(w, "generator:\t%s\n", gen)
	}
	if l := g.Last; l != nil {
		line := fmt.Sprintf("%s: %d episodes, %d facts applied, %d batches skipped", l.Finished, l.Episodes, l.Applied, l.Skipped)
		if l.Error != "" {
			line += "; failed: " + l.Error
		}
		fmt.Fprintf(w, "consolidated:\t%s\n", line)
	}
}
