package main

// Golden-file tests of the CLI's text output and exit codes.
//
// Each scenario runs a sequence of commands in-process (like cli_test.go:
// no plugins, no background embedder, so search is keyword-only) against
// one fresh home, and records a transcript in testdata/golden/NAME.txt:
//
//	$ memhost remember 'Sarah Chen - Phone: 555-1234'
//	remembered in reference/contacts.md § Sarah Chen (new section, line 4)
//	$ memhost get nope.md
//	stderr: memhost: no such page: nope.md
//	[exit 1]
//
// stdout is copied as it is ("[no newline at end]" marks output without a
// final newline), every stderr line gets "stderr: ", a non-zero exit code
// gets "[exit N]", and lines starting with "#" are notes written by the
// scenario (environment, edits made behind memhost's back).
//
// Any difference from the golden file fails the test. After an intended
// change of output, rewrite the files and review the diff:
//
//	go test -tags sqlite_fts5 -run Golden ./cmd/memhost/ -update
//	git diff cmd/memhost/testdata/golden
//
// The CLI has no way to fix the clock, so what depends on it is
// normalised, in this order (see normalise), and nothing else:
//
//   - the scenario's home folder            → $HOME
//   - this package's testdata folder         → $TESTDATA
//   - turn ids printed by session append     → <turn1>, <turn2>, … (in order of appearance)
//   - other random turn ids after "turn "    → turn <id>
//   - RFC 3339 times within a day of now     → <now>
//   - today's and yesterday's dates          → <today>, <yesterday>
//   - "## 14:03 — " daily-log heading times  → "## <hh:mm> — "
//   - durations "12 ms"                      → "N ms"
//   - ages "(3s ago)"                        → "(<age> ago)"
//   - the HASH column of `memhost files` for pages whose content holds the
//     clock (daily logs, transcripts written by session append or
//     compact, and any page holding today's or yesterday's date, such as
//     an entity page's created: and seen:: dates) → <hash>
//
// "Now" is the calendar clock (internal/clock), which make test-dates
// moves to other days.
//
// The placeholders are shorter than what they replace, so a table row
// holding one (`memhost files` with a daily log) looks out of line in the
// golden file; the CLI aligned it.
//
// Every scenario sets MEMHOST_TIMEZONE=UTC, so "today" is the UTC date, and
// runs at noon UTC of the calendar clock's day (clock.Set), so that none
// crosses a midnight. One scenario is one subtest: -run Golden/sessions
// runs one.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/internal/clock"
	"github.com/memhost/memhost/internal/syncbuf"
	"github.com/memhost/memhost/server/client"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenViaServer runs the scenarios with `memhost serve` running for the
// home: every command is forwarded to it, and the transcript must be the
// same golden file, byte for byte.
var goldenViaServer bool

// goldenForwards: the scenario's commands reach the server (not help
// pages and usage errors, which the CLI answers itself).
var goldenForwards bool

// startServer runs `memhost serve --listen ""` (the unix socket only) for
// the scenario's home, with the scenario's environment, until the test
// ends.
func (g *goldenScenario) startServer() {
	g.t.Helper()
	env := maps.Clone(g.env)
	ctx, cancel := context.WithCancel(context.Background())
	var log syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"memhost", "serve", "--listen", ""}, cmdapp.Stdio{
			Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &log,
			Getenv: func(k string) string { return env[k] },
		})
	}()
	g.t.Cleanup(func() {
		// The commands went through the server (not in-process because of
		// a refused environment, say): it counted their requests.
		if c, err := client.Dial(g.home, nil); err == nil {
			in, err := c.Info(context.Background())
			c.Close()
			if err == nil && goldenForwards && in.Requests < int64(g.commands)/3 {
				g.t.Errorf("the server answered %d requests for %d commands: were they forwarded?", in.Requests, g.commands)
			}
			g.t.Logf("%d commands, %d requests to the server", g.commands, in.Requests)
		}
		cancel()
		if code := <-done; code != 0 {
			g.t.Errorf("memhost serve exited %d:\n%s", code, log.String())
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if c, err := client.Dial(g.home, nil); err == nil {
			c.Close()
			return
		}
		select {
		case code := <-done:
			g.t.Fatalf("memhost serve exited %d at start:\n%s", code, log.String())
		default:
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("memhost serve did not answer:\n%s", log.String())
		}
	}
}

var serverState = regexp.MustCompile(`(?m)^(last sync|database):  .*$`)

func maskServerState(s string) string { return serverState.ReplaceAllString(s, "$1:  <server state>") }

// goldenScenario is one home and the transcript of the commands run on it.
type goldenScenario struct {
	t        *testing.T
	home     string
	testdata string // absolute path of ./testdata
	env      map[string]string
	out      strings.Builder
	turns    map[string]string // random turn id → <turnN>
	volatile map[string]bool   // index paths whose content holds the clock
	commands int               // commands run
}

// newGolden starts a scenario on a home that does not exist yet. env adds
// KEY=VALUE pairs to what the CLI's getenv sees.
func newGolden(t *testing.T, env ...string) *goldenScenario {
	t.Helper()
	td, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	g := &goldenScenario{
		t: t, home: filepath.Join(t.TempDir(), "home"), testdata: td,
		env:   map[string]string{"MEMHOST_TIMEZONE": "UTC"},
		turns: map[string]string{}, volatile: map[string]bool{},
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		g.env[k] = v
	}
	// Noon of the calendar clock's day: the day still follows the clock
	// (make test-dates moves it), the scenario never crosses midnight.
	day := clock.Now().UTC()
	t.Cleanup(clock.Set(time.Date(day.Year(), day.Month(), day.Day(), 12, 0, 0, 0, time.UTC)))
	if goldenViaServer {
		defer g.startServer()
	}
	keys := make([]string, 0, len(g.env))
	for k := range g.env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		g.note("env: %s=%s", k, g.env[k])
	}
	g.env["MEMHOST_HOME"] = g.home
	return g
}

// note writes a "# " line to the transcript.
func (g *goldenScenario) note(format string, args ...any) {
	g.out.WriteString(g.normalise("# " + fmt.Sprintf(format, args...) + "\n"))
}

// run runs memhost with args and no stdin (not piped).
func (g *goldenScenario) run(args ...string) result {
	g.t.Helper()
	return g.exec(nil, args...)
}

// pipe runs memhost with stdin piped from text.
func (g *goldenScenario) pipe(stdin string, args ...string) result {
	g.t.Helper()
	return g.exec(&stdin, args...)
}

func (g *goldenScenario) exec(stdin *string, args ...string) result {
	g.t.Helper()
	var out, errb bytes.Buffer
	io := cmdapp.Stdio{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return g.env[k] }}
	if stdin != nil {
		io.Stdin, io.StdinIsPiped = strings.NewReader(*stdin), true
	}
	code := run(context.Background(), append([]string{"memhost"}, args...), io)
	g.commands++
	r := result{out.String(), errb.String(), code}

	// Transcripts written by session append or compact hold the clock.
	if len(args) > 1 && args[0] == "session" && (args[1] == "append" || args[1] == "compact") {
		for i, a := range args {
			if a == "--session" && i+1 < len(args) {
				g.volatile["sessions/"+args[i+1]+".jsonl"] = true
			}
		}
		if args[1] == "compact" && len(args) > 2 {
			g.volatile["sessions/"+args[2]+".jsonl"] = true
		}
	}
	for _, m := range appendedTurn.FindAllStringSubmatch(r.stdout, -1) {
		if _, ok := g.turns[m[1]]; !ok {
			g.turns[m[1]] = fmt.Sprintf("<turn%d>", len(g.turns)+1)
		}
	}

	var b strings.Builder
	line := "$ " + shellJoin(append([]string{"memhost"}, args...))
	switch {
	case stdin == nil:
		b.WriteString(line + "\n")
	case strings.HasSuffix(*stdin, "\n") && !strings.Contains(*stdin, "\nEOF\n"):
		b.WriteString(line + " <<'EOF'\n" + *stdin + "EOF\n")
	default:
		b.WriteString("$ printf %s " + shellQuote(*stdin) + " | " + strings.TrimPrefix(line, "$ ") + "\n")
	}
	b.WriteString(r.stdout)
	if r.stdout != "" && !strings.HasSuffix(r.stdout, "\n") {
		b.WriteString("\n[no newline at end]\n")
	}
	for _, l := range strings.SplitAfter(r.stderr, "\n") {
		if l != "" {
			b.WriteString("stderr: " + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	if r.stderr != "" && !strings.HasSuffix(r.stderr, "\n") {
		b.WriteString("[stderr: no newline at end]\n")
	}
	if code != 0 {
		fmt.Fprintf(&b, "[exit %d]\n", code)
	}
	g.out.WriteString(g.normalise(b.String()))
	return r
}

var (
	appendedTurn = regexp.MustCompile(`appended turn ([0-9a-f]{12}) `)
	otherTurnID  = regexp.MustCompile(`\bturn [0-9a-f]{12}\b`)
	rfc3339      = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})`)
	headingTime  = regexp.MustCompile(`## \d{2}:\d{2} — `)
	millis       = regexp.MustCompile(`\b\d+ ms\b`)
	age          = regexp.MustCompile(`\((?:\d+h)?(?:\d+m)?\d+(?:\.\d+)?[mµn]?s ago\)`)
	filesRow     = regexp.MustCompile(`(?m)^(\S+)(\s.*\s)[0-9a-f]{12}$`)
)

// normalise replaces what depends on the clock, randomness and temporary
// folders (see the comment at the top of this file).
func (g *goldenScenario) normalise(s string) string {
	s = strings.ReplaceAll(s, g.home, "$HOME")
	s = strings.ReplaceAll(s, g.testdata, "$TESTDATA")
	for id, name := range g.turns {
		s = strings.ReplaceAll(s, id, name)
	}
	s = otherTurnID.ReplaceAllString(s, "turn <id>")
	now := clock.Now()
	s = rfc3339.ReplaceAllStringFunc(s, func(m string) string {
		t, err := time.Parse(time.RFC3339Nano, m)
		if err == nil && t.After(now.Add(-24*time.Hour)) && t.Before(now.Add(time.Hour)) {
			return "<now>"
		}
		return m
	})
	utc := now.UTC()
	s = strings.ReplaceAll(s, utc.Format(time.DateOnly), "<today>")
	s = strings.ReplaceAll(s, utc.AddDate(0, 0, -1).Format(time.DateOnly), "<yesterday>")
	s = headingTime.ReplaceAllString(s, "## <hh:mm> — ")
	s = millis.ReplaceAllString(s, "N ms")
	s = age.ReplaceAllString(s, "(<age> ago)")
	s = filesRow.ReplaceAllStringFunc(s, func(row string) string {
		m := filesRow.FindStringSubmatch(row)
		if strings.HasPrefix(m[1], "daily/") || g.volatile[m[1]] || g.holdsDate(m[1], utc) {
			return m[1] + m[2] + "<hash>"
		}
		return row
	})
	return s
}

// holdsDate reports whether the page at index path rel holds the date of
// now or of the day before (a hash that changes with the day).
func (g *goldenScenario) holdsDate(rel string, now time.Time) bool {
	p := filepath.Join(g.home, "notebook", filepath.FromSlash(rel))
	if strings.HasPrefix(rel, "sessions/") {
		p = filepath.Join(g.home, filepath.FromSlash(rel))
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte(now.Format(time.DateOnly))) || bytes.Contains(b, []byte(now.AddDate(0, 0, -1).Format(time.DateOnly)))
}

// check compares the transcript with testdata/golden/NAME.txt, or writes
// it with -update.
func (g *goldenScenario) check(name string) {
	g.t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	got := g.out.String()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			g.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		g.t.Fatalf("%v (run with -update to create it)", err)
	}
	if goldenViaServer {
		// The server synced the home when it started, and its index is
		// open (its write-ahead log not yet folded into memory.db), so
		// status's "last sync" and "database" lines are the only ones
		// allowed to differ.
		got, want = maskServerState(got), []byte(maskServerState(string(want)))
	}
	if got != string(want) {
		g.t.Errorf("%s differs from the CLI's output (run with -update to accept it):\n%s", path, lineDiff(string(want), got))
	}
}

// lineDiff shows the first difference: the command whose output
// differs, and a few lines of each side from there. -update and git diff
// show them all.
func lineDiff(want, got string) string {
	w, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(gl) && w[i] == gl[i] {
		i++
	}
	cmd := "(before the first command)"
	for j := min(i, len(w)-1); j >= 0; j-- {
		if strings.HasPrefix(w[j], "$ ") {
			cmd = w[j]
			break
		}
	}
	show := func(lines []string) string {
		var b strings.Builder
		for k := i; k < min(i+6, len(lines)); k++ {
			fmt.Fprintf(&b, "  %4d| %s\n", k+1, lines[k])
		}
		if i >= len(lines) {
			b.WriteString("  (end of file)\n")
		}
		return b.String()
	}
	return fmt.Sprintf("first difference at line %d, in\n  %s\nwant:\n%sgot:\n%s", i+1, cmd, show(w), show(gl))
}

// shellJoin quotes args for the transcript's "$ memhost ..." line.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=,@+-]+$`)

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' && r != '\n' || r == 0x7f }) {
		// Bash's $'...' with escapes for what is not printable.
		var b strings.Builder
		b.WriteString("$'")
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n <= 1, r < ' ', r == 0x7f:
				fmt.Fprintf(&b, `\x%02x`, s[i])
			case r == '\'' || r == '\\':
				b.WriteString(`\` + string(r))
			default:
				b.WriteString(s[i : i+n])
			}
			i += n
		}
		return b.String() + "'"
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeFile changes the notebook behind memhost's back.
func (g *goldenScenario) writeFile(rel, content string) {
	g.t.Helper()
	p := filepath.Join(g.home, "notebook", filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
	g.note("edited behind memhost's back: notebook/%s (%d bytes)", rel, len(content))
}

// writeHome writes a file of the home (config.yaml) and shows it in the
// transcript.
func (g *goldenScenario) writeHome(rel, content string) {
	g.t.Helper()
	if err := os.MkdirAll(g.home, 0o755); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.home, rel), []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
	g.note("wrote $HOME/%s:", rel)
	for _, l := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
		g.note("  %s", l)
	}
}

// setenv changes what the CLI's getenv returns from now on ("" unsets).
func (g *goldenScenario) setenv(k, v string) {
	if v == "" {
		delete(g.env, k)
		g.note("env: unset %s", k)
		return
	}
	g.env[k] = v
	g.note("env: %s=%s", k, v)
}

func today() string     { return clock.Now().UTC().Format(time.DateOnly) }
func yesterday() string { return clock.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly) }

func TestGolden(t *testing.T) {
	for _, s := range []struct {
		name  string
		fn    func(t *testing.T)
		local bool // answered by the CLI alone
	}{
		{"help", goldenHelp, true},
		{"notebook", goldenNotebook, false},
		{"daily-context", goldenDailyContext, false},
		{"recall", goldenRecall, false},
		{"index", goldenIndex, false},
		{"sessions", goldenSessions, false},
		{"ingest-search", goldenIngestSearch, false},
		{"hooks", goldenHooks, false},
		{"episodes", goldenEpisodes, false},
		{"plugins-models", goldenPluginsModels, false},
		{"config", goldenConfig, false},
		{"usage-errors", goldenUsageErrors, true},
		{"bad-input", goldenBadInput, false},
	} {
		t.Run(s.name, s.fn)
		if *update {
			continue // the golden files come from in-process runs
		}
		t.Run(s.name+"/via-server", func(t *testing.T) {
			goldenViaServer, goldenForwards = true, !s.local
			defer func() { goldenViaServer = false }()
			s.fn(t)
		})
	}
}

// goldenHelp: the help pages.
func goldenHelp(t *testing.T) {
	g := newGolden(t)
	g.run()
	g.run("help")
	g.run("help", "recall")
	g.run("remember", "--help")
	g.run("session")
	g.run("session", "append", "--help")
	g.run("plugins", "--help")
	g.check("help")
}

// goldenNotebook: init, remember's routes and flags, get, write, rm.
func goldenNotebook(t *testing.T) {
	g := newGolden(t)
	g.run("init")
	g.run("init")
	g.run("--home", g.home, "init")

	g.note("remember: routes chosen from the text")
	g.run("remember", "Sarah Chen - Phone: 555-1234")
	g.run("remember", "Sarah Chen - Phone: 555-1234")
	g.run("remember", "sarah chen -   PHONE: 555-1234")
	g.run("remember", "Sarah Chen - Email: sarah@example.com")
	g.run("remember", "Tom's birthday is 3 March")
	g.run("remember", "call the plumber: 555 0199 22")
	g.run("remember", "Always answer in British English")
	g.run("remember", "Ana prefers window seats")
	g.run("remember", "buy oat milk")
	g.run("remember", "add the tent to the camping list")
	g.run("remember", "- [ ] renew passport")
	g.run("remember", "todo: file the taxes")
	g.run("remember", "The boiler was serviced in May")
	g.run("remember", "The", "boiler", "has", "a", "blue", "tag")

	g.note("remember: --category, --file, --section")
	g.run("remember", "--category", "knowledge", "--file", "kettle", "Descale every second Sunday")
	g.run("remember", "--file", "kettle", "Use citric acid")
	g.run("remember", "--file", "kettle.md", "Use citric acid")
	g.run("remember", "--category", "reference", "--section", "Wi-Fi", "Guest network: lantern-42")
	g.run("remember", "--category", "reference", "--section", "## Wi-Fi", "Router in the hall cupboard")
	g.run("remember", "--category", "lists", "water the plants")
	g.run("remember", "--category", "reference", "Sarah Chen - Phone: 555-9999")
	g.run("remember", "--section", "Sarah Chen", "Met at the 2019 conference")
	g.pipe("Line one of a note\nline two\n", "remember", "--category", "knowledge", "-")
	g.pipe("Kettle descaling: every second Sunday", "remember", "--category", "knowledge")

	g.note("get: whole pages and line ranges")
	g.run("get", "reference/contacts.md")
	g.run("get", "reference/contacts.md", "--start-line", "3", "--lines", "2")
	g.run("get", "reference/contacts.md", "--start-line", "4")
	g.run("get", "knowledge/facts.md", "--lines", "1")
	g.run("get", "knowledge/facts.md", "--start-line", "1", "--lines", "100")
	g.run("get", "./lists/../lists/todos.md")
	g.run("get", "knowledge/kettle.md")
	g.run("get", "reference/notes.md")
	g.run("get", "lists/shopping.md")
	g.run("get", "lists/camping.md")
	g.run("get", "reference/standing-orders.md")
	g.run("get", "reference/preferences.md")

	g.note("write: append, --section, --replace")
	g.run("write", "projects/plan.md", "# Plan")
	g.run("write", "projects/plan.md", "First idea")
	g.run("write", "projects/plan.md", "Second", "idea")
	g.run("write", "projects/plan.md", "--section", "Goals", "- ship it")
	g.run("write", "projects/plan.md", "--section", "Goals", "- test it")
	g.run("write", "projects/plan.md", "--section", "Risks", "- none known")
	g.run("write", "projects/plan.md", "--section", "Goals", "--replace", "- ship it twice")
	g.run("get", "projects/plan.md")
	g.run("write", "projects/plan.md", "--replace", "# Plan v2\n\nStart again.")
	g.run("get", "projects/plan.md")
	g.pipe("# Notes\n\n## Monday\n- met the team\n", "write", "projects/notes.md", "-")
	g.pipe("- wrote the tests\n", "write", "projects/notes.md", "--section", "Tuesday", "-")
	g.run("get", "projects/notes.md")

	g.note("rm")
	g.run("rm", "projects/notes.md")
	g.run("get", "projects/notes.md")
	g.run("rm", "projects/notes.md")
	g.run("files")
	g.check("notebook")
}

// goldenDailyContext: daily-log, the context block, and recall of daily
// entries.
func goldenDailyContext(t *testing.T) {
	g := newGolden(t)
	g.run("context")
	g.run("daily-log", "Called Sarah about the project timeline")
	g.pipe("Standup\n- shipped golden tests\n- reviewed the host refactor\n", "daily-log")
	g.run("daily-log", "## - A heading-like first line")
	g.run("daily-log", strings.Repeat("very long first line ", 6)+"end")
	g.run("get", "daily/"+today()+".md")
	g.run("get", "daily/"+today()+".md", "--start-line", "3", "--lines", "1")
	g.run("context")
	g.run("remember", "Sarah Chen - Phone: 555-1234")
	g.run("remember", "Always answer in British English")
	g.run("remember", "The boiler was serviced in May")
	g.run("write", "daily/"+yesterday()+".md", "# Daily Log — "+yesterday()+"\n\n## 09:00 — Yesterday's entry about the lantern")
	g.run("write", "daily/2001-01-01.md", "# Daily Log — 2001-01-01\n\n## 09:00 — An old entry about Sarah")
	g.run("context")
	g.run("recall", "sarah")
	g.run("recall", "sarah", "--sources", "daily")
	g.run("context", "--query", "sarah", "--budget", "300")
	g.run("context", "--query", "sarah lantern", "--tiers", "episodes", "--per-tier", "1")
	g.run("context", "--query", "sarah", "--budget", "3")
	g.run("context", "--query", "sarah", "--tiers", "dreams")
	g.run("context", "--query", "sarah", "--half-life", "soon")
	g.run("context", "--budget", "300")
	g.check("daily-context")
}

// goldenRecall: result groups, --sources, --max-results, --min-score, no
// results.
func goldenRecall(t *testing.T) {
	g := newGolden(t)
	for i := range 6 {
		g.run("remember", "--category", "knowledge", "--file", fmt.Sprintf("page%d", i), fmt.Sprintf("lantern note %d", i))
	}
	g.run("remember", "The brass lantern hangs in the hall; the lantern oil is in the shed")
	g.run("write", "projects/garden.md", "# Garden\n\n## Lighting\nA solar lantern by the pond.\n\n## Plants\nRoses and lavender.")
	g.run("daily-log", "Lit a lantern in the garden")
	g.run("session", "append", "--session", "chat-1", "--role", "user", "Where is the lantern oil?")
	g.run("session", "append", "--session", "chat-1", "--role", "assistant", "The lantern oil is in the shed.")
	g.run("recall", "lantern")
	g.run("recall", "lantern", "oil")
	g.run("recall", "lantern", "--sources", "daily")
	g.run("recall", "lantern", "--sources", "notebook")
	g.run("recall", "lantern", "--sources", "sessions")
	g.run("recall", "lantern", "--sources", "notebook,daily,sessions")
	g.run("recall", "lantern", "--sources", "sessions, daily")
	g.run("recall", "lantern", "--max-results", "2")
	g.run("recall", "lantern", "--max-results", "1", "--sources", "daily,sessions")
	g.run("recall", "lantern", "--min-score", "0.9")
	g.run("recall", "lantern", "--min-score", "0")
	g.run("recall", "lantern", "--min-score", "1")
	g.run("recall", "roses")
	g.run("recall", "submarine")
	g.run("recall", "submarine", "--sources", "sessions")
	g.check("recall")
}

// goldenIndex: status, files, sync and rebuild as the notebook changes
// behind memhost's back.
func goldenIndex(t *testing.T) {
	g := newGolden(t)
	g.run("status")
	g.run("files")
	g.run("init")
	g.run("status")
	g.run("sync")
	g.run("remember", "Sarah Chen - Phone: 555-1234")
	g.run("remember", "The boiler was serviced in May")
	g.run("daily-log", "Serviced the boiler")
	g.run("files")
	g.run("status")

	g.writeFile("knowledge/editor.md", "# Edited\n\nfound by the editor\n")
	g.writeFile("knowledge/facts.md", "# Facts\n\n- The boiler was serviced in June\n")
	if err := os.Remove(filepath.Join(g.home, "notebook", "reference", "contacts.md")); err != nil {
		t.Fatal(err)
	}
	g.note("deleted behind memhost's back: notebook/reference/contacts.md")
	g.writeFile("notes.txt", "not a page\n")
	g.writeFile(".hidden/secret.md", "# Hidden\n")
	g.run("files")
	g.run("status")
	g.run("sync")
	g.run("sync")
	g.run("files")

	outside := filepath.Join(t.TempDir(), "outside.md")
	if err := os.WriteFile(outside, []byte("# Outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(g.home, "notebook", "knowledge", "outside.md")); err != nil {
		t.Fatal(err)
	}
	g.note("symlink notebook/knowledge/outside.md -> a page outside the notebook")
	g.run("sync")
	g.run("files")
	g.run("rebuild")
	g.run("status")
	g.run("recall", "boiler")
	g.check("index")
}

// goldenSessions: session append, tokens, check and compact, with a small
// context window so that flushes and compactions come due.
func goldenSessions(t *testing.T) {
	g := newGolden(t,
		"MEMHOST_MEMORY_COMPACTION_CONTEXTWINDOW=1000",
		"MEMHOST_MEMORY_COMPACTION_RESERVETOKENS=100",
		"MEMHOST_MEMORY_COMPACTION_SOFTTHRESHOLDTOKENS=200",
		"MEMHOST_MEMORY_COMPACTION_KEEPRECENTTOKENS=20",
	)
	g.run("session", "append", "--session", "work-1", "--role", "user", "Please plan the release of version two")
	g.run("session", "append", "--session", "work-1", "--role", "assistant", "--meta", `{"model":"test"}`, "The release plan: freeze on Monday, ship on Thursday.")
	g.pipe("Sounds good.\nAdd a rollback step.\n", "session", "append", "--session", "work-1", "--role", "user")
	g.run("session", "append", "--session", "work-1", "--role", "tool", "rollback.sh written")
	g.run("session", "append", "--session", "work-1", "--role", "system", "Keep answers short and concrete, please.")
	g.run("session", "tokens", "work-1")
	g.run("session", "check", "work-1")
	g.run("session", "check", "work-1", "--incoming-tokens", "700")
	g.run("session", "check", "work-1", "--incoming-tokens", "700")
	g.run("session", "check", "work-1", "--incoming-tokens", "900")
	g.run("status")
	g.run("session", "compact", "work-1", "--summary", "Planned release two: freeze Monday, ship Thursday, with a rollback step.")
	g.run("session", "tokens", "work-1")
	g.run("session", "check", "work-1", "--incoming-tokens", "700")
	g.run("session", "compact", "work-1", "--summary", "Nothing new.")
	g.run("session", "append", "--session", "work-1", "--role", "assistant", "The rollout reached every region on Thursday and no rollback was needed.")
	g.run("session", "append", "--session", "work-1", "--role", "user", "Shipped it.")
	g.run("session", "tokens", "work-1")
	g.pipe("The second summary, from stdin.\n", "session", "compact", "work-1", "--summary", "-")
	g.run("session", "tokens", "work-1")
	g.run("session", "check", "work-1", "--incoming-tokens", "900")
	g.run("conversation-search", "rollback")
	g.run("conversation-search", "release", "--session", "work-1", "--max-results", "2")
	g.run("files")
	g.run("status")
	// Where turns came from (channel, source): kept, shown and filtered on.
	g.run("session", "append", "--session", "wa-ann", "--role", "user", "--channel", "whatsapp", "--source", "919876543210", "Running late, start the rollback without me")
	g.run("session", "append", "--session", "tg-bob", "--role", "user", "--channel", "telegram", "--source", "-100200300", "Is the rollback done?")
	g.run("conversation-search", "--channel", "whatsapp", "rollback")
	g.run("conversation-search", "--channel", "telegram", "--source", "-100200300", "--max-results", "1", "rollback")
	g.run("session", "append", "--session", "wa-ann", "--role", "user", "--source", "919876543210", "no channel")
	g.run("session", "append", "--session", "wa-ann", "--role", "user", "--channel", "whats app", "a space")
	g.run("session", "append", "--session", "wa-ann", "--role", "user", "--channel", "whatsapp", "--source", "91 98", "a space")
	g.check("sessions")
}

// goldenIngestSearch: session ingest of both formats, and
// conversation-search with its filters.
func goldenIngestSearch(t *testing.T) {
	g := newGolden(t)
	trip := filepath.Join("testdata", "transcripts", "trip.jsonl")
	claude := filepath.Join("testdata", "transcripts", "4f35e220-c435.jsonl")
	g.run("session", "ingest", trip)
	g.run("session", "ingest", trip)
	g.run("session", "ingest", "--format", "claude-code", claude)
	g.run("session", "ingest", claude, trip)
	g.run("session", "ingest", "--format", "memhost", filepath.Join(g.testdata, "transcripts", "trip.jsonl"))
	g.run("session", "tokens", "trip")
	g.run("session", "tokens", "claude-4f35e220-c435")
	g.run("session", "check", "trip", "--incoming-tokens", "10")
	g.run("conversation-search", "lighthouse")
	g.run("conversation-search", "lighthouse", "--max-results", "2")
	g.run("conversation-search", "lighthouse", "--since", "2024-03-02")
	g.run("conversation-search", "lighthouse", "--until", "2024-03-01")
	g.run("conversation-search", "lighthouse", "--since", "2024-03-02", "--until", "2024-03-02")
	g.run("conversation-search", "lighthouse", "--since", "2024-03-01T09:00:30Z", "--until", "2024-03-04T00:00:00+01:00")
	g.run("conversation-search", "lighthouse", "--since", "2030-01-01")
	g.run("conversation-search", "staging", "config")
	g.run("conversation-search", "staging", "--session", "claude-4f35e220-c435")
	g.run("conversation-search", "staging", "--session", "trip")
	g.run("conversation-search", "Write", "tool")
	g.run("recall", "lighthouse", "--sources", "sessions")
	g.run("recall", "lighthouse")
	g.run("files")
	g.run("session", "list")
	g.check("ingest-search")
}

// goldenHooks: the Claude Code hooks.
func goldenHooks(t *testing.T) {
	g := newGolden(t)
	claude := filepath.Join(g.testdata, "transcripts", "4f35e220-c435.jsonl")
	payload := func(event string) string {
		return fmt.Sprintf(`{"session_id":"4f35e220-c435","transcript_path":%q,"cwd":"/home/u/project","hook_event_name":%q}`, claude, event)
	}
	g.pipe(payload("SessionStart"), "hook", "session-start")
	g.run("remember", "Sarah Chen - Phone: 555-1234")
	g.run("daily-log", "Worked on the staging config")
	g.pipe(payload("SessionStart"), "hook", "session-start")
	g.pipe(payload("Stop"), "hook", "stop")
	g.pipe(payload("Stop"), "hook", "stop")
	g.pipe(payload("SessionEnd"), "hook", "session-end")
	g.pipe(payload("PreCompact"), "hook", "pre-compact")
	g.run("session", "tokens", "claude-4f35e220-c435")
	g.run("status")
	g.run("conversation-search", "staging")

	g.note("bad hook input: exit 1 (non-blocking for Claude Code)")
	g.run("hook", "stop")
	g.pipe("not json", "hook", "stop")
	g.pipe(`{"session_id":"x"}`, "hook", "stop")
	g.pipe(`{"session_id":"x"}`, "hook", "pre-compact")
	g.pipe(`{"transcript_path":"relative/path.jsonl"}`, "hook", "session-end")
	g.pipe(`{"transcript_path":"/nonexistent/transcript.jsonl"}`, "hook", "stop")
	g.pipe(`{}`, "hook", "user-prompt-submit")
	g.pipe(`{}`, "hook")
	g.pipe(`{}`, "hook", "stop", "extra")
	g.check("hooks")
}

// goldenEpisodes: the episode logs of three sessions (two channels, one
// without, one crossing midnight), written again, kept once edited; a
// turn that ends its session writes today's.
func goldenEpisodes(t *testing.T) {
	g := newGolden(t)
	for _, name := range []string{"wa-ada", "tg-bob", "notes"} {
		g.run("session", "ingest", "--format", "memhost", filepath.Join(g.testdata, "transcripts", name+".jsonl"))
	}
	g.run("episodes", "--date", "2026-02-13")
	g.run("get", "episodes/2026-02-13.md")
	g.run("episodes", "--date", "2026-02-13")
	g.run("write", "episodes/2026-02-13.md", "A note of mine.")
	g.run("episodes", "--since", "2026-02-12", "--until", "2026-02-15")
	g.run("get", "episodes/2026-02-13.md", "--start-line", "30")
	g.run("episodes", "--json", "--date", "2026-02-14")
	g.run("episodes")
	g.run("session", "append", "--session", "wa-ada", "--role", "assistant", "--channel", "whatsapp", "--source", "919876543210", "--end", "Phase 4 started.")
	g.run("episodes")
	g.run("conversation-search", "staging")

	g.note("bad dates")
	g.run("episodes", "--date", "13.02.2026")
	g.run("episodes", "--date", "2026-02-13", "--since", "2026-02-01")
	g.run("episodes", "--since", "2026-02-01")
	g.run("episodes", "--since", "2026-02-10", "--until", "2026-02-01")
	g.check("episodes")
}

// goldenPluginsModels: models and plugins with nothing installed.
func goldenPluginsModels(t *testing.T) {
	g := newGolden(t)
	g.run("models", "list")
	g.run("plugins", "list")
	g.run("plugins", "status")
	g.run("status")
	g.run("plugins", "use", "nope")
	g.run("models", "rm", "nope.gguf")
	g.run("models", "pull", "no-such-model")
	g.run("models", "pull")
	g.run("models", "rm")
	g.run("plugins", "use")
	g.run("plugins", "use", "nope", "--set", "novalue")
	g.run("plugins", "list", "extra")
	g.check("plugins-models")
}

// goldenConfig: config.yaml and MEMHOST_* overrides, good and bad, and a
// home that is a file.
func goldenConfig(t *testing.T) {
	g := newGolden(t)
	g.writeHome("config.yaml", "memory:\n  search:\n    maxResult: 3\n")
	g.run("status")
	g.writeHome("config.yaml", "memory:\n  search:\n    maxResults: lots\n")
	g.run("init")
	g.setenv("MEMHOST_TIMEZONE", "") // the environment overrides config.yaml
	g.writeHome("config.yaml", "timezone: Mars/Olympus_Mons\n")
	g.run("status")
	g.writeHome("config.yaml", "timezone: UTC\n")
	g.setenv("MEMHOST_TIMEZONE", "Mars/Olympus_Mons")
	g.run("status")
	g.setenv("MEMHOST_TIMEZONE", "UTC")
	g.writeHome("config.yaml", "memory:\n  search:\n    minScore: 2\n")
	g.run("recall", "x")
	g.writeHome("config.yaml", "memory: [\n")
	g.run("status")
	g.writeHome("config.yaml", "memory:\n  search:\n    maxResults: 2\n")
	g.run("init")
	for i := range 4 {
		g.run("remember", "--category", "knowledge", "--file", fmt.Sprintf("page%d", i), fmt.Sprintf("kettle note %d", i))
	}
	g.run("recall", "kettle")
	g.run("recall", "kettle", "--max-results", "3")
	g.setenv("MEMHOST_MEMORY_SEARCH_MAXRESULTS", "1")
	g.run("recall", "kettle")
	g.setenv("MEMHOST_MEMORY_SEARCH_MAXRESULTS", "lots")
	g.run("recall", "kettle")
	g.setenv("MEMHOST_MEMORY_SEARCH_MAXRESULTS", "")
	g.setenv("MEMHOST_MEMORY_PROMPT_DAILYWINDOW", "0")
	g.run("context")
	g.setenv("MEMHOST_MEMORY_PROMPT_DAILYWINDOW", "")
	g.run("--home", filepath.Join(g.home, "config.yaml"), "status")
	g.run("--home", filepath.Join(g.home, "config.yaml"), "init")
	g.check("config")
}

// goldenUsageErrors: how the command was called is wrong: exit 2, one line
// on stderr.
func goldenUsageErrors(t *testing.T) {
	g := newGolden(t)
	g.run("frobnicate")
	g.run("--nope")
	g.run("remember")
	g.run("remember", "--nope", "x")
	g.run("remember", "--category")
	g.run("daily-log")
	g.run("get")
	g.run("get", "a.md", "b.md")
	g.run("get", "reference/contacts.md", "--lines", "-1")
	g.run("get", "reference/contacts.md", "--start-line", "-2")
	g.run("get", "reference/contacts.md", "--lines", "many")
	g.run("write")
	g.run("write", "reference/contacts.md")
	g.run("rm")
	g.run("rm", "a.md", "b.md")
	g.run("recall")
	g.run("recall", "x", "--max-results", "0")
	g.run("recall", "x", "--max-results", "many")
	g.run("recall", "x", "--min-score", "3")
	g.run("recall", "x", "--min-score", "-0.5")
	g.run("recall", "x", "--min-score", "high")
	g.run("context", "extra")
	g.run("status", "extra")
	g.run("files", "extra")
	g.run("sync", "extra")
	g.run("rebuild", "extra")
	g.run("init", "extra")
	g.run("session", "append", "x")
	g.run("session", "append", "--session", "s", "x")
	g.run("session", "append", "--session", "s", "--role", "user")
	g.run("session", "ingest")
	g.run("session", "tokens")
	g.run("session", "check")
	g.run("session", "check", "s", "--incoming-tokens", "lots")
	g.run("session", "compact", "s")
	g.run("session", "compact", "--summary", "x")
	g.run("session", "frobnicate")
	g.run("conversation-search")
	g.run("conversation-search", "x", "--max-results", "0")
	g.run("eval")
	g.run("eval", "dir", "--k", "0")
	g.run("models", "frobnicate")
	g.check("usage-errors")
}

// goldenBadInput: well-formed calls the CLI refuses: exit 1, one line on
// stderr, nothing written.
func goldenBadInput(t *testing.T) {
	g := newGolden(t)
	g.run("remember", "Sarah Chen - Phone: 555-1234")
	g.run("session", "append", "--session", "s1", "--role", "user", "hello there")

	g.note("paths")
	g.run("get", "../x")
	g.run("get", "/etc/passwd")
	g.run("write", "../../evil.md", "x")
	g.run("rm", "lists/../../x.md")
	g.run("get", "nope.md")
	g.run("rm", "nope.md")
	g.run("write", "notes.txt", "x")
	g.run("get", "reference")
	g.run("get", "reference/contacts.md", "--start-line", "99")

	g.note("text")
	g.run("remember", "")
	g.pipe("", "remember", "-")
	g.pipe("  \n\n", "remember")
	g.run("daily-log", "   ")
	g.run("write", "projects/plan.md", "")
	g.run("remember", "bad\x00text")
	g.run("remember", "bad \xff text")
	g.run("remember", "--category", "diary", "x")
	g.run("remember", "--file", "a/b", "x")
	g.run("remember", "--file", "..", "x")

	g.note("search")
	g.run("recall", "?!")
	g.run("recall", "x", "--sources", "web")
	g.run("recall", "x", "--sources", "notebook,web")
	g.run("recall", "x", "--sources", "")
	g.run("conversation-search", "?!")
	g.run("conversation-search", "   ")
	g.run("conversation-search", "hello", "--session", "nope")
	g.run("conversation-search", "hello", "--session", "../etc")
	g.run("conversation-search", "hello", "--since", "yesterday")
	g.run("conversation-search", "hello", "--until", "2024-13-01")

	g.note("sessions")
	g.run("session", "append", "--session", "bad/id", "--role", "user", "x")
	g.run("session", "append", "--session", "s1", "--role", "robot", "x")
	g.run("session", "append", "--session", "s1", "--role", "user", "--meta", "[1,2]", "x")
	g.run("session", "append", "--session", "s1", "--role", "user", "--meta", "{bad", "x")
	g.run("session", "append", "--session", "s1", "--role", "user", "")
	g.run("session", "tokens", "nope")
	g.run("session", "tokens", "../x")
	g.run("session", "check", "nope")
	g.run("session", "check", "s1", "--incoming-tokens", "-5")
	g.run("session", "compact", "nope", "--summary", "x")
	g.run("session", "compact", "s1", "--summary", "")
	g.run("session", "compact", "s1", "--summary", "short")
	g.run("session", "ingest", "testdata/transcripts/missing.jsonl")
	g.run("session", "ingest", "--format", "word", "testdata/transcripts/trip.jsonl")
	g.run("session", "ingest", "testdata/transcripts/unknown.jsonl")
	g.run("eval", "testdata/transcripts")
	g.run("--home", filepath.Join(g.home, "notebook", "reference", "contacts.md"), "status")

	g.note("nothing above changed the notebook")
	g.run("files")
	g.check("bad-input")
}
