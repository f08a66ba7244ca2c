package notecmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
)

// SkillsCommand is memhost skills: procedural memory.
func SkillsCommand(app *cmdapp.App) *cli.Command {
	a := cmds{app}
	review := func(status string) cli.ActionFunc {
		return func(ctx context.Context, cmd *cli.Command) error { return a.skillReview(ctx, cmd, status) }
	}
	return &cli.Command{
		Name:      "skills",
		Usage:     "procedural memory: the tool sequences agents repeat, as skill pages (skills/learned/) to accept or reject",
		ArgsUsage: " ",
		Description: "A task is the tools called between two user messages of a transcript (tool_call turns, or tool turns\n" +
			"whose metadata names the tool: session append --role tool --meta '{\"tool\": \"Bash\"}'). A sequence seen\n" +
			"memory.skills.minObservations times (3) in two sessions or more becomes a proposed skill page with learn.\n\n" +
			"Examples:\n" +
			"  memhost skills\n" +
			"  memhost skills learn\n" +
			"  memhost skills accept read-edit-bash",
		Action: a.skills,
		Commands: []*cli.Command{
			{Name: "learn", Usage: "write the page of each sequence seen often enough; update the counts on the others", ArgsUsage: " ", Action: a.skillLearn,
				Description: "Examples:\n  memhost skills learn\n  memhost skills learn --json"},
			{Name: "accept", Usage: "accept a proposed skill", ArgsUsage: "SLUG", Action: review(mh.SkillAccepted),
				Description: "Examples:\n  memhost skills accept read-edit-bash"},
			{Name: "reject", Usage: "reject a proposed skill (it leaves the memory context)", ArgsUsage: "SLUG", Action: review(mh.SkillRejected),
				Description: "Examples:\n  memhost skills reject read-edit-bash"},
		},
	}
}

func (a cmds) skills(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Skills(ctx, mh.SkillsRequest{})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) { printSkills(w, resp) })
	})
}

func (a cmds) skillLearn(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.SkillLearn(ctx, mh.SkillLearnRequest{})
		if err != nil {
			return err
		}
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			for _, p := range resp.Written {
				fmt.Fprintf(w, "wrote %s\n", p)
			}
			if len(resp.Written) == 0 {
				fmt.Fprintln(w, "no page to write or update")
			}
			printSkills(w, resp)
		})
	})
}

func (a cmds) skillReview(ctx context.Context, cmd *cli.Command, status string) error {
	if cmd.Args().Len() != 1 {
		return cmdapp.Usagef("%s takes one SLUG (memhost skills lists them)", cmd.Name)
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.SkillReview(ctx, mh.SkillReviewRequest{Slug: cmd.Args().First(), Status: status})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			fmt.Fprintf(w, "%s: %s (%s)\n", resp.Skill.Slug, resp.Skill.Status, resp.Skill.Path)
		})
	})
}

// printSkills prints the skill pages, then the candidates.
func printSkills(w io.Writer, resp mh.SkillsResponse) {
	fmt.Fprintf(w, "SKILLS (%d)\n", len(resp.Skills))
	for _, s := range resp.Skills {
		fmt.Fprintf(w, "  %-9s %s  %s  seen %d times in %d sessions, %.0f%% successful\n", s.Status, s.Slug, strings.Join(s.Tools, " → "), s.Observations, s.Sessions, 100*s.SuccessRate)
	}
	fmt.Fprintf(w, "CANDIDATES (%d; proposed at %d observations in 2+ sessions)\n", len(resp.Candidates), resp.MinObservations)
	for _, s := range resp.Candidates {
		fmt.Fprintf(w, "  %s  seen %d times in %d sessions, %.0f%% successful\n", strings.Join(s.Tools, " → "), s.Observations, s.Sessions, 100*s.SuccessRate)
	}
}
