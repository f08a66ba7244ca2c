package corecmd

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/eval"
)

// eval measures conversation retrieval on an eval set: a folder in the
// shared/bench layout (queries.jsonl and sessions/) or a LongMemEval JSON
// file, told apart by their shape.
func (a cmds) eval(ctx context.Context, cmd *cli.Command) error {
	path, err := cmdapp.OnePath(cmd)
	if err != nil {
		return cmdapp.Usagef("eval takes one DIR (with queries.jsonl and sessions/) or a LongMemEval FILE")
	}
	var ks []int
	for _, f := range strings.Split(cmd.String("k"), ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return cmdapp.Usagef("--k %q: want cut-offs such as 5,10,25,50", cmd.String("k"))
		}
		ks = append(ks, k)
	}
	layout, err := eval.Detect(path)
	if err != nil {
		return err
	}
	if layout == eval.LayoutLongMemEval {
		return a.evalLongMemEval(ctx, cmd, path)
	}
	for _, f := range []string{"sample", "seed", "types", "cache"} {
		if cmd.IsSet(f) {
			return cmdapp.Usagef("--%s is for a LongMemEval file; %s is a folder", f, path)
		}
	}
	return a.WithHost(ctx, cmd, func(h *host.Host) error {
		resp, err := eval.Run(ctx, h, eval.Request{Dir: path, K: ks, Mixed: cmd.Bool("mixed")})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			mode := resp.Mode
			if resp.Reason != "" {
				mode += " (" + resp.Reason + ")"
			}
			fmt.Fprintf(w, "%d questions, %d turns, %s search, model %s, %.1f s\n", resp.Queries, resp.Turns, mode, resp.Model, resp.DurationMs/1000)
			keys := make([]string, 0, len(ks))
			for _, k := range ks {
				keys = append(keys, strconv.Itoa(k))
			}
			if resp.KeywordOnly > 0 {
				fmt.Fprintf(w, "warning: %d questions were answered by keyword alone (the provider failed on the way): these are not hybrid figures\n", resp.KeywordOnly)
			}
			if resp.Mixed != nil {
				fmt.Fprintf(w, "mixed: each home also held the other conversations' turns as daily-log pages (%d pages, %d chunks over all homes)\n", resp.Mixed.DailyPages, resp.Mixed.DailyChunks)
			}
			fmt.Fprintf(w, "%-10s", "")
			head := func(prefix string) {
				for _, k := range keys {
					fmt.Fprintf(w, "  %-7s", prefix+"R@"+k)
				}
			}
			if resp.Mixed != nil {
				head("")
				fmt.Fprint(w, "  |")
				head("m")
			} else {
				head("")
			}
			fmt.Fprintln(w)
			cells := func(m map[string]float64) {
				for _, k := range keys {
					fmt.Fprintf(w, "  %5.1f  ", 100*m[k])
				}
			}
			clean := &eval.Figures{Recall: resp.Recall, ByCategory: resp.ByCategory, ByConversation: resp.ByConversation}
			row := func(name string, of func(*eval.Figures) map[string]float64) {
				fmt.Fprintf(w, "%-10s", name)
				cells(of(clean))
				if resp.Mixed != nil {
					fmt.Fprint(w, "  |")
					cells(of(resp.Mixed))
				}
				fmt.Fprintln(w)
			}
			row("all", func(f *eval.Figures) map[string]float64 { return f.Recall })
			for _, c := range slices.Sorted(maps.Keys(resp.ByCategory)) {
				row("cat "+c, func(f *eval.Figures) map[string]float64 { return f.ByCategory[c] })
			}
			for _, c := range slices.Sorted(maps.Keys(resp.ByConversation)) {
				row(c, func(f *eval.Figures) map[string]float64 { return f.ByConversation[c] })
			}
			printContext := func(name string, c eval.ContextFigures) {
				fmt.Fprintf(w, "%s: %.1f%% of the evidence turns in the memory context (budget %d, %d a tier), %.1f turns and %.0f tokens on average\n",
					name, 100*c.Recall, c.Budget, c.PerTier, c.Turns, c.Tokens)
			}
			printContext("context", resp.Context)
			if resp.Mixed != nil {
				printContext("mixed context", resp.Mixed.Context)
			}
		})
	})
}

// evalLongMemEval runs the eval on a LongMemEval file, a line of progress
// on stderr, and prints the measures by question type.
func (a cmds) evalLongMemEval(ctx context.Context, cmd *cli.Command, path string) error {
	if cmd.IsSet("k") || cmd.IsSet("mixed") {
		return cmdapp.Usagef("--k and --mixed are for an eval folder; a LongMemEval file is measured at k = 1, 3, 5, 10")
	}
	if cmd.Int("sample") < 0 {
		return cmdapp.Usagef("--sample %d: want a count of questions", cmd.Int("sample"))
	}
	req := eval.LongMemEvalRequest{Path: path, Sample: cmd.Int("sample"), Seed: uint64(cmd.Int("seed")), CacheDir: cmd.String("cache")}
	for _, t := range strings.Split(cmd.String("types"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			req.Types = append(req.Types, t)
		}
	}
	stderr := a.IO.Stderr
	req.Progress = func(p eval.Progress) {
		if p.Done == 0 {
			if p.Hybrid {
				fmt.Fprintf(stderr, "eval: %d questions; ~%d tokens of distinct sessions to embed (fewer with the cache)\n", p.Total, p.Tokens)
			}
			return
		}
		// A terminal rewrites one line; a log gets a line a tenth of
		// the way.
		if !a.IO.StdoutIsTTY && p.Done < p.Total && p.Done%max(1, p.Total/10) != 0 {
			return
		}
		left := "done"
		if p.Done < p.Total {
			left = "~" + p.Left.Round(time.Second).String() + " left"
		}
		end := "\r"
		if !a.IO.StdoutIsTTY || p.Done == p.Total {
			end = "\n"
		}
		fmt.Fprintf(stderr, "eval: %d/%d questions, %s elapsed, %s%s", p.Done, p.Total, p.Elapsed.Round(time.Second), left, end)
	}
	return a.WithHost(ctx, cmd, func(h *host.Host) error {
		resp, err := eval.RunLongMemEval(ctx, h, req)
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) { printLongMemEval(w, resp) })
	})
}

func printLongMemEval(w io.Writer, r eval.LongMemEvalResponse) {
	mode := r.Mode
	if r.Reason != "" {
		mode += " (" + r.Reason + ")"
	}
	fmt.Fprintf(w, "%d questions (%d abstention skipped), %d sessions, %d chunks, %s search, model %s, %.1f s\n",
		r.Questions, r.Abstention, r.Sessions, r.Turns, mode, r.Model, r.DurationMs/1000)
	if r.KeywordOnly > 0 {
		fmt.Fprintf(w, "warning: %d questions were answered by keyword alone (the provider failed on the way): these are not hybrid figures\n", r.KeywordOnly)
	}
	fmt.Fprintf(w, "search %.1f ms median, %.1f ms p95; %d questions named a time window; embedding cache %d hits, %d misses\n",
		r.SearchMs.Median, r.SearchMs.P95, r.Windows, r.CacheHits, r.CacheMisses)
	fmt.Fprintln(w, "session: any@k = an answer session among the first k sessions, all@k = every one, ndcg@k; turn: an evidence turn among the first k turns")
	fmt.Fprintf(w, "%-26s %4s", "", "n")
	for _, m := range []string{"any", "all", "ndcg", "turn"} {
		for _, k := range r.K {
			fmt.Fprintf(w, " %7s", m+"@"+strconv.Itoa(k))
		}
		fmt.Fprint(w, " |")
	}
	fmt.Fprintln(w)
	row := func(name string, f eval.LMEFigures) {
		fmt.Fprintf(w, "%-26s %4d", name, f.Questions)
		for _, m := range []map[string]float64{f.RecallAny, f.RecallAll, f.NDCG, f.TurnAny} {
			for _, k := range r.K {
				fmt.Fprintf(w, " %7.1f", 100*m[strconv.Itoa(k)])
			}
			fmt.Fprint(w, " |")
		}
		fmt.Fprintln(w)
	}
	for _, t := range slices.Sorted(maps.Keys(r.ByType)) {
		row(t, r.ByType[t])
	}
	row("all", r.Overall)
}
