// Package cmdapp is what the CLI's commands share: the App (the run's
// standard streams and environment, the home, the host opened in this
// process or the server it forwards to), the wording of errors and exit
// codes, JSON or text output, and the small printers every group uses.
// The commands themselves are in the command-group packages beside it
// (corecmd, notecmd, mcpcmd, servecmd); package main builds the tree.
package cmdapp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/urfave/cli/v3"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/modelstore"
	"github.com/memhost/memhost/server"
	"github.com/memhost/memhost/server/client"
)

// Stdio is everything a run reads from or writes to outside its arguments,
// so that tests can run the command as a function.
type Stdio struct {
	Stdin        io.Reader
	StdinIsPiped bool // stdin is a pipe or file: read text from it when no argument is given
	Stdout       io.Writer
	StdoutIsTTY  bool // progress bars instead of progress lines
	Stderr       io.Writer
	Getenv       func(string) string
	// environ lists the environment as "NAME=value" pairs, to warn of
	// MEMHOST_ variables memhost does not read; nil skips the check (a
	// command relayed by the launcher, tests).
	Environ func() []string
	// spawnEmbed starts `memhost embed` for home in the background; nil
	// disables background embedding (in-process tests).
	SpawnEmbed func(home string) error
	// SpawnServer starts `memhost serve --on-demand` for home in the
	// background (server.autostart); nil never starts one (in-process
	// tests).
	SpawnServer func(home string) error
	// cwd, when set, is the caller's working folder for relative paths
	// (a command run in the server for the launcher); "" is this process's.
	Cwd string
	// shared, when set, is the Host every command runs on (the server's,
	// for a command relayed by the launcher), and follow its events.
	Shared *host.Host
	Follow func(context.Context, func(server.Event)) error
}

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1 // the command failed
	ExitUsage = 2 // bad flags or arguments
)

// UsageError is a wrong command line: run prints it and exits 2.
type UsageError struct{ error }

func (e UsageError) Unwrap() error { return e.error }

// Usagef is a UsageError with the message given.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// Usage makes err a UsageError.
func Usage(err error) error { return UsageError{err} }

// maxStdin bounds text read from stdin.
const maxStdin = 64 << 20

// Message words an error for people, from its kind and, for page paths,
// the path; never from its text.
func Message(err error) string {
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

// App holds what command actions share.
type App struct {
	IO Stdio
	// notUTF8: an argument is not UTF-8, which JSON cannot carry to a
	// server unchanged; the command runs in-process.
	NotUTF8 bool
	// reqID is this command's request id when the launcher gave none
	// (requestID).
	reqID string
}

// RequestID is the id a write of this command is recorded with: the
// launcher's (--request-id, the same when it runs the command again after
// its server died), else one chosen here, the same for the server and the
// in-process run with makes when the server dies under it.
func (a *App) RequestID(cmd *cli.Command) string {
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

// Home resolves the home folder: --home, $MEMHOST_HOME, ~/.memhost.
func (a *App) Home(cmd *cli.Command) (string, error) {
	if h := cmd.String("home"); h != "" {
		if a.IO.Cwd != "" {
			return a.Abs(h), nil
		}
		return h, nil
	}
	if h := a.IO.Getenv("MEMHOST_HOME"); h != "" {
		if a.IO.Cwd != "" {
			return a.Abs(h), nil
		}
		return h, nil
	}
	dir := a.IO.Getenv("HOME")
	if dir == "" {
		var err error
		if dir, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("no home folder: set --home or MEMHOST_HOME")
		}
	}
	return filepath.Join(dir, ".memhost"), nil
}

// Open opens the host for a command.
func (a *App) Open(ctx context.Context, cmd *cli.Command) (*host.Host, error) {
	home, err := a.Home(cmd)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(home); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("home %s is a file, not a folder", home)
	}
	cfg, err := config.Load(filepath.Join(home, config.FileName), a.IO.Getenv)
	if err != nil {
		return nil, err
	}
	log := NewWarnLines(a.IO.Stderr)
	level := a.IO.Getenv("MEMHOST_LOG_LEVEL")
	if level == "" {
		level = "warn"
	}
	opts := host.Options{
		Home: home, Config: cfg, Log: log, Getenv: a.IO.Getenv,
		PluginLog: hclog.New(&hclog.LoggerOptions{Name: "memhost", Level: hclog.LevelFromString(level),
			Output: &PluginLines{w: a.IO.Stderr}, DisableTime: true}),
	}
	if exe, err := os.Executable(); err == nil {
		opts.PluginDirs = []string{filepath.Dir(exe)}
	}
	if a.IO.SpawnEmbed != nil {
		opts.Background = func() error { return a.IO.SpawnEmbed(home) }
	}
	return host.Open(ctx, opts)
}

// WithHost opens the host, runs fn, closes the host.
func (a *App) WithHost(ctx context.Context, cmd *cli.Command, fn func(*host.Host) error) error {
	h, err := a.Open(ctx, cmd)
	if err != nil {
		return err
	}
	defer h.Close()
	return fn(h)
}

// Text returns the TEXT argument: the arguments joined by spaces, or stdin
// when the argument is "-" or missing and stdin is piped.
func (a *App) Text(args []string) (string, error) {
	if len(args) == 1 && args[0] == "-" || len(args) == 0 && a.IO.StdinIsPiped {
		b, err := io.ReadAll(io.LimitReader(a.IO.Stdin, maxStdin+1))
		if err != nil {
			return "", fmt.Errorf("reading stdin: %w", err)
		}
		if len(b) > maxStdin {
			return "", fmt.Errorf("text on stdin is larger than %d MB", maxStdin>>20)
		}
		return string(b), nil
	}
	if len(args) == 0 {
		return "", Usagef("missing TEXT: give it as an argument, or - to read stdin")
	}
	return strings.Join(args, " "), nil
}

// Out prints v as JSON with --json, else calls human.
func (a *App) Out(cmd *cli.Command, v any, human func(w io.Writer)) error {
	if cmd.Bool("json") {
		enc := json.NewEncoder(a.IO.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	human(a.IO.Stdout)
	return nil
}

// NoArgs refuses arguments to a command that takes none.
func NoArgs(cmd *cli.Command) error {
	if cmd.Args().Len() > 0 {
		return Usagef("%s takes no arguments, got %q", cmd.Name, cmd.Args().First())
	}
	return nil
}

// OnePath is the one PATH argument of a command.
func OnePath(cmd *cli.Command) (string, error) {
	switch cmd.Args().Len() {
	case 0:
		return "", Usagef("missing PATH (relative to the notebook, e.g. reference/contacts.md)")
	case 1:
		return cmd.Args().First(), nil
	}
	return "", Usagef("%s takes one PATH, got %d arguments", cmd.Name, cmd.Args().Len())
}

// Lines shows a line range: "line 4", "lines 4-9".
func Lines(l mh.Lines) string {
	if l.Start == l.End {
		return fmt.Sprintf("line %d", l.Start)
	}
	return fmt.Sprintf("lines %d-%d", l.Start, l.End)
}

// Ops is what the commands call: a *host.Host opened in this process, or a
// *client.Client forwarding to the home's running server. Both run the
// operation table's API (api.Ops) with the same responses and error
// kinds, so a command prints the same either way.
type Ops = api.API

// With runs fn on the home's server when one runs (unless --no-server),
// else on the home opened in this process. A server that stops answering
// mid-request (killed) is reported on stderr and fn runs again in-process:
// the notebook and transcripts are the same files either way.
//
// A server whose environment overrides config.yaml differently from this
// process's (MEMHOST_MEMORY_SEARCH_MAXRESULTS=3 memhost recall ...) would
// answer differently: the command then runs in-process, as it does with
// --no-server.
func (a *App) With(ctx context.Context, cmd *cli.Command, fn func(Ops) error) error {
	if a.IO.Shared != nil { // relayed into the server
		if _, err := a.Config(cmd); err != nil {
			return err
		}
		return fn(a.IO.Shared)
	}
	if c, err := a.Dial(cmd); err == nil {
		err = fn(c)
		if a.retireOnDemand(ctx, c, err) {
			// An on-demand server of another memhost (one from before an
			// upgrade): it is stopped, and this command starts this
			// memhost's once it is done.
			c.Close()
			defer a.Autostart(cmd)
			return a.WithHost(ctx, cmd, func(h *host.Host) error { return fn(h) })
		}
		c.Close()
		if !FallBack(err) {
			return err
		}
		if !EnvDiffers(err) {
			fmt.Fprintf(a.IO.Stderr, "memhost: warning: %v; running in this process instead\n", err)
		}
	} else if !errors.Is(err, client.ErrNoServer) {
		return err
	} else {
		// Once this command is done, so that the server's start takes
		// nothing from it.
		defer a.Autostart(cmd)
	}
	return a.WithHost(ctx, cmd, func(h *host.Host) error { return fn(h) })
}

// Autostart starts the home's server in the background when none answered
// and server.autostart allows it, and reports whether it did. The command
// that calls it runs in its own process, and starts the server once it is
// done, so that it waits no longer than without a server (but for the
// process start); the next ones answer through the server. (An MCP
// session calls it when it starts, and waits a little for the server.)
// After a start that failed (server.AutostartFailed), none is tried for
// server.AutostartBackoff. Many
// starting at once are harmless: the first server to take the home's
// lock serves, the others exit at once. Nothing starts under --no-server
// or MEMHOST_NO_SERVER, for an argument JSON cannot carry, or when the
// home's brain/ cannot be written (a read-only disk): the command runs
// in-process as before.
func (a *App) Autostart(cmd *cli.Command) bool {
	if a.IO.SpawnServer == nil || cmd.Bool("no-server") || a.IO.Getenv("MEMHOST_NO_SERVER") != "" || a.NotUTF8 {
		return false
	}
	cfg, err := a.Config(cmd)
	if err != nil || !cfg.Server.Autostart {
		return false
	}
	home, err := a.Home(cmd)
	if err != nil || server.AutostartFailedLately(home) {
		return false
	}
	return a.IO.SpawnServer(home) == nil
}

// retireOnDemand stops the server c reaches when it refused the command
// for its version and a command started it (server.autostart): a server
// the user started stays, and the error tells them to restart it.
func (a *App) retireOnDemand(ctx context.Context, c *client.Client, err error) bool {
	if fault.KindOf(err) != fault.Conflict || fault.FieldOf(err) != "version" {
		return false
	}
	stopped, _ := StopOnDemand(ctx, c, AnyOnDemand)
	return stopped
}

// StopOnDemand stops the server c reaches if a command started it
// (Info.OnDemand) and stop says so of its Info (the server's own
// endpoints answer any version), then waits up to 60 s for the home's
// lock to be free. It reports whether it stopped one; a server started by
// hand is left alone.
func StopOnDemand(ctx context.Context, c *client.Client, stop func(server.Info) bool) (bool, error) {
	in, err := c.Info(ctx)
	if err != nil || !in.OnDemand || !stop(in) {
		return false, nil
	}
	if err := c.Stop(ctx); err != nil {
		return false, err
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, held := server.Holder(in.Home); !held {
			return true, nil
		}
	}
	return true, fault.Errorf(fault.Conflict, "", "the server started on demand (pid %d) did not stop within 60 s", in.PID)
}

// AnyOnDemand is StopOnDemand's stop for every on-demand server.
func AnyOnDemand(server.Info) bool { return true }

// Dial connects to the home's server: client.ErrNoServer when none runs or
// --no-server is given. config.yaml is read first, as an in-process run
// would: a broken file is reported the same way with or without a server
// (the server keeps its last good settings).
func (a *App) Dial(cmd *cli.Command) (*client.Client, error) {
	if cmd.Bool("no-server") || a.IO.Getenv("MEMHOST_NO_SERVER") != "" || a.NotUTF8 {
		return nil, client.ErrNoServer
	}
	home, err := a.Home(cmd)
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(home, server.EnvOverrides(a.IO.Getenv))
	if err != nil {
		return nil, err
	}
	if _, err := a.Config(cmd); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Config reads the home's config.yaml as an in-process run would.
func (a *App) Config(cmd *cli.Command) (config.Config, error) {
	home, err := a.Home(cmd)
	if err != nil {
		return config.Config{}, err
	}
	return config.Load(filepath.Join(home, config.FileName), a.IO.Getenv)
}

// FallBack says whether a call the server answered with err runs again
// in this process: the server stopped answering mid-request (killed; a
// write may or may not have happened, and every write is idempotent under
// retry), or it reads the configuration otherwise than this process. The
// one policy of the commands (with) and of MCP (mcpOps).
func FallBack(err error) bool {
	var gone *client.UnreachableError
	return errors.As(err, &gone) || EnvDiffers(err)
}

// EnvDiffers reports the server's refusal of a client whose environment
// overrides the configuration differently.
func EnvDiffers(err error) bool {
	return fault.KindOf(err) == fault.Conflict && fault.FieldOf(err) == "env"
}

// warnLines is the slog handler of a command's Host: its warnings (an
// index moved aside, a plugin restarting) print as the CLI's own, one line
// each — "memhost: warning: message (key: value, …)" — not as log records.
type warnLines struct {
	mu    *sync.Mutex
	w     io.Writer
	attrs []slog.Attr
}

// NewWarnLines is a logger printing warnings as warnLines does.
func NewWarnLines(w io.Writer) *slog.Logger {
	return slog.New(&warnLines{mu: &sync.Mutex{}, w: w})
}

func (h *warnLines) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *warnLines) Handle(_ context.Context, r slog.Record) error {
	var parts []string
	add := func(a slog.Attr) bool {
		parts = append(parts, a.Key+": "+a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	line := "memhost: warning: " + r.Message
	if r.Level >= slog.LevelError {
		line = "memhost: " + r.Message
	}
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	line = strings.Join(strings.Fields(line), " ") // one line, whatever the values hold
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := fmt.Fprintln(h.w, line)
	return err
}

func (h *warnLines) WithAttrs(as []slog.Attr) slog.Handler {
	return &warnLines{mu: h.mu, w: h.w, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *warnLines) WithGroup(string) slog.Handler { return h }

// PluginLines is where a command's plugin log (hclog, without times) goes:
// each record prints as the CLI's own warning line — "memhost: warning:
// local plugin: message key=value" — not in hclog's format.
type PluginLines struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *PluginLines) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if _, err := fmt.Fprintln(p.w, pluginLine(line)); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// pluginLine rewords one hclog line: "[WARN]  memhost.local.memhost-
// embeddings-local: text" is "memhost: warning: local plugin: text".
func pluginLine(line string) string {
	prefix := "memhost: warning: "
	if rest, ok := strings.CutPrefix(line, "["); ok {
		level, after, found := strings.Cut(rest, "]")
		if found {
			if level == "ERROR" {
				prefix = "memhost: "
			}
			line = strings.TrimSpace(after)
		}
	}
	if name, text, ok := strings.Cut(line, ": "); ok && !strings.Contains(name, " ") {
		parts := strings.Split(name, ".")
		switch {
		case len(parts) >= 2 && parts[0] == "memhost":
			line = parts[1] + " plugin: " + text
		case len(parts) == 1 && parts[0] == "memhost":
			line = text
		}
	}
	return prefix + strings.Join(strings.Fields(line), " ")
}

// WorkDir is the caller's working folder: the launcher's, when the command
// runs in the server, else this process's.
func (a *App) WorkDir() string {
	if a.IO.Cwd != "" {
		return a.IO.Cwd
	}
	wd, _ := os.Getwd()
	return wd
}

// Abs resolves a path given on the command line against the caller's
// working folder.
func (a *App) Abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.WorkDir(), p)
}

// Tilde shows a path under the user's home folder as ~/…, the way people
// write it; text output only (--json keeps absolute paths).
func (a *App) Tilde(p string) string {
	home := a.IO.Getenv("HOME")
	if home == "" || home == "/" || p == "" || !filepath.IsAbs(p) {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		if rel == "." {
			return "~"
		}
		return "~/" + rel
	}
	return p
}

// Quoted is a transcript hit's context as a line quoting the turn before
// ("      > Caroline: Did you go hiking?"), or nothing.
func Quoted(context string) string {
	if context == "" {
		return ""
	}
	return "      > " + context + "\n"
}

// Warn prints each warning to stderr, one line each.
func (a *App) Warn(warnings ...string) {
	for _, w := range warnings {
		fmt.Fprintln(a.IO.Stderr, "memhost: warning: "+w)
	}
}

// Redacted tells on stderr of each secret a write replaced before storing
// what it was given (memory.privacy.secrets: redact), never the secret.
func (a *App) Redacted(red []mh.Redaction) {
	for _, r := range red {
		fmt.Fprintf(a.IO.Stderr, "memhost: secret redacted before it was stored: %s …%s (%s, line %d)\n", r.Rule, r.Fingerprint, r.Field, r.Line)
	}
}

// Plural is "1 turn", "2 turns".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Progress shows a download: a bar redrawn in place on a terminal, a line
// every 10% otherwise, nothing with --json.
type Progress struct {
	w     io.Writer
	tty   bool
	quiet bool
	last  int    // last tenth printed
	Verb  string // what it shows ("copying"); "" is downloading
	drew  bool
	drawn time.Time // the bar's last redraw: the store reports every read
}

// NewProgress shows a download on w: as a bar on a terminal (tty),
// nothing when quiet.
func NewProgress(w io.Writer, tty, quiet bool) *Progress {
	return &Progress{w: w, tty: tty, quiet: quiet, last: -1}
}

// doing names what the bar shows: "downloading" unless set.
func (p *Progress) Doing() string {
	if p.Verb == "" {
		return "downloading"
	}
	return p.Verb
}

func (p *Progress) Update(done, total int64) {
	if p.quiet {
		return
	}
	if p.tty && done != total {
		if time.Since(p.drawn) < 100*time.Millisecond {
			return
		}
		p.drawn = time.Now()
	}
	if total <= 0 {
		if p.tty {
			fmt.Fprintf(p.w, "\r%s: %s", p.Doing(), modelstore.HumanSize(done))
			p.drew = true
		}
		return
	}
	frac := float64(done) / float64(total)
	if p.tty {
		const width = 30
		n := int(frac * width)
		fmt.Fprintf(p.w, "\r[%s%s] %3.0f%% %s of %s", strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, modelstore.HumanSize(done), modelstore.HumanSize(total))
		p.drew = true
		return
	}
	if tenth := int(frac * 10); tenth > p.last {
		p.last = tenth
		fmt.Fprintf(p.w, "%s: %d%% (%s of %s)\n", p.Doing(), tenth*10, modelstore.HumanSize(done), modelstore.HumanSize(total))
	}
}

func (p *Progress) Done() {
	if p.drew {
		fmt.Fprintln(p.w)
	}
}

// Short is a commit id as messages show it.
func Short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// ExitStatus ends a command that printed its answer with a code other than
// 0 and no error message (run prints nothing for it).
type ExitStatus int

func (e ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
