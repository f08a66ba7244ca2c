package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/host"
)

// syncRemoteFlag is memhost sync's --remote.
var syncRemoteFlag = &cli.BoolFlag{Name: "remote", Usage: "fetch federation.remote, merge it, push, and re-index what the merge changed (needs memhost git init)"}

// federationCommands are git federation's commands (seed 003) and export
// and import (seed 002).
func federationCommands(a *app) []*cli.Command {
	return []*cli.Command{
		{
			Name:  "git",
			Usage: "share the home with other machines through git: init",
			Commands: []*cli.Command{
				{
					Name:  "init",
					Usage: "make the home a git repository memhost commits every change to (or adopt the one it is)",
					Description: "Writes memhost's block of .gitignore (the index, caches, models, config.yaml, locks, sockets,\n" +
						"tokens and temporary files are never committed), commits the notebook and sessions, and from\n" +
						"then on commits every change made through memhost or seen by memhost serve's watcher.\n" +
						"With --remote, the remote is written to config.yaml (federation.remote) and synced at once.\n\n" +
						"Examples:\n" +
						"  memhost git init\n" +
						"  memhost git init --remote git@github.com:me/memory.git",
					ArgsUsage: " ",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "remote", Usage: "repository URL or path to sync with (federation.remote)"},
						&cli.StringFlag{Name: "branch", Usage: "remote branch (default federation.branch, main)"},
					},
					Action: a.gitInit,
				},
			},
		},
	}
}

func (a *app) gitInit(ctx context.Context, cmd *cli.Command) error {
	if err := noArgs(cmd); err != nil {
		return err
	}
	return a.withHost(ctx, cmd, func(h *host.Host) error {
		resp, err := h.GitInit(ctx, host.GitInitRequest{Remote: cmd.String("remote"), Branch: cmd.String("branch")})
		if err != nil {
			return err
		}
		return a.out(cmd, resp, func(w io.Writer) {
			verb := "adopted the git repository of"
			if resp.Created {
				verb = "made a git repository of"
			}
			fmt.Fprintf(w, "%s %s (branch %s, commit %s)\n", verb, resp.Home, resp.Branch, short(resp.Commit))
			if len(resp.Untracked) > 0 {
				fmt.Fprintf(w, "no longer tracked (derived, kept on disk): %s\n", strings.Join(resp.Untracked, ", "))
			}
			if resp.Remote != "" {
				fmt.Fprintf(w, "remote: %s\n", resp.Remote)
			}
			if resp.Sync != nil && resp.SyncError == "" {
				printFedSync(w, *resp.Sync)
			}
			if resp.SyncError != "" {
				fmt.Fprintf(w, "warning: the first sync failed (memhost sync --remote retries): %s\n", resp.SyncError)
			}
		})
	})
}

// syncRemote is memhost sync --remote. It runs in this process even when
// a server runs: syncs of a home take turns (a lock in .git), and the
// server's watcher sees the files the merge changed.
func (a *app) syncRemote(ctx context.Context, cmd *cli.Command) error {
	return a.withHost(ctx, cmd, func(h *host.Host) error {
		resp, err := h.FedSync(ctx, host.FedSyncRequest{})
		if errors.Is(err, host.ErrNotFederated) {
			return fmt.Errorf("%v (memhost git init makes it one)", err)
		}
		if err != nil && resp.Remote == "" {
			return err
		}
		if oerr := a.out(cmd, resp, func(w io.Writer) { printFedSync(w, resp) }); oerr != nil {
			return oerr
		}
		return err
	})
}

func printFedSync(w io.Writer, r host.FedSyncResponse) {
	for _, rec := range r.Recovered {
		fmt.Fprintf(w, "recovered: %s\n", rec)
	}
	merged := "nothing new"
	switch r.Merged {
	case "fast-forward":
		merged = "fast-forwarded"
	case "merge":
		merged = "merged"
	}
	pushed := "pushed"
	if !r.Pushed {
		pushed = "not pushed"
	}
	fmt.Fprintf(w, "synced with %s (%s): %s, %s; %s changed, %s re-indexed in %.0f ms\n",
		r.Remote, r.Branch, merged, pushed, plural(len(r.Changed), "file"), plural(r.Indexed, "file"), r.DurationMs)
	for _, c := range r.Conflicts {
		fmt.Fprintf(w, "conflict: %s changed on both sides; theirs is kept in %s (compare, then remove it)\n", c.Path, c.Sibling)
	}
}

func printFederationStatus(w io.Writer, f *host.FederationStatus) {
	if f == nil {
		return
	}
	remote := f.Remote
	if remote == "" {
		remote = "none (changes are committed locally)"
	}
	fmt.Fprintf(w, "git:\tcommit %s, remote %s (%s)\n", f.Head, remote, f.Branch)
	if f.State.LastSync != "" {
		last := "last sync " + f.State.LastSync
		if f.State.LastError != "" {
			last += fmt.Sprintf(" failed (%d in a row; retried with backoff): %s", f.State.Failures, f.State.LastError)
		}
		fmt.Fprintf(w, "\t%s\n", last)
	}
	for _, c := range f.Conflicts {
		fmt.Fprintf(w, "\tconflict: %s (theirs in %s)\n", c.Path, c.Sibling)
	}
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
