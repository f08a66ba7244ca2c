package corecmd

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/host/health"
)

// Exit codes of memhost health: the home's state, for cron and container
// health checks. (2 is a usage error for the other commands.)
const (
	ExitDegraded  = 1
	ExitUnhealthy = 2
)

func healthCommand(a cmds) *cli.Command {
	return &cli.Command{
		Name:  "health",
		Usage: "check the home: index, drift, pages, transcripts, embedding queue and provider, sizes, leaked files",
		Description: "Each check passes, warns or fails; the home is HEALTHY when all pass, DEGRADED when one warns,\n" +
			"UNHEALTHY when one fails (thresholds: health: in config.yaml). The report is also written to\n" +
			"health/latest-report.md in the home, or HEARTBEAT.md in the notebook with --into-notebook.\n\n" +
			"Exit status: 0 HEALTHY, 1 DEGRADED, 2 UNHEALTHY (or a usage error), so it serves cron jobs and\n" +
			"container health checks.",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "repair", Usage: "first rebuild a damaged or drifted index, sync changed files, remove files of dead processes and retry dead embeddings"},
			&cli.BoolFlag{Name: "into-notebook", Usage: "write the report to HEARTBEAT.md in the notebook instead of health/latest-report.md"},
		},
		Action: a.health,
		Commands: []*cli.Command{{
			Name:  "history",
			Usage: "list the kept health reports, newest first",
			Description: "Every health check is kept in health/history/ in the home: those run by memhost health and\n" +
				"those memhost serve runs every health.everyMin minutes (30); health.keepDays (14) says how long.\n" +
				"Each report is listed with the checks that did not pass.",
			ArgsUsage: " ",
			Flags:     []cli.Flag{&cli.IntFlag{Name: "limit", Value: 10, Usage: "at most this many reports"}},
			Action:    a.healthHistory,
		}},
	}
}

func (a cmds) healthHistory(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.HealthHistory(ctx, mh.HealthHistoryRequest{Limit: int(cmd.Int("limit"))})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) { printHealthHistory(w, resp) })
	})
}

func printHealthHistory(w io.Writer, r mh.HealthHistoryResponse) {
	if len(r.Reports) == 0 {
		fmt.Fprintln(w, "no health reports kept yet")
		return
	}
	for _, rep := range r.Reports {
		fmt.Fprintf(w, "%s  %s\n", rep.Timestamp, rep.Overall)
		for _, c := range rep.Checks {
			if c.Status != health.Pass {
				fmt.Fprintf(w, "  %-4s  %-18s  %s\n", c.Status, c.Name, c.Message)
			}
		}
	}
}

func (a cmds) health(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	var overall mh.HealthReport
	err := a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Health(ctx, mh.HealthRequest{Repair: cmd.Bool("repair"), IntoNotebook: cmd.Bool("into-notebook")})
		if err != nil {
			return err
		}
		overall = resp.HealthReport
		return a.Out(cmd, resp, func(w io.Writer) { printHealth(w, resp) })
	})
	var ue cmdapp.UsageError
	if err != nil && !errors.As(err, &ue) {
		// A home that cannot even be checked (a broken config.yaml, a
		// home that is a file) is unhealthy, not degraded: exit 2, and
		// say so in JSON too, for cron and container checks.
		fmt.Fprintln(a.IO.Stderr, "memhost: "+cmdapp.Message(err))
		if cmd.Bool("json") {
			a.Out(cmd, map[string]string{"overall": string(health.Unhealthy), "error": cmdapp.Message(err)}, nil)
		}
		return cmdapp.ExitStatus(ExitUnhealthy)
	}
	if err != nil {
		return err
	}
	switch overall.Overall {
	case health.Degraded:
		return cmdapp.ExitStatus(ExitDegraded)
	case health.Unhealthy:
		return cmdapp.ExitStatus(ExitUnhealthy)
	}
	return nil
}

func printHealth(w io.Writer, r mh.HealthResponse) {
	for i, s := range r.Repairs {
		if i == 0 {
			fmt.Fprintln(w, "repaired:")
		}
		fmt.Fprintf(w, "  %s\n", s)
	}
	fmt.Fprintf(w, "%s\n", r.Overall)
	for _, c := range r.Checks {
		fmt.Fprintf(w, "  %-4s  %-18s  %s\n", c.Status, c.Name, c.Message)
	}
	fmt.Fprintf(w, "report: %s\n", r.ReportPath)
}
