// Command memhost-sim lives a stretch of an agent's life in memhost, fast,
// and audits what is left: the way FoundationDB runs whole clusters in
// simulation, scaled to a 2-core machine.
//
// Day by day on memhost's calendar clock (MEMHOST_CLOCK_OFFSET), with the
// real binaries in -bin, two homes sharing a bare git repository:
//
//   - an agent on the first runs 1–5 sessions a day through the Claude
//     Code hooks exactly as the runtime calls them (session-start, a prompt
//     hook before each user turn, the transcript appended, a stop hook
//     after each answer, pre-compact past the threshold, session-end),
//     replaying the LoCoMo and LongMemEval dev conversations in
//     shared/bench; some sessions open with a coding task whose tool calls
//     teach a skill;
//   - daily-log entries and remembered items between sessions, facts
//     about people that change (a new employer, city or phone number);
//   - a person edits, adds and renames pages in the notebook between
//     sessions, as an editor does;
//   - a second machine writes every third day; both sync with the remote;
//   - memhost serve is killed with SIGKILL now and then in the middle of
//     a hook, the embeddings plugin is killed once, the disk is full for
//     one day (a tmpfs of its own: root only);
//   - each day ends with a night: the server is left to embed the day's
//     backlog (at most nightMax) before it stops, as a real day's idle
//     hours do; without it the backlog grows with the year and the
//     searches measured answer keyword-only where a user's are hybrid;
//   - questions with known answers are asked along the way, and every
//     month the facts and earlier writes are looked up again.
//
// At the end both machines sync and the audit checks that every
// acknowledged write is in the files exactly once, the index agrees with
// the files, the two homes share the same memory and the remote holds
// nothing else; report.md and three SVG charts go in -out. The exit
// status is 1 when the audit finds anything.
//
//	go run ./cmd/memhost-sim -days 31 -out /tmp/sim     (make simulate)
//	go run ./cmd/memhost-sim -days 365 -model ../shared/models/all-MiniLM-L6-v2-Q4_K_M.gguf  (make simulate-year)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func main() {
	var opt options
	var start string
	flag.IntVar(&opt.Days, "days", 31, "simulated days")
	flag.Int64Var(&opt.Seed, "seed", 1, "seed of every random choice")
	flag.StringVar(&opt.Out, "out", "", "folder for the homes, the remote and the report (made; must be empty)")
	flag.StringVar(&opt.Bin, "bin", "bin", "folder holding memhost, memhost-core and the plugins")
	flag.StringVar(&opt.Bench, "bench", "../shared/bench", "the dev sets: locomo-dev/ and longmemeval-dev/")
	flag.StringVar(&opt.Model, "model", "", "a GGUF model: embed with the local provider (default: the hello plugin)")
	flag.Float64Var(&opt.KillRate, "kill-rate", 0.15, "chance a day that memhost serve is killed during a hook")
	flag.BoolVar(&opt.DiskFull, "disk-full", os.Geteuid() == 0, "fill the first home's disk for a day (a tmpfs: root only)")
	flag.StringVar(&start, "start", "2025-01-01", "the first simulated day")
	flag.IntVar(&opt.MaxTurns, "max-turns", 24, "turns of a conversation replayed, at most")
	flag.Parse()
	t, err := time.Parse("2006-01-02", start)
	if err != nil || opt.Days < 1 || opt.Out == "" {
		fmt.Fprintln(os.Stderr, "usage: memhost-sim -out DIR [-days N] [-seed S] [-bin DIR] [-bench DIR] [-model FILE] (-start YYYY-MM-DD)")
		os.Exit(2)
	}
	opt.Start = t
	for _, p := range []*string{&opt.Out, &opt.Bin, &opt.Bench, &opt.Model} {
		if *p != "" {
			if *p, err = filepath.Abs(*p); err != nil {
				fmt.Fprintln(os.Stderr, "memhost-sim:", err)
				os.Exit(2)
			}
		}
	}
	if entries, err := os.ReadDir(opt.Out); err == nil && len(entries) > 0 {
		fmt.Fprintf(os.Stderr, "memhost-sim: -out %s is not empty\n", opt.Out)
		os.Exit(2)
	}
	newSim(opt).run()
}
