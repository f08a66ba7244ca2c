package notecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/federated"
	"github.com/memhost/memhost/modelstore"
)

// SyncRemoteFlag is memhost sync's --remote.
var SyncRemoteFlag = &cli.BoolFlag{Name: "remote", Usage: "fetch federation.remote, merge it, push, and re-index what the merge changed (needs memhost git init)"}

// federationCommands are git federation's commands and export and
// import.
func federationCommands(a cmds) []*cli.Command {
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
						&cli.StringFlag{Name: "remote", Usage: "repository URL or path to sync with (federation.remote; a relative path is taken from this folder)"},
						&cli.StringFlag{Name: "branch", Usage: "remote branch (default federation.branch, main)"},
					},
					Action: a.gitInit,
				},
			},
		},
		{
			Name:  "export",
			Usage: "write the notebook, sessions and config.yaml to a .tar.gz with a manifest of SHA-256 checksums",
			Description: "The index is not in it: import rebuilds it. The file must not exist yet.\n\n" +
				"Examples:\n" +
				"  memhost export ~/backups/memhost-2026-01-30.tar.gz",
			ArgsUsage: "FILE.tar.gz",
			Flags:     []cli.Flag{&cli.BoolFlag{Name: "include-secrets", Usage: "export the files that hold a secret too (by default they are left out and named)"}},
			Action:    a.export,
		},
		{
			Name:  "import",
			Usage: "bring an export into this home: checked whole first, then new files added and changed ones merged",
			Description: "Every checksum is checked against the archive's manifest before the home is touched. Files the\n" +
				"home lacks are added; files both have are merged as git federation merges them (transcripts by\n" +
				"union of turns, pages line by line keeping the lines of both). The archive's config.yaml is\n" +
				"left out unless --with-config is given (a config runs alert commands and names the URLs\n" +
				"providers contact), and even then taken only when the home has none. What changed is indexed.\n\n" +
				"Examples:\n" +
				"  memhost import ~/backups/memhost-2026-01-30.tar.gz --home ~/.memhost-restored --with-config",
			ArgsUsage: "FILE.tar.gz",
			Flags:     []cli.Flag{&cli.BoolFlag{Name: "with-config", Usage: "take the archive's config.yaml when the home has none (it can run commands: only for your own archives)"}},
			Action:    a.importArchive,
		},
	}
}

func (a cmds) export(ctx context.Context, cmd *cli.Command) error {
	file, err := oneFile(cmd)
	if err != nil {
		return err
	}
	// The path is made absolute here: a server's working folder is not ours.
	return a.With(ctx, cmd, func(o cmdapp.Ops) error {
		resp, err := o.Export(ctx, mh.ExportRequest{Path: a.Abs(file), IncludeSecrets: cmd.Bool("include-secrets")})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			fmt.Fprintf(w, "exported %s to %s (%s, sha256 %s)\n", cmdapp.Plural(resp.Files, "file"), resp.Path, modelstore.HumanSize(resp.Bytes), resp.SHA256)
			for _, l := range resp.LeftOut {
				fmt.Fprintf(w, "left out %s: it holds a secret (%s …%s, line %d); --include-secrets exports it\n", l.Path, l.Rule, l.Fingerprint, l.Line)
			}
		})
	})
}

func (a cmds) importArchive(ctx context.Context, cmd *cli.Command) error {
	file, err := oneFile(cmd)
	if err != nil {
		return err
	}
	return a.With(ctx, cmd, func(o cmdapp.Ops) error {
		resp, err := o.Import(ctx, mh.ImportRequest{Path: a.Abs(file), WithConfig: cmd.Bool("with-config")})
		if err != nil {
			return err
		}
		a.Redacted(resp.Redacted)
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			fmt.Fprintf(w, "imported %s from %s: %d added, %d merged, %d unchanged; %s re-indexed\n",
				cmdapp.Plural(resp.Files, "file"), resp.Path, len(resp.Added), len(resp.Merged), resp.Unchanged, cmdapp.Plural(resp.Indexed, "file"))
			for _, c := range resp.Conflicts {
				fmt.Fprintf(w, "conflict: %s differs on the same lines; the archive's version is kept in %s\n", c.Path, c.Sibling)
			}
			switch resp.Config {
			case "imported":
				fmt.Fprintln(w, "config.yaml: imported (the home had none)")
			case "kept":
				fmt.Fprintln(w, "config.yaml: the home's own kept")
			case "left out":
				fmt.Fprintln(w, "config.yaml: the archive's left out (it can run commands; --with-config takes it)")
			}
		})
	})
}

// oneFile is the single FILE argument of export and import.
func oneFile(cmd *cli.Command) (string, error) {
	if cmd.Args().Len() != 1 || strings.TrimSpace(cmd.Args().First()) == "" {
		return "", cmdapp.Usagef("%s takes one archive file, e.g. memhost %s memhost.tar.gz", cmd.Name, cmd.Name)
	}
	return cmd.Args().First(), nil
}

func (a cmds) gitInit(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(o cmdapp.Ops) error {
		resp, err := o.GitInit(ctx, mh.GitInitRequest{Remote: a.localRemote(cmd.String("remote")), Branch: cmd.String("branch")})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			verb := "adopted the git repository of"
			if resp.Created {
				verb = "made a git repository of"
			}
			fmt.Fprintf(w, "%s %s (branch %s, commit %s)\n", verb, resp.Home, resp.Branch, cmdapp.Short(resp.Commit))
			if len(resp.Untracked) > 0 {
				fmt.Fprintf(w, "no longer tracked (not shared, kept on disk): %s\n", strings.Join(resp.Untracked, ", "))
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

// syncRemote is memhost sync --remote, run by the home's server when one
// runs (syncs of a home take turns either way: a lock in .git).
func (a cmds) syncRemote(ctx context.Context, cmd *cli.Command) error {
	return a.With(ctx, cmd, func(o cmdapp.Ops) error {
		resp, err := o.FedSync(ctx, mh.FedSyncRequest{})
		if errors.Is(err, federated.ErrNotFederated) || fault.FieldOf(err) == "federation" {
			return fmt.Errorf("%v (memhost git init makes it one)", err)
		}
		// A sync that failed before merging anything has only its error
		// to say; one that merged and then could not push says both.
		if err != nil && resp.Merged == "" && len(resp.Recovered) == 0 {
			return err
		}
		if oerr := a.Out(cmd, resp, func(w io.Writer) { printFedSync(w, resp) }); oerr != nil {
			return oerr
		}
		return err
	})
}

func printFedSync(w io.Writer, r mh.FedSyncResponse) {
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
		r.Remote, r.Branch, merged, pushed, cmdapp.Plural(len(r.Changed), "file"), cmdapp.Plural(r.Indexed, "file"), r.DurationMs)
	for _, c := range r.Conflicts {
		if c.Sibling == "" { // kept over a deletion
			fmt.Fprintf(w, "conflict: %s was %s\n", c.Path, c.Reason)
			continue
		}
		fmt.Fprintf(w, "conflict: %s changed on both sides; theirs is kept in %s (compare, then remove it)\n", c.Path, c.Sibling)
	}
}

func PrintFederationStatus(w io.Writer, f *mh.FederationStatus) {
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
		if c.Sibling == "" { // kept over a deletion
			fmt.Fprintf(w, "\tconflict: %s (%s)\n", c.Path, c.Reason)
			continue
		}
		fmt.Fprintf(w, "\tconflict: %s (theirs in %s)\n", c.Path, c.Sibling)
	}
}

// localRemote makes a remote that is a relative local path absolute,
// from the caller's working folder: git would take it from the home (and
// a server's from its own). URLs (scheme://…) and scp-like addresses
// (host:path, a ':' before any '/') are left as they are.
func (a cmds) localRemote(remote string) string {
	if remote == "" || strings.Contains(remote, "://") || filepath.IsAbs(remote) {
		return remote
	}
	if colon := strings.IndexByte(remote, ':'); colon >= 0 {
		if slash := strings.IndexByte(remote, '/'); slash < 0 || colon < slash {
			return remote
		}
	}
	return a.Abs(remote)
}
