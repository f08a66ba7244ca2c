// Command memhost is the agent's and the person's interface to a memhost
// home: remember, recall, read and write notebook pages, and keep the index
// in step. Run `memhost help` for the commands.
package main

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	_ "time/tzdata" // time zones from config work on machines without tzdata

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/registry"
)

func main() {
	// What memhost creates (transcripts, the index, SQLite's journals,
	// git's objects, config.yaml) is the user's alone, whatever the
	// shell's umask: a home holds what an agent was told.
	syscall.Umask(0o077)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, cmdapp.Stdio{
		Stdin:        os.Stdin,
		StdinIsPiped: isPiped(os.Stdin),
		Stdout:       os.Stdout,
		StdoutIsTTY:  !isPiped(os.Stdout),
		Stderr:       os.Stderr,
		Getenv:       os.Getenv,
		Environ:      os.Environ,
		SpawnEmbed:   spawnEmbed,
		SpawnServer:  spawnServer,
	})
	stop()
	registry.KillAll() // no plugin process outlives memhost
	os.Exit(code)
}

// isPiped reports whether f is a pipe or file rather than a terminal.
func isPiped(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice == 0
}

// spawnEmbed starts `memhost embed` for home as a detached process that
// outlives this one, at low priority (lowprio_linux.go); its output goes to
// brain/embed.log. Only one embedder runs at a time (it takes
// brain/embed.lock), so extra starts exit at once.
func spawnEmbed(home string) error {
	cmd, err := detached(home, "embed.log", startLowPriority, func(string) []string { return os.Environ() }, "embed")
	if err != nil {
		return err
	}
	return cmd.Process.Release()
}

// spawnServer starts `memhost serve --on-demand` for home as a detached
// process, its output appended to brain/serve.log, and does not wait for
// it (cmdapp.App.Autostart). It fails, starting nothing, when brain/
// cannot be written.
func spawnServer(home string) error {
	env := func(logPath string) []string { return append(serverEnv(os.Environ()), "MEMHOST_SERVE_LOG="+logPath) }
	cmd, err := detached(home, "serve.log", (*exec.Cmd).Start, env, "serve", "--on-demand")
	if err != nil {
		return err
	}
	// Reaped when it exits (it lost the home to another, or went idle)
	// while this process still runs: a long MCP session leaves no zombie.
	go cmd.Wait()
	return nil
}

// detached starts this binary for home (made absolute) with args, by
// start, in a session of its own and the root folder (it outlives the
// caller's terminal and folder), its output appended to brain/LOG, its
// environment env(the log's path).
func detached(home, log string, start func(*exec.Cmd) error, env func(logPath string) []string, args ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	if err := os.MkdirAll(filepath.Join(home, "brain"), 0o700); err != nil {
		return nil, err
	}
	logPath := filepath.Join(home, "brain", log)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(exe, append([]string{"--home", home}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = "/"
	cmd.Env = env(logPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := start(cmd); err != nil {
		return nil, err
	}
	return cmd, nil
}

// serverEnv is the environment of a server started on demand: the
// caller's, but its overrides of config.yaml (MEMHOST_MEMORY_…), which
// were meant for that one command; a server keeping them would answer
// the next commands, which lack them, otherwise (they would run
// in-process for ever). The server block's (MEMHOST_SERVER_…), the time
// zone and the calendar clock stay.
func serverEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "MEMHOST_") && !strings.HasPrefix(k, "MEMHOST_SERVER_") && config.IsOverride(k) {
			continue
		}
		out = append(out, kv)
	}
	return out
}
