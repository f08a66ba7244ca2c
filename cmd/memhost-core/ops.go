package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/memhost/memhost/api"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/server"
	"github.com/memhost/memhost/server/client"
)

// ops is what the commands call: a *host.Host opened in this process, or a
// *client.Client forwarding to the home's running server. Both run the
// operation table's API (api.Ops) with the same responses and error
// kinds, so a command prints the same either way.
type ops = api.API

// with runs fn on the home's server when one runs (unless --no-server),
// else on the home opened in this process. A server that stops answering
// mid-request (killed) is reported on stderr and fn runs again in-process:
// the notebook and transcripts are the same files either way.
//
// A server whose environment overrides config.yaml differently from this
// process's (MEMHOST_MEMORY_SEARCH_MAXRESULTS=3 memhost recall ...) would
// answer differently: the command then runs in-process, as it does with
// --no-server.
func (a *app) with(ctx context.Context, cmd *cli.Command, fn func(ops) error) error {
	if a.io.shared != nil { // relayed into the server
		if _, err := a.config(cmd); err != nil {
			return err
		}
		return fn(a.io.shared)
	}
	if c, err := a.dial(cmd); err == nil {
		err = fn(c)
		c.Close()
		if !fallBack(err) {
			return err
		}
		if !envDiffers(err) {
			fmt.Fprintf(a.io.stderr, "memhost: warning: %v; running in this process instead\n", err)
		}
	} else if !errors.Is(err, client.ErrNoServer) {
		return err
	}
	return a.withHost(ctx, cmd, func(h *host.Host) error { return fn(h) })
}

// dial connects to the home's server: client.ErrNoServer when none runs or
// --no-server is given. config.yaml is read first, as an in-process run
// would: a broken file is reported the same way with or without a server
// (the server keeps its last good settings).
func (a *app) dial(cmd *cli.Command) (*client.Client, error) {
	if cmd.Bool("no-server") || a.io.getenv("MEMHOST_NO_SERVER") != "" || a.notUTF8 {
		return nil, client.ErrNoServer
	}
	home, err := a.home(cmd)
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(home, server.EnvOverrides(a.io.getenv))
	if err != nil {
		return nil, err
	}
	if _, err := a.config(cmd); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// config reads the home's config.yaml as an in-process run would.
func (a *app) config(cmd *cli.Command) (config.Config, error) {
	home, err := a.home(cmd)
	if err != nil {
		return config.Config{}, err
	}
	return config.Load(filepath.Join(home, config.FileName), a.io.getenv)
}

// fallBack says whether a call the server answered with err runs again
// in this process: the server stopped answering mid-request (killed; a
// write may or may not have happened, and every write is idempotent under
// retry), or it reads the configuration otherwise than this process. The
// one policy of the commands (with) and of MCP (mcpOps).
func fallBack(err error) bool {
	var gone *client.UnreachableError
	return errors.As(err, &gone) || envDiffers(err)
}

// envDiffers reports the server's refusal of a client whose environment
// overrides the configuration differently.
func envDiffers(err error) bool {
	return fault.KindOf(err) == fault.Conflict && fault.FieldOf(err) == "env"
}
