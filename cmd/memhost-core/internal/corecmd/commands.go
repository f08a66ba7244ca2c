package corecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/cmd/memhost-core/internal/notecmd"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/episodes"
	"github.com/memhost/memhost/internal/clock"
	"github.com/memhost/memhost/modelstore"
	"github.com/memhost/memhost/server"
)

func (a cmds) init(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Init(ctx, mh.InitRequest{})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			fmt.Fprintf(w, "memhost home: %s\n", a.Tilde(resp.Home))
			fmt.Fprintf(w, "notebook:     %s (%s)\n", a.Tilde(resp.Notebook), cmdapp.Plural(resp.Pages, "page"))
			state := "kept as it was"
			if resp.ConfigCreated {
				state = "created with every default, commented"
			}
			fmt.Fprintf(w, "config:       %s (%s)\n", a.Tilde(resp.Config), state)
		})
	})
}

func (a cmds) remember(ctx context.Context, cmd *cli.Command) error {
	if cmd.Bool("auto") && (cmd.IsSet("category") || cmd.IsSet("file") || cmd.IsSet("section")) {
		return cmdapp.Usagef("remember --auto chooses the category, file and section itself: give none of them")
	}
	text, err := a.Text(cmd.Args().Slice())
	if err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Remember(ctx, mh.RememberRequest{
			Text: text, Category: cmd.String("category"), File: cmd.String("file"), Section: cmd.String("section"), Auto: cmd.Bool("auto"),
			RequestID: a.RequestID(cmd),
		})
		if err != nil {
			return err
		}
		a.Redacted(resp.Redacted)
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			if resp.Duplicate {
				fmt.Fprintf(w, "already remembered: %s; nothing written\n", resp.Where())
				return
			}
			fmt.Fprintf(w, "remembered in %s%s\n", resp.Where(), routedBy(resp))
		})
	})
}

func (a cmds) dailyLog(ctx context.Context, cmd *cli.Command) error {
	text, err := a.Text(cmd.Args().Slice())
	if err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.DailyLog(ctx, mh.DailyLogRequest{Text: text, RequestID: a.RequestID(cmd)})
		if err != nil {
			return err
		}
		a.Redacted(resp.Redacted)
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			fmt.Fprintf(w, "logged in %s, %s: %s\n", resp.Path, cmdapp.Lines(resp.Lines), resp.Heading)
		})
	})
}

func (a cmds) get(ctx context.Context, cmd *cli.Command) error {
	p, err := cmdapp.OnePath(cmd)
	if err != nil {
		return err
	}
	if cmd.Int("start-line") < 0 || cmd.Int("lines") < 0 {
		return cmdapp.Usagef("--start-line and --lines must be positive")
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Get(ctx, mh.GetRequest{Path: p, StartLine: cmd.Int("start-line"), Lines: cmd.Int("lines")})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) { io.WriteString(w, resp.Text) })
	})
}

func (a cmds) write(ctx context.Context, cmd *cli.Command) error {
	args := cmd.Args().Slice()
	if len(args) == 0 {
		return cmdapp.Usagef("missing PATH and TEXT")
	}
	text, err := a.Text(args[1:])
	if err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Write(ctx, mh.WriteRequest{Path: args[0], Text: text, Section: cmd.String("section"), Replace: cmd.Bool("replace"), RequestID: a.RequestID(cmd)})
		if err != nil {
			return err
		}
		a.Redacted(resp.Redacted)
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			verb := "wrote"
			if cmd.Bool("replace") {
				verb = "replaced"
			}
			where := resp.Path
			if resp.Section != "" {
				where += " (## " + resp.Section + ")"
			}
			fmt.Fprintf(w, "%s %s, %s\n", verb, where, cmdapp.Lines(resp.Lines))
		})
	})
}

func (a cmds) rm(ctx context.Context, cmd *cli.Command) error {
	p, err := cmdapp.OnePath(cmd)
	if err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Remove(ctx, mh.RemoveRequest{Path: p, RequestID: a.RequestID(cmd)})
		if err != nil {
			return err
		}
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) { fmt.Fprintf(w, "removed %s\n", resp.Path) })
	})
}

func (a cmds) recall(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() == 0 {
		return cmdapp.Usagef("missing QUERY")
	}
	req := mh.RecallRequest{Query: strings.Join(cmd.Args().Slice(), " "), MaxResults: cmd.Int("max-results")}
	if cmd.IsSet("max-results") && req.MaxResults < 1 {
		return cmdapp.Usagef("--max-results must be at least 1, got %d", req.MaxResults)
	}
	if cmd.IsSet("min-score") {
		m := cmd.Float("min-score")
		if m < 0 || m > 1 {
			return cmdapp.Usagef("--min-score must be between 0 and 1, got %g", m)
		}
		req.MinScore = &m
	}
	if s := cmd.String("sources"); s != "" {
		for _, src := range strings.Split(s, ",") {
			req.Sources = append(req.Sources, strings.TrimSpace(src))
		}
	}
	req.Tags, req.Path = cmd.StringSlice("tag"), cmd.String("path")
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Recall(ctx, req)
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			notecmd.PrintFactsGroup(w, resp.Results.Facts)
			groups := []struct {
				name    string
				results []mh.Result
			}{{"NOTEBOOK", resp.Results.Notebook}, {"DAILY", resp.Results.Daily}, {"SESSIONS", resp.Results.Sessions}}
			for _, g := range groups {
				if len(req.Sources) > 0 && !slices.Contains(req.Sources, strings.ToLower(g.name)) || len(req.Sources) == 0 && g.name == "SESSIONS" {
					continue
				}
				fmt.Fprintf(w, "%s (%d)\n", g.name, len(g.results))
				for _, r := range g.results {
					loc := fmt.Sprintf("%s:%d", r.Path, r.Lines.Start)
					if r.Lines.End != r.Lines.Start {
						loc += fmt.Sprintf("-%d", r.Lines.End)
					}
					head := ""
					if r.Heading != "" {
						head = "  " + r.Heading
					}
					fmt.Fprintf(w, "  %s%s  %.2f\n%s      %s\n", loc, head, r.Score, cmdapp.Quoted(r.Context), r.Snippet)
				}
			}
			why := ""
			if resp.Reason != "" {
				why = ": " + resp.Reason
			}
			fmt.Fprintf(w, "(%s search%s; %.0f ms)\n", resp.Mode, why, resp.Timing.TotalMs)
		})
	})
}

func (a cmds) context(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	req := mh.ContextRequest{Query: cmd.String("query"), Session: cmd.String("session"), Budget: cmd.Int("budget"), PerTier: cmd.Int("per-tier"),
		HalfLife: cmd.String("half-life"), Channel: cmd.String("channel"), SourceID: cmd.String("source"), Entity: cmd.String("entity")}
	if cmd.IsSet("budget") && req.Budget < 1 {
		return cmdapp.Usagef("--budget must be at least 1, got %d", req.Budget)
	}
	if cmd.IsSet("per-tier") && req.PerTier < 1 {
		return cmdapp.Usagef("--per-tier must be at least 1, got %d", req.PerTier)
	}
	if cmd.IsSet("min-score") {
		m := cmd.Float("min-score")
		req.MinScore = &m
	}
	if s := cmd.String("tiers"); s != "" {
		for _, t := range strings.Split(s, ",") {
			req.Tiers = append(req.Tiers, strings.TrimSpace(t))
		}
	}
	if req.Query == "" && req.Session == "" && req.Memory() {
		return cmdapp.Usagef("the memory context's settings need --query or --session")
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Context(ctx, req)
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			io.WriteString(w, resp.Text)
			if req.Query != "" && req.Session == "" && len(resp.Items) == 0 {
				if resp.Left > 0 {
					fmt.Fprintf(w, "(%d memories match; none fits in a budget of %d tokens)\n", resp.Left, resp.Budget)
				} else {
					io.WriteString(w, "(no memory matches)\n")
				}
			}
		})
	})
}

func (a cmds) status(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Status(ctx, mh.StatusRequest{})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			last := resp.LastSync
			if last == "" {
				last = "never"
			} else if t, err := time.Parse(time.RFC3339, last); err == nil {
				last = fmt.Sprintf("%s (%s ago)", last, clock.Now().Sub(t).Round(time.Second))
			}
			fmt.Fprintf(tw, "home:\t%s\n", a.Tilde(resp.Home))
			fmt.Fprintf(tw, "notebook:\t%s\n", a.Tilde(resp.Notebook))
			files := fmt.Sprintf("%d indexed, %d stale", resp.Files, resp.Stale)
			if resp.Unindexable > 0 {
				files += fmt.Sprintf(", %d not indexable (too large, unreadable or linked outside: see memhost files)", resp.Unindexable)
			}
			fmt.Fprintf(tw, "files:\t%s\n", files)
			fmt.Fprintf(tw, "chunks:\t%d\n", resp.Chunks)
			if resp.UnresolvedLinks > 0 {
				fmt.Fprintf(tw, "links:\t%d unresolved (see memhost links --unresolved)\n", resp.UnresolvedLinks)
			}
			fmt.Fprintf(tw, "last sync:\t%s\n", last)
			fmt.Fprintf(tw, "database:\t%s\n", modelstore.HumanSize(resp.DBSizeBytes))
			if resp.Provider != "" {
				fmt.Fprintf(tw, "embeddings:\t%s (%s, %d dimensions)\n", resp.Provider, resp.Model, resp.Dimensions)
			}
			dead := ""
			if resp.Dead > 0 {
				dead = fmt.Sprintf(", %d dead (failed too often; memhost health --repair retries them)", resp.Dead)
			}
			fmt.Fprintf(tw, "vectors:\t%d embedded, %d pending%s\n", resp.Embedded, resp.Pending, dead)
			search := resp.Mode
			if resp.Reason != "" {
				search += " (" + resp.Reason + ")"
			}
			fmt.Fprintf(tw, "search:\t%s\n", search)
			printFailedDownloads(tw, resp.FailedDownloads)
			if resp.LastFlush != nil {
				fmt.Fprintf(tw, "flushes:\t%d (last: session %s at %s, %d tokens)\n", resp.Flushes, resp.LastFlush.Session, resp.LastFlush.Time, resp.LastFlush.Tokens)
			}
			notecmd.PrintFederationStatus(tw, resp.Federation)
			notecmd.PrintConsolidation(tw, resp.Generator)
			tw.Flush()
		})
	})
}

func (a cmds) files(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Files(ctx, mh.FilesRequest{})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "PATH\tCHUNKS\tSTATE\tHASH")
			for _, f := range resp.Files {
				hash := f.Hash
				if len(hash) > 12 {
					hash = hash[:12]
				}
				state := strings.ReplaceAll(f.State, "-", " ") // "too large"
				if f.Stale {
					state += " (stale)"
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", f.Path, f.Chunks, state, hash)
			}
			tw.Flush()
		})
	})
}

func (a cmds) sync(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	if cmd.Bool("remote") {
		return notecmd.SyncRemote(a.App, ctx, cmd)
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		res, err := h.Sync(ctx, mh.SyncRequest{})
		if err != nil {
			return err
		}
		return a.Out(cmd, res, func(w io.Writer) { printSync(w, "synced", res) })
	})
}

func (a cmds) rebuild(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		res, err := h.Rebuild(ctx, mh.RebuildRequest{})
		if err != nil {
			return err
		}
		return a.Out(cmd, res, func(w io.Writer) { printSync(w, "rebuilt", res) })
	})
}

func printSync(w io.Writer, verb string, res mh.SyncResult) {
	fmt.Fprintf(w, "%s: %s scanned, %d indexed (%s), %d unchanged, %d removed in %.0f ms\n",
		verb, cmdapp.Plural(res.Scanned, "page"), res.Indexed, cmdapp.Plural(res.Chunks, "chunk"), res.Unchanged, res.Removed, res.DurationMs)
	for _, p := range res.Problems {
		fmt.Fprintf(w, "  warning: %s: %s\n", p.Path, p.Problem)
	}
}

func (a cmds) watch(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	var mu sync.Mutex // the callbacks run on different goroutines
	onSync := func(res mh.SyncResult) {
		mu.Lock()
		defer mu.Unlock()
		if cmd.Bool("json") {
			a.Out(cmd, res, nil)
			return
		}
		stamp := clock.Now().Format("15:04:05")
		printSync(a.IO.Stdout, stamp+" synced", res)
		for _, p := range res.Paths {
			fmt.Fprintf(a.IO.Stdout, "  indexed %s\n", p)
		}
		for _, p := range res.RemovedPaths {
			fmt.Fprintf(a.IO.Stdout, "  removed %s\n", p)
		}
	}
	onEmbed := func(res mh.EmbedResult) {
		mu.Lock()
		defer mu.Unlock()
		if cmd.Bool("json") {
			a.Out(cmd, res, nil)
			return
		}
		fmt.Fprintf(a.IO.Stdout, "%s embedded %d chunks with %s (%d from the cache); %d pending\n",
			clock.Now().Format("15:04:05"), res.Embedded, res.Provider, res.FromCache, res.Pending)
	}
	if h := a.IO.Shared; h != nil { // relayed into the server
		return a.followServer(ctx, cmd, h.NotebookDir(), func() (mh.SyncResult, error) { return h.Sync(ctx, mh.SyncRequest{}) },
			a.IO.Follow, onSync, onEmbed)
	}
	if c, err := a.Dial(cmd); err == nil {
		info, err := c.Info(ctx)
		if err == nil {
			err = a.followServer(ctx, cmd, info.Notebook, func() (mh.SyncResult, error) { return c.Sync(ctx, mh.SyncRequest{}) },
				c.Events, onSync, onEmbed)
		}
		c.Close()
		if !cmdapp.EnvDiffers(err) {
			return err
		}
	}
	return a.WithHost(ctx, cmd, func(h *host.Host) error {
		if !cmd.Bool("json") {
			fmt.Fprintf(a.IO.Stdout, "watching %s (Ctrl-C to stop)\n", h.NotebookDir())
		}
		return h.Watch(ctx, host.WatchRequest{OnSync: onSync, OnGitSync: onSync, OnEmbed: onEmbed})
	})
}

// followServer follows a running server, which watches the notebook
// itself: one sync now, then the server's sync (the watcher's and git's)
// and embed events.
func (a cmds) followServer(ctx context.Context, cmd *cli.Command, notebook string, sync func() (mh.SyncResult, error),
	events func(context.Context, func(server.Event)) error, onSync func(mh.SyncResult), onEmbed func(mh.EmbedResult)) error {
	res, err := sync()
	if err != nil {
		return err
	}
	if !cmd.Bool("json") {
		fmt.Fprintf(a.IO.Stdout, "watching %s (Ctrl-C to stop)\n", notebook)
	}
	onSync(res)
	err = events(ctx, func(ev server.Event) {
		switch ev.Type {
		case "sync", "git-sync":
			var r mh.SyncResult
			if json.Unmarshal(ev.Data, &r) == nil {
				onSync(r)
			}
		case "embed":
			var r mh.EmbedResult
			if json.Unmarshal(ev.Data, &r) == nil {
				onEmbed(r)
			}
		}
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (a cmds) embed(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		res, err := h.Embed(ctx, mh.EmbedRequest{Sync: true, Wait: true})
		if err != nil {
			return err
		}
		return a.Out(cmd, res, func(w io.Writer) {
			fmt.Fprintf(w, "embedded %d chunks with %s (%s; %d from the cache) in %.0f ms; %d pending\n",
				res.Embedded, res.Provider, res.Model, res.FromCache, res.DurationMs, res.Pending)
		})
	})
}

func (a cmds) pluginsList(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Plugins(ctx, mh.PluginsRequest{})
		if err != nil {
			return err
		}
		a.Warn(resp.Warnings...)
		if cmd.Bool("json") {
			return a.Out(cmd, append(resp.Plugins, resp.Generators...), nil)
		}
		tw := tabwriter.NewWriter(a.IO.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tVERSION\tMODEL\tDIMS\tSTATUS\tSHA256\tPATH")
		for _, p := range resp.Plugins {
			name := p.Name
			if p.Active {
				name += " *"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", name, p.Version, p.Model, p.Dimensions, p.Status, p.SHA256[:12], a.Tilde(p.Path))
		}
		tw.Flush()
		if len(resp.Plugins) == 0 {
			fmt.Fprintln(a.IO.Stdout, "(no plugins installed: put memhost-embeddings-<name> binaries next to memhost or in the home's plugins/ folder)")
		}
		printGenerators(a.IO.Stdout, resp.Generators)
		return nil
	})
}

func (a cmds) pluginsUse(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() != 1 {
		return cmdapp.Usagef("plugins use takes one plugin NAME (see memhost plugins list)")
	}
	set := map[string]string{}
	for _, kv := range cmd.StringSlice("set") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return cmdapp.Usagef("--set %q: want key=value", kv)
		}
		set[strings.TrimSpace(k)] = v
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.UsePlugin(ctx, mh.UsePluginRequest{Name: cmd.Args().First(), Set: set})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			fmt.Fprintln(w, providerLine(resp))
			if resp.Pending > 0 {
				fmt.Fprintf(w, "embedding %d chunks in the background; keyword search answers until they are done\n", resp.Pending)
			}
		})
	})
}

// providerLine says which provider plugins use made active. Dimensions
// not known yet (a model still downloading) are left out, not shown as 0.
func providerLine(resp mh.UseResponse) string {
	return fmt.Sprintf("embeddings provider: %s (model %s%s, %s)", resp.Plugin, resp.Model, dimensions(", ", resp.Dimensions), resp.Status)
}

// dimensions is ", 384 dimensions" (after sep), or "" while they are not
// known.
func dimensions(sep string, n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("%s%d dimensions", sep, n)
}

func (a cmds) pluginsStatus(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.PluginStatus(ctx, mh.PluginStatusRequest{})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			plugin := resp.Plugin
			if plugin == "" {
				plugin = "(none)"
			}
			fmt.Fprintf(tw, "plugin:\t%s\n", plugin)
			if resp.Path != "" {
				fmt.Fprintf(tw, "binary:\t%s (sha256 %s)\n", a.Tilde(resp.Path), resp.SHA256[:12])
				model := resp.Model
				if d := dimensions("", resp.Dimensions); d != "" {
					model += " (" + d + ")"
				}
				fmt.Fprintf(tw, "model:\t%s\n", model)
			}
			state := resp.State
			if resp.Message != "" {
				state += ": " + resp.Message
			}
			fmt.Fprintf(tw, "state:\t%s\n", state)
			switch {
			case resp.PingError != "":
				fmt.Fprintf(tw, "health:\tping failed: %s\n", resp.PingError)
			case resp.Plugin != "" && resp.Path != "":
				fmt.Fprintf(tw, "health:\tping ok (%.1f ms)\n", resp.PingMs)
			}
			fmt.Fprintf(tw, "vectors:\t%d embedded, %d pending\n", resp.Embedded, resp.Pending)
			search := resp.Mode
			if resp.Reason != "" {
				search += " (" + resp.Reason + ")"
			}
			fmt.Fprintf(tw, "search:\t%s\n", search)
			printFailedDownloads(tw, resp.FailedDownloads)
			tw.Flush()
			fmt.Fprintf(w, "generator: %s\n", generatorLine(resp.Generator))
		})
	})
}

// printFailedDownloads gives the detail a search's reason leaves out: what
// the last download of a model failed with, and when it is tried next.
func printFailedDownloads(w io.Writer, fs []mh.FailedDownload) {
	for _, f := range fs {
		next := f.NextTry
		if t, err := time.Parse(time.RFC3339, f.NextTry); err == nil {
			next = t.Local().Format(time.TimeOnly)
		}
		fmt.Fprintf(w, "download:\t%s: %s failed, the last at %s: %s; next try after %s (or memhost models pull FILE|URL)\n",
			f.Name, cmdapp.Plural(f.Count, "attempt"), f.At.Local().Format(time.TimeOnly), f.Err, next)
	}
}

func (a cmds) modelsList(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Models(ctx, mh.ModelsRequest{})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			if len(resp.Models) == 0 {
				fmt.Fprintf(w, "no models in %s (memhost models pull %s)\n", resp.Dir, modelstore.DefaultName)
				return
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSIZE\tSTATE\tMODIFIED")
			for _, m := range resp.Models {
				state := "ready"
				if m.Partial {
					state = "partial download (memhost models pull resumes it)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, modelstore.HumanSize(m.Size), state, m.Modified)
			}
			tw.Flush()
			fmt.Fprintf(w, "(in %s)\n", resp.Dir)
		})
	})
}

func (a cmds) modelsPull(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() != 1 {
		return cmdapp.Usagef("models pull takes one NAME or URL (e.g. %s)", modelstore.DefaultName)
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		bar := cmdapp.NewProgress(a.IO.Stdout, a.IO.StdoutIsTTY && !cmd.Bool("json"), cmd.Bool("json"))
		model := cmd.Args().First()
		_, local := modelstore.LocalSource(model)
		if local && !strings.HasPrefix(model, "file://") {
			model = a.Abs(model) // the caller's folder, not a server's
		}
		if local {
			bar.Verb = "copying"
		}
		resp, err := h.PullModel(ctx, mh.PullModelRequest{Model: model, SHA256: cmd.String("sha256"), Progress: bar.Update})
		bar.Done()
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			verb := "downloaded"
			switch {
			case resp.Already:
				verb = "already present:"
			case resp.From != "":
				verb = "installed"
			}
			fmt.Fprintf(w, "%s %s (%s, sha256 %s)\n", verb, resp.Path, modelstore.HumanSize(resp.Size), resp.SHA256)
		})
	})
}

func (a cmds) modelsRm(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() != 1 {
		return cmdapp.Usagef("models rm takes one model NAME (see memhost models list)")
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.RemoveModel(ctx, mh.RemoveModelRequest{Name: cmd.Args().First(), RequestID: a.RequestID(cmd)})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) { fmt.Fprintf(w, "removed %s\n", resp.Removed) })
	})
}

func (a cmds) sessionList(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Sessions(ctx, mh.SessionsRequest{})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			if len(resp.Sessions) == 0 {
				fmt.Fprintln(w, "no sessions (memhost session append or session ingest adds them)")
				return
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tTURNS\tCOMPACTIONS\tFIRST\tLAST\tSIZE")
			for _, s := range resp.Sessions {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", s.Session, s.Turns, s.Compactions, s.First, s.Last, modelstore.HumanSize(s.SizeBytes))
			}
			tw.Flush()
		})
	})
}

func (a cmds) sessionAppend(ctx context.Context, cmd *cli.Command) error {
	text, err := a.Text(cmd.Args().Slice())
	if err != nil {
		return err
	}
	// The turn's id is the request's, so that if the server dies after the
	// append but before its answer, the append run again in this process
	// (by with, or by the launcher: --request-id) finds it and adds nothing.
	id := a.RequestID(cmd)
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.SessionAppend(ctx, mh.SessionAppendRequest{ID: id, Session: cmd.String("session"), Role: cmd.String("role"), Text: text, Meta: []byte(cmd.String("meta")), Private: cmd.Bool("private"),
			Channel: cmd.String("channel"), SourceID: cmd.String("source"), End: cmd.Bool("end")})
		if err != nil {
			return err
		}
		a.Redacted(resp.Redacted)
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			fmt.Fprintf(w, "appended turn %s (%s) to %s\n", resp.Turn.ID, resp.Turn.Role, resp.Path)
		})
	})
}

func (a cmds) episodes(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Episodes(ctx, mh.EpisodesRequest{Date: cmd.String("date"), Since: cmd.String("since"), Until: cmd.String("until")})
		if err != nil {
			return err
		}
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			for _, d := range resp.Days {
				switch d.State {
				case episodes.Empty:
					fmt.Fprintf(w, "%s: no conversations\n", d.Date)
				case episodes.Kept:
					fmt.Fprintf(w, "%s: kept %s: edited by hand since memhost wrote it (%s)\n", d.Date, d.Path, episodeCounts(d))
				default:
					fmt.Fprintf(w, "%s: %s %s (%s)\n", d.Date, d.State, d.Path, episodeCounts(d))
				}
			}
		})
	})
}

func episodeCounts(d mh.EpisodeDay) string {
	return cmdapp.Plural(d.Sessions, "session") + ", " + cmdapp.Plural(d.Messages, "message")
}

func (a cmds) conversationSearch(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() == 0 {
		return cmdapp.Usagef("missing QUERY")
	}
	if cmd.IsSet("max-results") && cmd.Int("max-results") < 1 {
		return cmdapp.Usagef("--max-results must be at least 1, got %d", cmd.Int("max-results"))
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.ConversationSearch(ctx, mh.ConversationSearchRequest{
			Query: strings.Join(cmd.Args().Slice(), " "), Session: cmd.String("session"),
			Since: cmd.String("since"), Until: cmd.String("until"), MaxResults: cmd.Int("max-results"),
			Channel: cmd.String("channel"), SourceID: cmd.String("source"), AsOf: cmd.String("as-of"),
		})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			if resp.Window != nil {
				fmt.Fprintf(w, "window: %q, %s to %s (turns then are favoured)\n", resp.Window.Phrase, resp.Window.Since[:10], resp.Window.Until[:10])
			}
			fmt.Fprintf(w, "SESSIONS (%d)\n", len(resp.Results))
			for _, r := range resp.Results {
				who := r.Speaker
				if who == "" {
					who = r.Role
				}
				if r.Channel != "" {
					who = strings.TrimSuffix(r.Channel+"/"+r.SourceID, "/") + " " + who
				}
				fmt.Fprintf(w, "  %s turn %s  %s  %s  %.2f\n%s      %s\n", r.Session, strings.Join(r.Turns, ","), who, r.Timestamp, r.Score, cmdapp.Quoted(r.Context), r.Snippet)
			}
			why := ""
			if resp.Reason != "" {
				why = ": " + resp.Reason
			}
			fmt.Fprintf(w, "(%s search%s; %.0f ms)\n", resp.Mode, why, resp.Timing.TotalMs)
		})
	})
}

func (a cmds) sessionTokens(ctx context.Context, cmd *cli.Command) error {
	id, err := cmdapp.OnePath(cmd)
	if err != nil {
		return cmdapp.Usagef("session tokens takes one session ID")
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.SessionTokens(ctx, mh.SessionTokensRequest{Session: id})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			fmt.Fprintf(w, "%s: ~%d tokens in %d turns since the last of %d compactions\n", resp.Session, resp.Tokens, resp.Turns, resp.Compactions)
		})
	})
}

func (a cmds) sessionCheck(ctx context.Context, cmd *cli.Command) error {
	id, err := cmdapp.OnePath(cmd)
	if err != nil {
		return cmdapp.Usagef("session check takes one session ID")
	}
	if n := cmd.Int("incoming-tokens"); n < 0 {
		return cmdapp.Usagef("--incoming-tokens must not be negative, got %d", n)
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.SessionCheck(ctx, mh.SessionCheckRequest{Session: id, Incoming: cmd.Int("incoming-tokens")})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			fmt.Fprintf(w, "%s: %d + %d incoming = %d tokens (flush at %d, compact at %d)\n", resp.Session, resp.Tokens, resp.Incoming, resp.Total, resp.FlushAt, resp.CompactAt)
			if resp.FlushEvery > 0 {
				noun := "messages"
				if resp.Messages == 1 {
					noun = "message"
				}
				fmt.Fprintf(w, "%d %s since the last flush (flush every %d)\n", resp.Messages, noun, resp.FlushEvery)
			}
			switch {
			case resp.FlushDue:
				fmt.Fprintf(w, "flush due: %s\n", resp.Prompt)
			case resp.AlreadyFlushed && resp.Total >= resp.FlushAt:
				fmt.Fprintln(w, "flushed already in this compaction cycle")
			}
			if resp.CompactionDue {
				fmt.Fprintln(w, "compaction due: memhost session compact "+resp.Session+" --summary -")
			}
		})
	})
}

func (a cmds) sessionCompact(ctx context.Context, cmd *cli.Command) error {
	id, err := cmdapp.OnePath(cmd)
	if err != nil {
		return cmdapp.Usagef("session compact takes one session ID")
	}
	summary := cmd.String("summary")
	switch {
	case !cmd.IsSet("summary") && !cmd.Bool("summarize"):
		return cmdapp.Usagef("session compact needs --summary TEXT (or - for stdin), or --summarize to have the generator write it")
	case cmd.IsSet("summary") && cmd.Bool("summarize"):
		return cmdapp.Usagef("session compact takes --summary or --summarize, not both")
	}
	if summary == "-" {
		if summary, err = a.Text([]string{"-"}); err != nil {
			return err
		}
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.SessionCompact(ctx, mh.SessionCompactRequest{Session: id, Summary: summary, Summarize: cmd.Bool("summarize"), Facts: cmd.Bool("facts"), RequestID: a.RequestID(cmd)})
		if err != nil {
			return err
		}
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			fmt.Fprintf(w, "compacted %s: the summary replaces %s (%s to %s); %d recent tokens kept; the turns stay searchable\n",
				resp.Session, cmdapp.Plural(resp.RemovedCount, "turn"), resp.FirstTurn, resp.LastTurn, resp.KeptTokens)
			if resp.Model != "" {
				fmt.Fprintf(w, "summary written by %s:\n%s\n", resp.Model, resp.Turn.Content)
			}
			if c := resp.Consolidated; c != nil {
				fmt.Fprintf(w, "facts: %d episodes consolidated, %d facts applied\n", c.Episodes, len(c.Applied))
			}
		})
	})
}

func (a cmds) sessionIngest(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() == 0 {
		return cmdapp.Usagef("session ingest takes transcript files (e.g. ~/.claude/projects/PROJECT/ID.jsonl)")
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Ingest(ctx, mh.IngestRequest{Paths: cmd.Args().Slice(), Dir: a.WorkDir(), Format: cmd.String("format")})
		if err != nil {
			return err
		}
		for _, f := range resp.Files {
			a.Redacted(f.Redacted)
		}
		for _, f := range resp.Files {
			a.Warn(f.Repaired...)
			a.Warn(f.Problems...)
			a.Warn(f.Warnings...)
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			for _, f := range resp.Files {
				fmt.Fprintf(w, "%s (%s) -> session %s: %s added, %d already there, %s left out\n", f.Path, f.Format, f.Session, cmdapp.Plural(f.Added, "turn"), f.Known, cmdapp.Plural(f.Skipped, "line"))
			}
		})
	})
}

// hook answers a Claude Code hook. Its errors exit 1, which Claude Code
// treats as non-blocking: 2 would block the agent (a Stop hook exiting 2
// keeps it from stopping). So a hook configured wrongly (no event, or an
// unknown one) is refused with exit 1 too, before stdin is read.
func (a cmds) hook(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() != 1 {
		return fault.BadInputf("event", "hook takes one event: %s", strings.Join(mh.HookEvents, ", "))
	}
	event := cmd.Args().First()
	if err := mh.CheckHookEvent(event); err != nil {
		return err
	}
	payload, err := io.ReadAll(io.LimitReader(a.IO.Stdin, 16<<20))
	if err != nil {
		return err
	}
	return a.With(ctx, cmd, func(h cmdapp.Ops) error {
		resp, err := h.Hook(ctx, mh.HookRequest{Event: event, Payload: payload})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(a.IO.Stdout, string(resp.Output))
		return err
	})
}
