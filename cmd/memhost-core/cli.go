package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/cmd/memhost-core/internal/corecmd"
	"github.com/memhost/memhost/cmd/memhost-core/internal/mcpcmd"
	"github.com/memhost/memhost/cmd/memhost-core/internal/notecmd"
	"github.com/memhost/memhost/cmd/memhost-core/internal/servecmd"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/internal/clock"
)

// The command tree is built here; the commands are in internal/corecmd,
// notecmd, mcpcmd and servecmd, what they share in internal/cmdapp.

// fieldFlags names the flag of a request field whose flag is named
// otherwise.
var fieldFlags = map[string]string{"sourceId": "source", "halfLife": "half-life", "perTier": "per-tier", "minScore": "min-score"}

// flagValueUsage makes a refused flag value a usage error (exit 2) when the
// operation names the flag as the bad field (recall --sources web): the
// command line was wrong, whatever the home holds.
func flagValueUsage(action cli.ActionFunc) cli.ActionFunc {
	if action == nil {
		return nil
	}
	return func(ctx context.Context, cmd *cli.Command) error {
		err := action(ctx, cmd)
		f := fault.FieldOf(err)
		if flag, ok := fieldFlags[f]; ok {
			f = flag
		}
		if err != nil && fault.KindOf(err) == fault.BadInput && f != "" && cmd.IsSet(f) {
			var ue cmdapp.UsageError
			if !errors.As(err, &ue) {
				return cmdapp.Usage(err)
			}
		}
		return err
	}
}

// run runs the CLI and returns the exit code. Errors are printed as one
// line on stderr.
func run(ctx context.Context, args []string, io cmdapp.Stdio) int {
	if err := clock.Err(); err != nil {
		fmt.Fprintln(io.Stderr, "memhost: "+err.Error())
		return cmdapp.ExitUsage
	}
	warnUnknownEnv(io)
	app := newApp(io, !allUTF8(args))
	err := app.Run(ctx, args)
	if err == nil {
		return cmdapp.ExitOK
	}
	var code cmdapp.ExitStatus
	if errors.As(err, &code) { // the command printed its answer
		return int(code)
	}
	fmt.Fprintln(io.Stderr, "memhost: "+cmdapp.Message(err))
	var ue cmdapp.UsageError
	if errors.As(err, &ue) {
		return cmdapp.ExitUsage
	}
	return cmdapp.ExitError
}

// envChecked makes the check of the environment once per process: the
// environment does not change, and a warning repeated by every command a
// process runs would bury the output.
var envChecked sync.Once

// warnUnknownEnv prints a warning line for each MEMHOST_ variable that
// memhost does not read (see config.UnknownEnv). A warning, not an error:
// a stray variable in a user's shell must not stop every command.
func warnUnknownEnv(io cmdapp.Stdio) {
	if io.Environ == nil {
		return
	}
	warn := func() {
		for _, w := range config.UnknownEnv(io.Environ()) {
			fmt.Fprintln(io.Stderr, "memhost: warning: "+w)
		}
	}
	if io.Shared != nil {
		warn() // a relayed command: one command of its own process
		return
	}
	envChecked.Do(warn)
}

func allUTF8(args []string) bool {
	for _, a := range args {
		if !utf8.ValidString(a) {
			return false
		}
	}
	return true
}

func newApp(io cmdapp.Stdio, notUTF8 bool) *cli.Command {
	a := &cmdapp.App{IO: io, NotUTF8: notUTF8}
	root := &cli.Command{
		Name:  "memhost",
		Usage: "persistent, local, inspectable memory for AI agents",
		Description: "memhost keeps an agent's memory as markdown pages in a notebook (the source of truth)\n" +
			"and searches them through a SQLite index derived from it. Home: --home, $MEMHOST_HOME or ~/.memhost.",
		Writer:                io.Stdout,
		ErrWriter:             io.Stderr,
		Reader:                io.Stdin,
		HideVersion:           true,
		EnableShellCompletion: false,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "home", Usage: "memhost home folder (default $MEMHOST_HOME, else ~/.memhost)"},
			&cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON on stdout"},
			&cli.BoolFlag{Name: "no-server", Usage: "run in this process even when memhost serve runs for the home (also MEMHOST_NO_SERVER=1)"},
			// The launcher's id of this command, kept when it runs the
			// command again after the server died: a retried write is
			// stored once.
			&cli.StringFlag{Name: "request-id", Hidden: true},
		},
		OnUsageError: func(ctx context.Context, cmd *cli.Command, err error, isSubcommand bool) error {
			return cmdapp.Usage(err)
		},
		ExitErrHandler: func(context.Context, *cli.Command, error) {}, // run decides exit codes
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return unknownCommand(cmd, cmd.Args().First())
			}
			return cli.ShowAppHelp(cmd)
		},
		Commands: corecmd.Commands(a),
	}
	root.Commands = append(root.Commands, corecmd.HealthCommand(a), servecmd.Command(a, run), mcpcmd.Command(a))
	root.Commands = append(root.Commands, notecmd.VaultCommands(a)...)
	root.Commands = append(root.Commands, notecmd.FactCommands(a)...)
	root.Commands = append(root.Commands, notecmd.SkillsCommand(a))
	root.Commands = append(root.Commands, notecmd.FederationCommands(a)...)
	root.Commands = append(root.Commands, notecmd.SecretsCommands(a)...)
	// Bad flags give one line on stderr and exit 2, not a page of help.
	var setUsage func([]*cli.Command)
	setUsage = func(cs []*cli.Command) {
		for _, c := range cs {
			c.OnUsageError = root.OnUsageError
			if len(c.Commands) > 0 && c.Action == nil {
				// Without an action urfave/cli takes the word for a help
				// topic ("No help topic for 'lst'", exit 1).
				c.Action = func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() > 0 {
						return unknownCommand(cmd, cmd.Args().First())
					}
					return cli.ShowSubcommandHelp(cmd)
				}
			}
			c.Action = flagValueUsage(c.Action)
			setUsage(c.Commands)
		}
	}
	setUsage(root.Commands)
	addExamples(root)
	return root
}
