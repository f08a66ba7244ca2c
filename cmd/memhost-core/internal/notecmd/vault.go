package notecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/fault"
)

// vaultCommands are the commands of the Obsidian vault and of the notebook
// over time: links, mv, rollup, prune.
func vaultCommands(a cmds) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "links",
			Usage: "a page's out links and back links (wikilinks and markdown links resolved as Obsidian does), or every unresolved link",
			Description: "Examples:\n" +
				"  memhost links knowledge/sarah-chen.md\n" +
				"  memhost links --unresolved",
			ArgsUsage: "[PAGE]",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "unresolved", Usage: "list every link in the notebook that finds no page or attachment"},
			},
			Action: a.links,
		},
		{
			Name:  "mv",
			Usage: "rename a page and update the links to it in every page (their #heading and |alias or text stay)",
			Description: "Examples:\n" +
				"  memhost mv knowledge/sarah.md people/Sarah\\ Chen.md\n" +
				"  memhost mv reference/old-name new-name",
			ArgsUsage: "OLD NEW",
			Action:    a.mv,
		},
		{
			Name:  "rollup",
			Usage: "write the week's or month's rollup page (daily/rollups/) from the daily logs; again rewrites the same page",
			Description: "DATE is a day (the week or month holding it), a week (2026-W47) or a month (2026-11);\n" +
				"without it, the current week or month. A rollup page a person edited since memhost wrote it\n" +
				"is theirs: it is kept as it is, and said so. With --summarize the generator plugin\n" +
				"(memory.generator) writes a summary section above the logs.\n\n" +
				"Examples:\n" +
				"  memhost rollup --week 2026-W47\n" +
				"  memhost rollup --month 2026-11 --summarize",
			ArgsUsage: "[DATE]",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "week", Usage: "roll up an ISO week (Monday to Sunday): daily/rollups/YYYY-Www.md"},
				&cli.BoolFlag{Name: "month", Usage: "roll up a month: daily/rollups/YYYY-MM.md"},
				&cli.BoolFlag{Name: "summarize", Usage: "have the generator plugin write a summary section above the logs"},
			},
			Action: a.rollup,
		},
		{
			Name:  "prune",
			Usage: "move old daily logs into daily/archive/ (or delete them with --delete), once their rollups hold them",
			Description: "Nothing is pruned unless each log is held, as it is now, by its week's or month's rollup;\n" +
				"otherwise the missing rollups are named. A log whose rollup a person edited so that it no longer\n" +
				"holds the log's text is kept, and said so. Archived logs stay searchable.\n\n" +
				"Examples:\n" +
				"  memhost prune --daily-older-than 90d --dry-run\n" +
				"  memhost prune --daily-older-than 90d",
			ArgsUsage: " ",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "daily-older-than", Usage: "age of the logs to prune, in days (90d) or weeks (12w)", Required: true},
				&cli.BoolFlag{Name: "delete", Usage: "delete the logs (archived ones too) instead of archiving them"},
				&cli.BoolFlag{Name: "dry-run", Usage: "say what would be pruned, change nothing"},
			},
			Action: a.prune,
		},
	}
}

func (a cmds) links(ctx context.Context, cmd *cli.Command) error {
	req := mh.LinksRequest{Unresolved: cmd.Bool("unresolved")}
	switch n := cmd.Args().Len(); {
	case n > 1:
		return cmdapp.Usagef("give one PAGE, got %d arguments", n)
	case n == 1:
		req.Path = cmd.Args().First()
	case !req.Unresolved:
		return cmdapp.Usagef("missing PAGE (or give --unresolved)")
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Links(ctx, req)
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			if resp.Path != "" {
				head := resp.Path
				if resp.Title != "" {
					head += "  (" + resp.Title + ")"
				}
				fmt.Fprintln(w, head)
				if len(resp.Aliases) > 0 {
					fmt.Fprintf(w, "aliases: %s\n", strings.Join(resp.Aliases, ", "))
				}
				if len(resp.Tags) > 0 {
					fmt.Fprintf(w, "tags: #%s\n", strings.Join(resp.Tags, " #"))
				}
				fmt.Fprintf(w, "OUT (%d)\n", len(resp.Out))
				for _, l := range resp.Out {
					to := l.Page
					if !l.Resolved {
						to = "(unresolved)"
					}
					fmt.Fprintf(w, "  %d  %s  -> %s\n", l.Line, wikilink(l), to)
				}
				fmt.Fprintf(w, "BACK (%d)\n", len(resp.Back))
				for _, l := range resp.Back {
					fmt.Fprintf(w, "  %s:%d  %s\n", l.Page, l.Line, wikilink(l))
				}
			}
			if req.Unresolved {
				fmt.Fprintf(w, "UNRESOLVED (%d)\n", len(resp.Unresolved))
				for _, l := range resp.Unresolved {
					fmt.Fprintf(w, "  %s:%d  %s\n", l.Page, l.Line, wikilink(l))
				}
			}
		})
	})
}

// wikilink writes a link back as it reads in a page (a markdown link's
// path decoded).
func wikilink(l mh.LinkInfo) string {
	if l.Markdown {
		s := "[" + l.Alias + "](" + l.Target
		if l.Heading != "" {
			s += "#" + l.Heading
		}
		s += ")"
		if l.Embed {
			s = "!" + s
		}
		return s
	}
	s := "[[" + l.Target
	if l.Heading != "" {
		s += "#" + l.Heading
	}
	if l.Alias != "" {
		s += "|" + l.Alias
	}
	s += "]]"
	if l.Embed {
		s = "!" + s
	}
	return s
}

func (a cmds) mv(ctx context.Context, cmd *cli.Command) error {
	if n := cmd.Args().Len(); n != 2 {
		return cmdapp.Usagef("give OLD and NEW page paths, got %d arguments", n)
	}
	req := mh.MoveRequest{From: cmd.Args().Get(0), To: cmd.Args().Get(1), RequestID: a.RequestID(cmd)}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Move(ctx, req)
		if err != nil {
			return err
		}
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			fmt.Fprintf(w, "moved %s to %s\n", resp.From, resp.To)
			for _, u := range resp.Updated {
				fmt.Fprintf(w, "  updated %s (%s)\n", u.Path, cmdapp.Plural(u.Links, "link"))
			}
		})
	})
}

func (a cmds) rollup(ctx context.Context, cmd *cli.Command) error {
	req := mh.RollupRequest{Summarize: cmd.Bool("summarize")}
	switch week, month := cmd.Bool("week"), cmd.Bool("month"); {
	case week == month:
		return cmdapp.Usagef("give one of --week or --month")
	case week:
		req.Period = "week"
	default:
		req.Period = "month"
	}
	switch n := cmd.Args().Len(); {
	case n > 1:
		return cmdapp.Usagef("give at most one DATE, got %d arguments", n)
	case n == 1:
		req.Date = cmd.Args().First()
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Rollup(ctx, req)
		if err != nil {
			return err
		}
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			verb := "wrote"
			switch {
			case resp.Created:
				verb = "created"
			case !resp.Changed:
				verb = "unchanged"
			}
			entries := cmdapp.Plural(resp.Entries, "entry")
			if resp.Entries != 1 {
				entries = fmt.Sprintf("%d entries", resp.Entries)
			}
			if resp.Kept {
				fmt.Fprintf(w, "kept %s as it is (%s): not rewritten from %s to %s, %s, %s\n", resp.Path, resp.Why, resp.From, resp.To, cmdapp.Plural(len(resp.Logs), "daily log"), entries)
				return
			}
			summary := ""
			if resp.Summary {
				summary = ", summary by " + resp.Model
			}
			fmt.Fprintf(w, "%s %s: %s to %s, %s, %s%s\n", verb, resp.Path, resp.From, resp.To, cmdapp.Plural(len(resp.Logs), "daily log"), entries, summary)
		})
	})
}

func (a cmds) prune(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	days, err := parseDays(cmd.String("daily-older-than"))
	if err != nil {
		return cmdapp.Usagef("--daily-older-than %q: %v", cmd.String("daily-older-than"), err)
	}
	req := mh.PruneRequest{OlderThanDays: days, Delete: cmd.Bool("delete"), DryRun: cmd.Bool("dry-run")}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Prune(ctx, req)
		if errors.Is(err, mh.ErrRollupsMissing) || fault.KindOf(err) == fault.Conflict {
			return fmt.Errorf("%w (memhost rollup --week DATE writes a week's)", err)
		}
		if err != nil {
			return err
		}
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			would := ""
			if resp.DryRun {
				would = "would be "
			}
			for _, m := range resp.Archived {
				fmt.Fprintf(w, "%sarchived %s -> %s\n", would, m.From, m.To)
			}
			for _, p := range resp.Deleted {
				fmt.Fprintf(w, "%sdeleted %s\n", would, p)
			}
			for _, k := range resp.Kept {
				fmt.Fprintf(w, "kept %s (%s): %s\n", k.Log, k.Rollup, k.Why)
			}
			if len(resp.Archived)+len(resp.Deleted)+len(resp.Kept) == 0 {
				fmt.Fprintf(w, "no daily logs before %s to prune\n", resp.Before)
			}
		})
	})
}

// parseDays reads an age: 90d, 12w or a plain number of days.
func parseDays(s string) (int, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	mult := 1
	switch {
	case strings.HasSuffix(s, "d"):
		s = strings.TrimSuffix(s, "d")
	case strings.HasSuffix(s, "w"):
		s, mult = strings.TrimSuffix(s, "w"), 7
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, errors.New("give a number of days (90d) or weeks (12w), at least 1")
	}
	return n * mult, nil
}
