package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/urfave/cli/v3"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/internal/clock"
	"github.com/memhost/memhost/server"
)

// stdio is everything a run reads from or writes to outside its arguments,
// so that tests can run the command as a function.
type stdio struct {
	stdin        io.Reader
	stdinIsPiped bool // stdin is a pipe or file: read text from it when no argument is given
	stdout       io.Writer
	stdoutIsTTY  bool // progress bars instead of progress lines
	stderr       io.Writer
	getenv       func(string) string
	// environ lists the environment as "NAME=value" pairs, to warn of
	// MEMHOST_ variables memhost does not read; nil skips the check (a
	// command relayed by the launcher, tests).
	environ func() []string
	// spawnEmbed starts `memhost embed` for home in the background; nil
	// disables background embedding (in-process tests).
	spawnEmbed func(home string) error
	// cwd, when set, is the caller's working folder for relative paths
	// (a command run in the server for the launcher); "" is this process's.
	cwd string
	// shared, when set, is the Host every command runs on (the server's,
	// for a command relayed by the launcher), and follow its events.
	shared *host.Host
	follow func(context.Context, func(server.Event)) error
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the command failed
	exitUsage = 2 // bad flags or arguments
)

// usageError marks errors in how the command was called.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// fieldFlags names the flag of a request field whose flag is named
// otherwise.
var fieldFlags = map[string]string{"sourceId": "source"}

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
			var ue usageError
			if !errors.As(err, &ue) {
				return usageError{err}
			}
		}
		return err
	}
}

// maxStdin bounds text read from stdin.
const maxStdin = 64 << 20

// run runs the CLI and returns the exit code. Errors are printed as one
// line on stderr.
func run(ctx context.Context, args []string, io stdio) int {
	if err := clock.Err(); err != nil {
		fmt.Fprintln(io.stderr, "memhost: "+err.Error())
		return exitUsage
	}
	warnUnknownEnv(io)
	app := newApp(io, !allUTF8(args))
	err := app.Run(ctx, args)
	if err == nil {
		return exitOK
	}
	var code exitStatus
	if errors.As(err, &code) { // the command printed its answer
		return int(code)
	}
	fmt.Fprintln(io.stderr, "memhost: "+message(err))
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitError
}

// envChecked makes the check of the environment once per process: the
// environment does not change, and a warning repeated by every command a
// process runs would bury the output.
var envChecked sync.Once

// warnUnknownEnv prints a warning line for each MEMHOST_ variable that
// memhost does not read (see config.UnknownEnv). A warning, not an error:
// a stray variable in a user's shell must not stop every command.
func warnUnknownEnv(io stdio) {
	if io.environ == nil {
		return
	}
	warn := func() {
		for _, w := range config.UnknownEnv(io.environ()) {
			fmt.Fprintln(io.stderr, "memhost: warning: "+w)
		}
	}
	if io.shared != nil {
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

// message words an error for people, from its kind and, for page paths,
// the path; never from its text.
func message(err error) string {
	var pe *notebook.PathError
	switch {
	case errors.As(err, &pe) && fault.KindOf(err) == fault.NotFound:
		return "no such page: " + notebook.ShowPath(pe.Path)
	case errors.As(err, &pe) && fault.KindOf(err) == fault.Outside:
		return "refused: " + notebook.ShowPath(pe.Path) + " is outside the notebook (paths are relative to it, like reference/contacts.md)"
	case errors.As(err, &pe):
		return pe.Err.Error() + ": " + notebook.ShowPath(pe.Path)
	case fault.KindOf(err) == fault.BadInput && fault.FieldOf(err) == "text":
		return "refused: " + err.Error() // the text is empty, not UTF-8, …
	case fault.KindOf(err) == fault.Conflict && fault.FieldOf(err) == "version":
		return err.Error() + "; restart the server (memhost serve stop, then memhost serve), or run this one with --no-server"
	case fault.KindOf(err) == fault.Conflict && fault.FieldOf(err) == "listen":
		return err.Error() + "; choose another with --listen ADDR (port 0 picks a free one) or server.listen in config.yaml"
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

func newApp(io stdio, notUTF8 bool) *cli.Command {
	a := &app{io: io, notUTF8: notUTF8}
	root := &cli.Command{
		Name:  "memhost",
		Usage: "persistent, local, inspectable memory for AI agents",
		Description: "memhost keeps an agent's memory as markdown pages in a notebook (the source of truth)\n" +
			"and searches them through a SQLite index derived from it. Home: --home, $MEMHOST_HOME or ~/.memhost.",
		Writer:                io.stdout,
		ErrWriter:             io.stderr,
		Reader:                io.stdin,
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
			return usageError{err}
		},
		ExitErrHandler: func(context.Context, *cli.Command, error) {}, // run decides exit codes
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return unknownCommand(cmd, cmd.Args().First())
			}
			return cli.ShowAppHelp(cmd)
		},
		Commands: []*cli.Command{
			{
				Name:      "init",
				Usage:     "create the home with its folders and a commented config.yaml (safe to run again)",
				ArgsUsage: " ",
				Action:    a.init,
			},
			{
				Name:      "remember",
				Usage:     "store a fact, preference, contact or list item on the right page",
				ArgsUsage: "TEXT|-",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "category", Usage: "lists, reference or knowledge (default: chosen from the text)"},
					&cli.StringFlag{Name: "file", Usage: "page name within the category, e.g. contacts"},
					&cli.StringFlag{Name: "section", Usage: "H2 section to add under (created when missing)"},
					&cli.BoolFlag{Name: "auto", Usage: "the generator (memory.generator.plugin) chooses category, page, section and tags; the rules route when it cannot"},
				},
				Action: a.remember,
			},
			{
				Name:      "daily-log",
				Usage:     "append an entry to today's daily log",
				ArgsUsage: "TEXT|-",
				Action:    a.dailyLog,
			},
			{
				Name:      "get",
				Usage:     "print a page or a range of its lines",
				ArgsUsage: "PATH",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "start-line", Usage: "first line to print (1-based)"},
					&cli.IntFlag{Name: "lines", Usage: "number of lines to print (default: to the end)"},
				},
				Action: a.get,
			},
			{
				Name:      "write",
				Usage:     "append to a page or an H2 section, or replace the section (the page without --section)",
				ArgsUsage: "PATH TEXT|-",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "section", Usage: "H2 section to write to (created when missing)"},
					&cli.BoolFlag{Name: "replace", Usage: "replace the section, or the whole page without --section"},
				},
				Action: a.write,
			},
			{
				Name:      "rm",
				Usage:     "delete a page",
				ArgsUsage: "PATH",
				Action:    a.rm,
			},
			{
				Name:      "recall",
				Usage:     "search the notebook; results grouped by source, notebook first",
				ArgsUsage: "QUERY",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "max-results", Usage: "most results in all (default memory.search.maxResults, 15)", HideDefault: true},
					&cli.FloatFlag{Name: "min-score", Usage: "drop results below this score, 0..1 (default memory.search.minScore, 0.25)", HideDefault: true},
					&cli.StringFlag{Name: "sources", Usage: "comma-separated groups to search: notebook,daily,sessions (default notebook,daily)"},
					&cli.StringSliceFlag{Name: "tag", Usage: "only pages with this tag, in frontmatter or as #tag (repeatable: every one; project also matches project/alpha)"},
					&cli.StringFlag{Name: "path", Usage: "only pages under this folder (knowledge/) or this page"},
				},
				Action: a.recall,
			},
			{
				Name:      "context",
				Usage:     "print the block for an agent's system prompt: reference pages, today's and yesterday's logs",
				ArgsUsage: " ",
				Action:    a.context,
			},
			{Name: "status", Usage: "show the index: files, chunks, last sync, size, search mode", ArgsUsage: " ", Action: a.status},
			{Name: "files", Usage: "list pages with their hash, chunk count and whether the index is stale", ArgsUsage: " ", Action: a.files},
			{Name: "sync", Usage: "index new and edited pages, drop deleted ones", ArgsUsage: " ", Action: a.sync, Flags: []cli.Flag{syncRemoteFlag}},
			{Name: "rebuild", Usage: "build a fresh index beside the old one and swap it in", ArgsUsage: " ", Action: a.rebuild},
			{Name: "watch", Usage: "watch the notebook and index changes as they happen (until Ctrl-C)", ArgsUsage: " ", Action: a.watch},
			{Name: "embed", Usage: "embed every chunk still waiting for a vector of the active provider", ArgsUsage: " ", Action: a.embed},
			{
				Name:  "session",
				Usage: "conversation transcripts: list, append, ingest, tokens, check, compact",
				Commands: []*cli.Command{
					{Name: "list", Usage: "every session with its turn count and first and last times, most recent first", ArgsUsage: " ", Action: a.sessionList},
					{
						Name:      "append",
						Usage:     "append one turn to sessions/ID.jsonl (flushed to disk, indexed before returning)",
						ArgsUsage: "TEXT|-",
						Flags: []cli.Flag{
							&cli.StringFlag{Name: "session", Usage: "session id (letters, digits, . _ -)", Required: true},
							&cli.StringFlag{Name: "role", Usage: "user, assistant, system or tool", Required: true},
							&cli.StringFlag{Name: "meta", Usage: "a JSON object kept with the turn"},
							&cli.StringFlag{Name: "channel", Usage: "where the turn came from: whatsapp, telegram, cli, ..."},
							&cli.StringFlag{Name: "source", Usage: "the chat or contact in the channel (needs --channel)"},
						},
						Action: a.sessionAppend,
					},
					{
						Name:      "ingest",
						Usage:     "import transcripts (memhost's JSONL or Claude Code's); importing again adds only new turns",
						ArgsUsage: "PATH...",
						Flags:     []cli.Flag{&cli.StringFlag{Name: "format", Value: "auto", Usage: "auto, memhost or claude-code"}},
						Action:    a.sessionIngest,
					},
					{Name: "tokens", Usage: "estimate a session's working context (since its last compaction)", ArgsUsage: "ID", Action: a.sessionTokens},
					{
						Name:      "check",
						Usage:     "say whether a flush or a compaction is due, counting the incoming message; records the flush",
						ArgsUsage: "ID",
						Flags:     []cli.Flag{&cli.IntFlag{Name: "incoming-tokens", Usage: "tokens of the message about to be added"}},
						Action:    a.sessionCheck,
					},
					{
						Name:      "compact",
						Usage:     "append a compaction entry: SUMMARY replaces older turns in the working context (nothing is deleted)",
						ArgsUsage: "ID",
						Flags:     []cli.Flag{&cli.StringFlag{Name: "summary", Usage: "the summary, or - for stdin"}, &cli.BoolFlag{Name: "summarize", Usage: "the generator (memory.generator.plugin) writes the summary"}},
						Action:    a.sessionCompact,
					},
				},
			},
			{
				Name:      "conversation-search",
				Usage:     "search conversation transcripts; each result names the session, turn, role and time",
				ArgsUsage: "QUERY",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "session", Usage: "only this session"},
					&cli.StringFlag{Name: "since", Usage: "only turns at or after this date (YYYY-MM-DD) or time (RFC 3339)"},
					&cli.StringFlag{Name: "until", Usage: "only turns at or before this date or time"},
					&cli.StringFlag{Name: "channel", Usage: "only turns from this channel (session append --channel)"},
					&cli.StringFlag{Name: "source", Usage: "only turns from this chat or contact (with --channel)"},
					&cli.IntFlag{Name: "max-results", Usage: "most results (default 10)", HideDefault: true},
				},
				Action: a.conversationSearch,
			},
			{
				Name:      "hook",
				Usage:     "answer an agent runtime hook (Claude Code): reads the hook's JSON on stdin, prints the answer",
				ArgsUsage: "session-start|pre-compact|session-end|stop",
				Action:    a.hook,
			},
			{
				Name:      "eval",
				Usage:     "measure conversation retrieval: mean evidence recall@k on an eval set (shared/bench layout)",
				ArgsUsage: "DIR",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "k", Value: "5,10,25,50", Usage: "cut-offs, in turns"},
					&cli.BoolFlag{Name: "mixed", Usage: "also ask each question in a home crowded with the other conversations' turns as daily-log pages; figures side by side"},
				},
				Action: a.eval,
			},
			{
				Name:  "models",
				Usage: "list, download and remove embedding models (GGUF) for the local provider",
				Commands: []*cli.Command{
					{Name: "list", Usage: "models in the models folder, with interrupted downloads", ArgsUsage: " ", Action: a.modelsList},
					{
						Name:      "pull",
						Usage:     "download a model (resumes an interrupted download); NAME is the default model's name, or give a URL",
						ArgsUsage: "NAME|URL",
						Flags:     []cli.Flag{&cli.StringFlag{Name: "sha256", Usage: "expected SHA-256 of the file (hex)"}},
						Action:    a.modelsPull,
					},
					{Name: "rm", Usage: "delete a model", ArgsUsage: "NAME", Action: a.modelsRm},
				},
			},
			{
				Name:  "plugins",
				Usage: "list, choose and inspect embeddings provider plugins",
				Commands: []*cli.Command{
					{Name: "list", Usage: "installed plugins with their version, model, dimensions and status", ArgsUsage: " ", Action: a.pluginsList},
					{
						Name:      "use",
						Usage:     "make NAME the embeddings provider (writes config.yaml); re-embeds in the background",
						ArgsUsage: "NAME",
						Flags: []cli.Flag{
							&cli.StringSliceFlag{Name: "set", Usage: "plugin option key=value (repeatable; key= removes it)"},
						},
						Action: a.pluginsUse,
					},
					{Name: "status", Usage: "the active provider, its state, and the search mode", ArgsUsage: " ", Action: a.pluginsStatus},
				},
			},
		},
	}
	root.Commands = append(root.Commands, healthCommand(a), serveCommand(a), mcpCommand(a))
	root.Commands = append(root.Commands, vaultCommands(a)...)
	root.Commands = append(root.Commands, factCommands(a)...)
	root.Commands = append(root.Commands, federationCommands(a)...)
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

// app holds what command actions share.
type app struct {
	io stdio
	// notUTF8: an argument is not UTF-8, which JSON cannot carry to a
	// server unchanged; the command runs in-process.
	notUTF8 bool
	// reqID is this command's request id when the launcher gave none
	// (requestID).
	reqID string
}

// requestID is the id a write of this command is recorded with: the
// launcher's (--request-id, the same when it runs the command again after
// its server died), else one chosen here, the same for the server and the
// in-process run with makes when the server dies under it.
func (a *app) requestID(cmd *cli.Command) string {
	if id := cmd.String("request-id"); id != "" {
		return id
	}
	if a.reqID == "" {
		var b [6]byte // as the launcher's: 12 hex digits
		rand.Read(b[:])
		a.reqID = hex.EncodeToString(b[:])
	}
	return a.reqID
}

// home resolves the home folder: --home, $MEMHOST_HOME, ~/.memhost.
func (a *app) home(cmd *cli.Command) (string, error) {
	if h := cmd.String("home"); h != "" {
		if a.io.cwd != "" {
			return a.abs(h), nil
		}
		return h, nil
	}
	if h := a.io.getenv("MEMHOST_HOME"); h != "" {
		if a.io.cwd != "" {
			return a.abs(h), nil
		}
		return h, nil
	}
	dir := a.io.getenv("HOME")
	if dir == "" {
		var err error
		if dir, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("no home folder: set --home or MEMHOST_HOME")
		}
	}
	return filepath.Join(dir, ".memhost"), nil
}

// open opens the host for a command.
func (a *app) open(ctx context.Context, cmd *cli.Command) (*host.Host, error) {
	home, err := a.home(cmd)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(home); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("home %s is a file, not a folder", home)
	}
	cfg, err := config.Load(filepath.Join(home, config.FileName), a.io.getenv)
	if err != nil {
		return nil, err
	}
	log := newWarnLines(a.io.stderr)
	level := a.io.getenv("MEMHOST_LOG_LEVEL")
	if level == "" {
		level = "warn"
	}
	opts := host.Options{
		Home: home, Config: cfg, Log: log, Getenv: a.io.getenv,
		PluginLog: hclog.New(&hclog.LoggerOptions{Name: "memhost", Level: hclog.LevelFromString(level),
			Output: &pluginLines{w: a.io.stderr}, DisableTime: true}),
	}
	if exe, err := os.Executable(); err == nil {
		opts.PluginDirs = []string{filepath.Dir(exe)}
	}
	if a.io.spawnEmbed != nil {
		opts.Background = func() error { return a.io.spawnEmbed(home) }
	}
	return host.Open(ctx, opts)
}

// withHost opens the host, runs fn, closes the host.
func (a *app) withHost(ctx context.Context, cmd *cli.Command, fn func(*host.Host) error) error {
	h, err := a.open(ctx, cmd)
	if err != nil {
		return err
	}
	defer h.Close()
	return fn(h)
}

// text returns the TEXT argument: the arguments joined by spaces, or stdin
// when the argument is "-" or missing and stdin is piped.
func (a *app) text(args []string) (string, error) {
	if len(args) == 1 && args[0] == "-" || len(args) == 0 && a.io.stdinIsPiped {
		b, err := io.ReadAll(io.LimitReader(a.io.stdin, maxStdin+1))
		if err != nil {
			return "", fmt.Errorf("reading stdin: %w", err)
		}
		if len(b) > maxStdin {
			return "", fmt.Errorf("text on stdin is larger than %d MB", maxStdin>>20)
		}
		return string(b), nil
	}
	if len(args) == 0 {
		return "", usagef("missing TEXT: give it as an argument, or - to read stdin")
	}
	return strings.Join(args, " "), nil
}

// out prints v as JSON with --json, else calls human.
func (a *app) out(cmd *cli.Command, v any, human func(w io.Writer)) error {
	if cmd.Bool("json") {
		enc := json.NewEncoder(a.io.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	human(a.io.stdout)
	return nil
}

func noArgs(cmd *cli.Command) error {
	if cmd.Args().Len() > 0 {
		return usagef("%s takes no arguments, got %q", cmd.Name, cmd.Args().First())
	}
	return nil
}

func onePath(cmd *cli.Command) (string, error) {
	switch cmd.Args().Len() {
	case 0:
		return "", usagef("missing PATH (relative to the notebook, e.g. reference/contacts.md)")
	case 1:
		return cmd.Args().First(), nil
	}
	return "", usagef("%s takes one PATH, got %d arguments", cmd.Name, cmd.Args().Len())
}

func lines(l mh.Lines) string {
	if l.Start == l.End {
		return fmt.Sprintf("line %d", l.Start)
	}
	return fmt.Sprintf("lines %d-%d", l.Start, l.End)
}
