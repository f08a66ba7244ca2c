package servecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/internal/relay"
	"github.com/memhost/memhost/internal/version"
	"github.com/memhost/memhost/mcp"
	"github.com/memhost/memhost/server"
	"github.com/memhost/memhost/server/client"
)

func serveCommand(a cmds) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "run the host process: the HTTP API on a socket in the home and on 127.0.0.1:4321; other commands forward to it",
		Description: "memhost serve keeps the index open, the embeddings plugin warm and the notebook watched,\n" +
			"so that every other memhost command of this home answers through it in a few milliseconds.\n" +
			"It runs in the foreground until Ctrl-C (or SIGTERM), or in the background with --detach.\n\n" +
			"Examples:\n" +
			"  memhost serve --detach            start it in the background (log in brain/serve.log)\n" +
			"  memhost serve --listen 127.0.0.1:0  any free port\n" +
			"  memhost serve status              pid, addresses, uptime, version\n" +
			"  memhost serve stop",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Usage: "TCP address of the API (\"\" for the unix socket only; port 0 for any free port) (default: server.listen, " + "127.0.0.1:4321)"},
			&cli.StringFlag{Name: "token-file", Usage: "bearer token file, needed for an address that is not loopback (default: brain/serve.token, made when needed)"},
			&cli.BoolFlag{Name: "detach", Usage: "run in the background; its log goes to brain/serve.log"},
			// A command that found no server starts one so (server.autostart).
			&cli.BoolFlag{Name: "on-demand", Hidden: true, Usage: "started by a command: the unix socket only (unless server.listen is set), exits after server.idleExitSeconds idle"},
		},
		Action: a.serve,
		Commands: []*cli.Command{
			{Name: "status", Usage: "whether a server runs for the home: pid, addresses, uptime, version", ArgsUsage: " ", Action: a.serveStatus},
			{Name: "stop", Usage: "stop the home's server (it finishes requests in flight)", ArgsUsage: " ", Action: a.serveStop},
		},
	}
}

func (a cmds) serve(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	home, err := a.Home(cmd)
	if err != nil {
		return err
	}
	onDemand := cmd.Bool("on-demand")
	if !onDemand {
		// A server started on demand gives way to one started by hand.
		if err := a.replaceOnDemand(ctx, home); err != nil {
			return err
		}
	}
	if cmd.Bool("detach") {
		return a.detach(ctx, cmd, home)
	}
	tokenFile := cmd.String("token-file")
	if tokenFile != "" {
		tokenFile = a.Abs(tokenFile) // the caller's folder's, not the home's
	}
	opts := server.RunOptions{
		Home:      home,
		Getenv:    a.IO.Getenv,
		TokenFile: tokenFile,
		Log:       slog.New(slog.NewTextHandler(a.IO.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
		LogPath:   a.IO.Getenv("MEMHOST_SERVE_LOG"),
		Open: func(ctx context.Context) (*host.Host, error) {
			quiet := *a.App
			quiet.IO.SpawnEmbed = nil // the server's own worker embeds
			return quiet.Open(ctx, cmd)
		},
		Ready: func(in server.Info) {
			if cmd.Bool("on-demand") {
				server.AutostartFailed(home, nil)
			}
			if cmd.Bool("json") {
				a.Out(cmd, in, nil)
				return
			}
			fmt.Fprintf(a.IO.Stdout, "memhost serve: pid %d, memhost %s, home %s\n", in.PID, in.Version, a.Tilde(in.Home))
			if in.URL != "" {
				auth := "no token on loopback"
				if in.Token {
					auth = "bearer token required"
				}
				fmt.Fprintf(a.IO.Stdout, "  %s (%s)\n", in.URL, auth)
				if in.Moved != "" {
					fmt.Fprintf(a.IO.Stdout, "  (%s)\n", in.Moved)
				}
				fmt.Fprintf(a.IO.Stdout, "  dashboard: %s\n", dashboardURL(in))
			}
			fmt.Fprintf(a.IO.Stdout, "  unix://%s\n", a.Tilde(in.Socket))
			fmt.Fprintln(a.IO.Stdout, "other memhost commands of this home now run through it; Ctrl-C stops it")
		},
	}
	if op := a.IO.Getenv("MEMHOST_CRASH_AFTER_WRITE"); op != "" {
		opts.AfterWrite = func(wrote string) {
			if op == "*" || op == wrote {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	if cmd.IsSet("listen") {
		l := cmd.String("listen")
		opts.Listen = &l
	}
	if onDemand {
		cfg, err := a.Config(cmd)
		if err != nil {
			return err
		}
		opts.OnDemand, opts.IdleExit = true, time.Duration(cfg.Server.IdleExitSeconds)*time.Second
	}
	opts.SocketRoutes = func(h *host.Host, s *server.Server) map[string]http.Handler {
		return map[string]http.Handler{relay.Path: a.relayHandler(h, s)}
	}
	opts.MCP = func(h *host.Host, s *server.Server) http.Handler {
		return server.NewMCPHandler(h, s, mcp.Options{})
	}
	for try := 0; ; try++ {
		err = server.Run(ctx, opts)
		if !errors.Is(err, server.ErrRunning) || onDemand || try == 3 {
			break
		}
		// An on-demand server still starting when replaceOnDemand looked
		// (its lock taken, its socket not yet there), or one a command
		// started as the last went: it gives way too.
		if in, held := server.Holder(home); !held || !(in.OnDemand || in.PID == 0) {
			break
		}
		time.Sleep(200 * time.Millisecond)
		if rerr := a.replaceOnDemand(ctx, home); rerr != nil {
			return rerr
		}
	}
	if onDemand {
		if errors.Is(err, server.ErrRunning) {
			return nil // another command's start won the home: it serves
		}
		server.AutostartFailed(home, err) // the next commands do not try again at once
	}
	return err
}

// replaceOnDemand stops the home's server if a command started it
// (server.autostart), so that memhost serve runs with its own flags; a
// server started by hand stays (serve then says it runs).
func (a cmds) replaceOnDemand(ctx context.Context, home string) error {
	c, err := client.Dial(home, nil)
	if err != nil {
		return nil
	}
	defer c.Close()
	_, err = cmdapp.StopOnDemand(ctx, c, cmdapp.AnyOnDemand)
	return err
}

// detach starts `memhost serve` in a new session with its output in
// brain/serve.log, and returns once it answers (or says why it stopped).
func (a cmds) detach(ctx context.Context, cmd *cli.Command, home string) error {
	if c, err := client.Dial(home, nil); err == nil {
		defer c.Close()
		if in, err := c.Info(ctx); err == nil {
			return fault.Errorf(fault.Conflict, "", "memhost serve already runs for %s (pid %d)", in.Home, in.PID)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home+"/brain", 0o700); err != nil {
		return err
	}
	logPath := server.LogPath(home)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	start, _ := logf.Seek(0, io.SeekEnd)
	args := []string{"--home", home, "serve"}
	for _, f := range []string{"listen", "token-file"} {
		if cmd.IsSet(f) {
			v := cmd.String(f)
			if f == "token-file" {
				v = a.Abs(v) // the child runs elsewhere
			}
			args = append(args, "--"+f, v)
		}
	}
	child := exec.Command(exe, args...)
	child.Stdout, child.Stderr = logf, logf
	child.Env = append(os.Environ(), "MEMHOST_SERVE_LOG="+logPath)
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := child.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case <-exited:
			return fmt.Errorf("memhost serve stopped at start: %s (log: %s)", lastLine(logPath, start), logPath)
		case <-deadline:
			return fmt.Errorf("memhost serve (pid %d) did not answer within 60 s; see %s", child.Process.Pid, logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		c, err := client.Dial(home, nil)
		if err != nil {
			continue
		}
		in, err := c.Info(ctx)
		c.Close()
		if err != nil || in.PID != child.Process.Pid {
			continue
		}
		return a.Out(cmd, in, func(w io.Writer) {
			fmt.Fprintf(w, "memhost serve: running in the background, pid %d\n", in.PID)
			if in.URL != "" {
				fmt.Fprintf(w, "  %s\n", in.URL)
				if in.Moved != "" {
					fmt.Fprintf(w, "  (%s)\n", in.Moved)
				}
				fmt.Fprintf(w, "  dashboard: %s\n", dashboardURL(in))
			}
			fmt.Fprintf(w, "  unix://%s\n  log: %s\n", a.Tilde(in.Socket), a.Tilde(logPath))
		})
	}
}

// lastLine is the last non-empty line written to the log after offset.
func lastLine(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < offset {
		return "no log"
	}
	// Another server started at the same moment writes to the same log:
	// the child's own words are its last error line.
	lines := strings.Split(strings.TrimSpace(string(b[offset:])), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if msg, ok := strings.CutPrefix(lines[i], "memhost: "); ok {
			return msg
		}
	}
	return lines[len(lines)-1]
}

func (a cmds) serveStatus(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	c, in, err := a.running(ctx, cmd)
	if err != nil {
		return err
	}
	c.Close()
	return a.Out(cmd, in, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "server:\trunning, pid %d\n", in.PID)
		ver := in.Version
		if ver != version.String() {
			ver += " (this memhost is " + version.String() + ": restart the server to match)"
		}
		fmt.Fprintf(tw, "version:\t%s\n", ver)
		fmt.Fprintf(tw, "home:\t%s\n", a.Tilde(in.Home))
		if in.URL != "" {
			auth := ""
			if in.Token {
				auth = " (bearer token required)"
			}
			fmt.Fprintf(tw, "url:\t%s%s\n", in.URL, auth)
			if in.Moved != "" {
				fmt.Fprintf(tw, "\t(%s)\n", in.Moved)
			}
			fmt.Fprintf(tw, "browser:\t%s (the dashboard)\n", dashboardURL(in))
		}
		fmt.Fprintf(tw, "socket:\tunix://%s\n", a.Tilde(in.Socket))
		fmt.Fprintf(tw, "uptime:\t%s\n", (time.Duration(in.UptimeS) * time.Second).String())
		watcher := "active"
		if !in.Watcher {
			watcher = "stopped (searches check every page)"
		}
		fmt.Fprintf(tw, "watcher:\t%s\n", watcher)
		if in.LogPath != "" {
			fmt.Fprintf(tw, "log:\t%s\n", a.Tilde(in.LogPath))
		}
		switch {
		case in.OnDemand && in.IdleExitS > 0:
			fmt.Fprintf(tw, "started:\ton demand by a command; exits after %s without a request\n", time.Duration(in.IdleExitS)*time.Second)
		case in.OnDemand:
			fmt.Fprintf(tw, "started:\ton demand by a command; stays (server.idleExitSeconds: 0)\n")
		default:
			fmt.Fprintf(tw, "started:\tby memhost serve\n")
		}
		tw.Flush()
	})
}

// running connects to the home's server and asks about it.
func (a cmds) running(ctx context.Context, cmd *cli.Command) (*client.Client, server.Info, error) {
	home, err := a.Home(cmd)
	if err != nil {
		return nil, server.Info{}, err
	}
	c, err := client.Dial(home, nil)
	if err != nil {
		if in, held := server.Holder(home); held {
			return nil, in, fault.Errorf(fault.Unavailable, "", "memhost serve (pid %d) holds %s but its socket %s does not answer: stop it with kill %d", in.PID, home, server.SocketPath(home), in.PID)
		}
		return nil, server.Info{}, fault.Errorf(fault.NotFound, "", "no memhost server runs for %s", home)
	}
	in, err := c.Info(ctx)
	if err != nil {
		c.Close()
		return nil, in, err
	}
	return c, in, nil
}

func (a cmds) serveStop(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	c, in, err := a.running(ctx, cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Stop(ctx); err != nil {
		return err
	}
	// Wait for the process to go: it finishes requests in flight first.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if in.PID != os.Getpid() {
			if err := syscall.Kill(in.PID, 0); errors.Is(err, syscall.ESRCH) {
				break
			}
			continue
		}
		// A server in this very process (tests): its socket goes last.
		c2, err := client.Dial(in.Home, nil)
		if err != nil {
			break
		}
		c2.Close()
	}
	return a.Out(cmd, map[string]any{"stopped": true, "pid": in.PID}, func(w io.Writer) {
		fmt.Fprintf(w, "stopped memhost serve (pid %d)\n", in.PID)
	})
}

// dashboardURL is where a browser opens the dashboard (server/dashboard).
// With a token, the browser brings it once in the address and keeps it as
// a cookie; the token itself is not printed.
func dashboardURL(in server.Info) string {
	if in.Token {
		return in.URL + "/?token=TOKEN (TOKEN: the token file's content; opened once, the browser keeps a cookie)"
	}
	return in.URL + "/"
}
