package crashtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost/internal/testbin"
)

// binDir holds memhost-core, the memhost launcher and the hello plugin,
// built once for the run (the plugin must sit beside memhost-core).
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "memhost-crash-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	for _, b := range []struct {
		out, pkg string
		tags     bool // memhost-core needs FTS5
		static   bool // the launcher is built as make builds it
	}{
		{"memhost-core", "../../cmd/memhost-core", true, false},
		{"memhost", "../../cmd/memhost", false, true},
		{"memhost-embeddings-hello", "../../examples/embeddings-hello", false, false},
	} {
		var tags string
		var env []string
		if b.tags {
			tags = "sqlite_fts5"
		}
		if b.static {
			env = []string{"CGO_ENABLED=0"}
		}
		bin, err := testbin.BuildEnv(b.pkg, tags, env)
		if err == nil {
			err = testbin.Copy(bin, filepath.Join(dir, b.out))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "building", b.out+":", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// settings come from the environment so that `make crash` and a
// reproduction can change them without editing the test.
type settings struct {
	kills int
	seed  uint64
	ops   []string // the operations to kill, in the order of opNames
}

// opNames are the operations the harness kills, in schedule order before
// the shuffle.
var opNames = []string{"ingest", "append", "remember", "write", "daily-log", "sync", "rebuild", "embed", "serve"}

func settingsFromEnv() (settings, error) {
	s := settings{kills: 20, seed: 13, ops: opNames}
	if v := os.Getenv("MEMHOST_CRASH_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return s, fmt.Errorf("MEMHOST_CRASH_KILLS=%q: want a count", v)
		}
		s.kills = n
	}
	if v := os.Getenv("MEMHOST_CRASH_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return s, fmt.Errorf("MEMHOST_CRASH_SEED=%q: want an unsigned integer", v)
		}
		s.seed = n
	}
	if v := os.Getenv("MEMHOST_CRASH_OPS"); v != "" {
		s.ops = nil
		for _, name := range strings.Split(v, ",") {
			if !slices.Contains(opNames, strings.TrimSpace(name)) {
				return s, fmt.Errorf("MEMHOST_CRASH_OPS: unknown operation %q (%s)", name, strings.Join(opNames, ", "))
			}
			s.ops = append(s.ops, strings.TrimSpace(name))
		}
	}
	return s, nil
}

// schedule lists the operation of every round: the operations in a
// shuffled order, again and again, so that a short run still kills each.
func schedule(s settings) []string {
	rng := rand.New(rand.NewPCG(s.seed, 0))
	var out []string
	for len(out) < s.kills {
		cycle := slices.Clone(s.ops)
		rng.Shuffle(len(cycle), func(i, j int) { cycle[i], cycle[j] = cycle[j], cycle[i] })
		out = append(out, cycle...)
	}
	return out[:s.kills]
}

// TestCrash kills memhost at random points and checks the home after each
// kill (see the package comment). Each round draws its numbers from a
// generator seeded with the seed and the round, so a round's kill time is
// the same fraction of the operation's measured duration in every run of
// that seed.
func TestCrash(t *testing.T) {
	s, err := settingsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if s.kills == 0 {
		t.Skip("MEMHOST_CRASH_KILLS=0")
	}
	if testing.Short() {
		t.Skip("-short: kill -9 rounds, the same on any day (scripts/test-dates.sh's first run has them)")
	}
	start := time.Now()
	t.Logf("crash harness: seed %d, %d kills, operations %s", s.seed, s.kills, strings.Join(s.ops, ","))
	h := newHarness(t, s)
	h.setup()
	t.Logf("setup %v; measured: ingest %v/turn, append %v, remember %v, write %v, daily-log %v, sync %v, rebuild %v, embed %v/chunk, command through serve %v",
		time.Since(start).Round(time.Millisecond), h.cal.ingestPerTurn, h.cal.single["append"], h.cal.single["remember"],
		h.cal.single["write"], h.cal.single["daily-log"], h.cal.sync, h.cal.rebuild, h.cal.embedPerChunk, h.cal.serveCmd)
	for i, op := range schedule(s) {
		r := &round{n: i, op: op, rng: rand.New(rand.NewPCG(s.seed, uint64(i)+1))}
		h.play(r)
		if h.failedRounds >= 25 {
			t.Errorf("stopping after %d failing rounds", h.failedRounds)
			break
		}
	}
	h.summary(time.Since(start))
}

// calibration is how long each operation takes on this machine, measured
// in setup; kill times are drawn within these.
type calibration struct {
	ingestPerTurn time.Duration
	single        map[string]time.Duration // one append, remember, write, daily-log
	sync          time.Duration            // 200 new pages
	rebuild       time.Duration
	embedPerChunk time.Duration
	serveCmd      time.Duration // one remember through the launcher and the server
}

// opStats counts the kills of one operation.
type opStats struct {
	kills, mid, after, failures int
}

// round is one kill: the operation, its numbers and what it touched.
type round struct {
	n      int
	op     string
	rng    *rand.Rand
	window time.Duration // the kill time is drawn in [0, window]
	delay  time.Duration // when the kill was sent, after the start
	mid    bool          // the kill found the work running
	failed bool

	acked, killed int      // writes that exited 0, writes killed
	touched       []string // sessions written to: appended to after the kill
	sources       []source // ingested files whose turns must each be there once
	remove        []string // globs in sessions/ removed after the checks (bounds the home)
	note          string
}

// source is a generated transcript: turns with ids prefix-t000000 on.
type source struct {
	path   string
	prefix string
	turns  int
}

type harness struct {
	t    *testing.T
	s    settings
	home string
	work string // generated sources
	cal  calibration

	mu       sync.Mutex
	acked    map[string]string // marker → the write, for writes that exited 0
	unacked  map[string]string // marker → the write, for killed writes (at most once)
	reported map[string]bool   // failures already reported, reported once

	stats        map[string]*opStats
	failedRounds int
	tornRepaired int // torn tails the next command cut off
	notes        []string
}

func newHarness(t *testing.T, s settings) *harness {
	h := &harness{t: t, s: s, home: filepath.Join(t.TempDir(), "home"), work: t.TempDir(),
		acked: map[string]string{}, unacked: map[string]string{}, reported: map[string]bool{},
		stats: map[string]*opStats{}}
	for _, op := range opNames {
		h.stats[op] = &opStats{}
	}
	return h
}

// proc is a running memhost command.
type proc struct {
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	done      chan struct{}
	err       error
}

// commandTimeout ends a command that hangs (a deadlock after a kill is a
// failure too, not a stuck test).
const commandTimeout = 3 * time.Minute

// start runs one of the built binaries on the home. The caller's MEMHOST_
// variables are left out: the harness's own would only draw warnings.
func (h *harness) start(bin string, env []string, args ...string) *proc {
	cmd := exec.Command(filepath.Join(binDir, bin), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEMHOST_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// No server on demand (server.autostart): the harness starts and kills
	// the servers it means, and a home's is gone when its test ends.
	cmd.Env = append(append(cmd.Env, "MEMHOST_HOME="+h.home, "MEMHOST_SERVER_AUTOSTART=false"), env...)
	p := &proc{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &p.out, &p.errb
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("starting %s %v: %v", bin, args, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p
}

// wait waits for p, killing it after commandTimeout; hung says so.
func (p *proc) wait() (hung bool) {
	select {
	case <-p.done:
		return false
	case <-time.After(commandTimeout):
		p.cmd.Process.Kill()
		<-p.done
		return true
	}
}

func (p *proc) killedBySignal() bool {
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

func (p *proc) String() string {
	return fmt.Sprintf("%s: %v\nstdout: %s\nstderr: %s", strings.Join(p.cmd.Args, " "), p.err, p.out.String(), p.errb.String())
}

// must runs a command that nobody kills; it has to succeed (exit 0).
// memhost-core runs in-process unless a server runs for the home.
func (h *harness) must(r *round, env []string, args ...string) (*proc, bool) {
	p := h.start("memhost-core", env, args...)
	if p.wait() {
		h.fail(r, "hung", "%s hung for %v", strings.Join(args, " "), commandTimeout)
		return p, false
	}
	if p.err != nil {
		h.fail(r, "", "a command nobody killed failed: %s", p)
		return p, false
	}
	return p, true
}

// fail reports a failure with what reproduces it; a failure with a key is
// reported once in the run (a duplicate stays a duplicate).
func (h *harness) fail(r *round, key, format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if key != "" {
		if h.reported[key] {
			return
		}
		h.reported[key] = true
	}
	msg := fmt.Sprintf(format, args...)
	if r == nil {
		h.t.Fatalf("setup: %s", msg)
	}
	if !r.failed {
		r.failed = true
		h.failedRounds++
		if st := h.stats[r.op]; st != nil { // nil: the writes of setup
			st.failures++
		}
	}
	h.t.Errorf("round %d, op %s, seed %d, kill at %v of a %v window: %s\n  reproduce: MEMHOST_CRASH_SEED=%d MEMHOST_CRASH_KILLS=%d MEMHOST_CRASH_OPS=%s go test -tags sqlite_fts5 -run TestCrash -v ./internal/crashtest",
		r.n, r.op, h.s.seed, r.delay.Round(time.Millisecond), r.window.Round(time.Millisecond), msg,
		h.s.seed, h.s.kills, strings.Join(h.s.ops, ","))
}

// marker is the unique text of one write, so it can be counted on disk.
// Fixed width: no marker is the prefix of another.
func marker(kind byte, n int, writer string, i int) string {
	return fmt.Sprintf("crashmark-%c%04d-%s-n%02d", kind, n, writer, i)
}

var markerRE = regexp.MustCompile(`crashmark-[rc]\d{4}-(?:w\d|fu)-n\d{2}`)

// settle records the outcome of one write: exit 0 acknowledges it, a
// kill leaves it unacknowledged (on disk once or not at all), anything
// else is a failure.
func (h *harness) settle(r *round, m, what string, p *proc, hung bool) {
	h.mu.Lock()
	switch {
	case hung:
		h.mu.Unlock()
		h.fail(r, "", "%s hung for %v", what, commandTimeout)
		return
	case p.err == nil:
		h.acked[m] = fmt.Sprintf("%s (round %d, %s)", what, r.n, r.op)
		r.acked++
	case p.killedBySignal():
		h.unacked[m] = fmt.Sprintf("%s (round %d, %s, killed)", what, r.n, r.op)
		r.killed++
		r.mid = true
	default:
		h.mu.Unlock()
		h.fail(r, "", "a write nobody killed failed: %s", p)
		return
	}
	if strings.Contains(p.errb.String()+p.out.String(), "cut off an incomplete last line") {
		h.tornRepaired++
	}
	h.mu.Unlock()
}

// draw picks the kill time in [0, window].
func (r *round) draw(window time.Duration) {
	r.window = window
	r.delay = time.Duration(r.rng.Int64N(int64(window) + 1))
}

// killAfter kills p, started at began, at the round's kill time unless it
// finished before; it reports whether the command finished (then it must
// have succeeded) and in how long.
func (h *harness) killAfter(r *round, p *proc, began time.Time) (finished bool, took time.Duration) {
	select {
	case <-p.done:
		took = time.Since(began)
	case <-time.After(r.delay):
		p.cmd.Process.Kill()
		<-p.done
	}
	if p.killedBySignal() {
		r.mid = true
		return false, 0
	}
	if p.err != nil {
		h.fail(r, "", "the command failed before the kill: %s", p)
	}
	return true, took
}

// burstSpec is a burst of short writes: writers run each commands one
// after the other, in parallel with each other.
type burstSpec struct {
	bin           string
	writers, each int
	args          func(w, i int, m string) []string
	// server, when set, is what the kill hits: the writers go on (through
	// the launcher, which runs a command again in-process when the server
	// dies under it) and every write must succeed.
	server *proc
}

// burst runs the writers and, at the kill time, kills every command still
// running (or the server).
func (h *harness) burst(r *round, b burstSpec) {
	var mu sync.Mutex
	running := map[*proc]bool{}
	stopped := false
	var wg sync.WaitGroup
	for w := range b.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range b.each {
				m := marker('r', r.n, fmt.Sprintf("w%d", w), i)
				args := b.args(w, i, m)
				mu.Lock()
				if stopped {
					mu.Unlock()
					return
				}
				p := h.start(b.bin, nil, args...)
				running[p] = true
				mu.Unlock()
				hung := p.wait()
				mu.Lock()
				delete(running, p)
				mu.Unlock()
				h.settle(r, m, args[0]+" "+m, p, hung)
			}
		}()
	}
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(r.delay):
		mu.Lock()
		if b.server != nil {
			b.server.cmd.Process.Kill()
			r.mid = true // the writers had not finished: they were using it
		} else {
			stopped = true
			for p := range running {
				p.cmd.Process.Kill()
			}
		}
		mu.Unlock()
	}
	<-all
	if b.server != nil {
		b.server.cmd.Process.Kill() // when the writers finished first
		b.server.wait()
	}
}

// setup makes the home: base pages and a base transcript, and measures
// each operation.
func (h *harness) setup() {
	if _, ok := h.must(nil, nil, "init"); !ok {
		return
	}
	rng := rand.New(rand.NewPCG(h.s.seed, 1<<63))
	for i := range 40 {
		h.writePage(rng, filepath.Join("knowledge", "base", fmt.Sprintf("base-%02d.md", i)))
	}

	// One of each short write, three times: the median is the measure.
	h.cal.single = map[string]time.Duration{}
	c := &round{n: 0, op: "setup"}
	for _, op := range []string{"append", "remember", "write", "daily-log"} {
		var ds []time.Duration
		for i := range 3 {
			m := marker('c', 0, "w0", len(h.acked))
			t0 := time.Now()
			p, _ := h.must(nil, nil, shortWrite(op, "crash-app", 0, i, m)...)
			ds = append(ds, time.Since(t0))
			h.settle(c, m, op+" "+m, p, false)
		}
		slices.Sort(ds)
		h.cal.single[op] = ds[1]
	}

	// An ingest's time per turn, without what any command takes to start
	// (about a short write's time).
	base := h.source(rng, "base", "base", 3000)
	t0 := time.Now()
	h.must(nil, nil, "session", "ingest", base.path)
	h.cal.ingestPerTurn = max(time.Since(t0)-h.cal.single["append"], time.Millisecond) / time.Duration(base.turns)
	h.checkSources(nil, []source{base})

	pending := h.pending(nil)
	t0 = time.Now()
	h.must(nil, embedEnv, "embed")
	h.cal.embedPerChunk = time.Since(t0) / time.Duration(max(pending, 1))

	h.writeBulk(rng, 0)
	t0 = time.Now()
	h.must(nil, nil, "sync")
	h.cal.sync = time.Since(t0)
	t0 = time.Now()
	h.must(nil, nil, "rebuild")
	h.cal.rebuild = time.Since(t0)

	srv := h.startServer(nil)
	var ds []time.Duration
	for i := range 4 {
		m := marker('c', 1, "w0", i)
		t0 := time.Now()
		p := h.start("memhost", nil, shortWrite("remember", "", 0, i, m)...)
		hung := p.wait()
		ds = append(ds, time.Since(t0))
		h.settle(c, m, "remember "+m, p, hung)
	}
	h.must(nil, nil, "serve", "stop")
	srv.wait()
	slices.Sort(ds)
	h.cal.serveCmd = ds[1]
	h.check(c)
}

// embedEnv chooses the hello plugin for embed only: the other commands
// stay keyword-only and start no plugin.
var embedEnv = []string{"MEMHOST_MEMORY_EMBEDDING_PLUGIN=hello"}

// shortWrite is the command of one short write with marker m.
func shortWrite(op, session string, w, i int, m string) []string {
	text := "crash note " + m + " about the kettle"
	switch op {
	case "append":
		return []string{"session", "append", "--session", session, "--role", []string{"user", "assistant"}[(w+i)%2], text}
	case "remember":
		return []string{"remember", "--category", "reference", "--file", "crash", text}
	case "write":
		return []string{"write", "knowledge/crash-write.md", text}
	case "daily-log":
		return []string{"daily-log", text}
	}
	panic("no short write " + op)
}

// pending is the number of chunks waiting for a hello vector.
func (h *harness) pending(r *round) int {
	p, ok := h.must(r, embedEnv, "status", "--json")
	if !ok {
		return 0
	}
	var st struct{ Pending int }
	if err := json.Unmarshal(p.out.Bytes(), &st); err != nil {
		h.t.Fatalf("status --json: %v: %s", err, p.out.String())
	}
	return st.Pending
}

// startServer runs memhost serve in the foreground and waits until it
// answers.
func (h *harness) startServer(r *round) *proc {
	srv := h.start("memhost-core", nil, "serve", "--listen", "")
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-srv.done:
			h.fail(r, "", "memhost serve exited: %s", srv)
			return srv
		default:
		}
		p := h.start("memhost-core", nil, "serve", "status", "--json")
		p.wait()
		var in struct{ PID int }
		if p.err == nil && json.Unmarshal(p.out.Bytes(), &in) == nil && in.PID == srv.cmd.Process.Pid {
			return srv
		}
	}
	srv.cmd.Process.Kill()
	srv.wait()
	h.fail(r, "", "memhost serve did not answer within 30 s: %s", srv)
	return srv
}

var words = strings.Fields(`kettle descaling sarah phone meeting notes lunch project deadline memory index
search river mountain invoice garden bicycle tuesday library window coffee train ticket passport dentist
recipe lemon budget quarterly review onboarding laptop charger umbrella birthday present`)

func sentence(rng *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = words[rng.IntN(len(words))]
	}
	return strings.Join(w, " ")
}

// writePage writes a page of a few sections behind memhost's back.
func (h *harness) writePage(rng *rand.Rand, rel string) {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", sentence(rng, 3))
	for range 3 + rng.IntN(4) {
		fmt.Fprintf(&b, "## %s\n\n%s.\n\n", sentence(rng, 2), sentence(rng, 30+rng.IntN(60)))
	}
	path := filepath.Join(h.home, "notebook", rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// writeBulk replaces the bulk pages with 200 new ones: work for a sync.
func (h *harness) writeBulk(rng *rand.Rand, n int) {
	dir := filepath.Join(h.home, "notebook", "knowledge", "bulk")
	if err := os.RemoveAll(dir); err != nil {
		h.t.Fatal(err)
	}
	for i := range 200 {
		h.writePage(rng, filepath.Join("knowledge", "bulk", fmt.Sprintf("bulk-%04d-%03d.md", n, i)))
	}
}

// source generates a transcript in memhost's format with turns ids
// prefix-t000000 on, in a file named after name (the session's name).
func (h *harness) source(rng *rand.Rand, name, prefix string, turns int) source {
	path := filepath.Join(h.work, name+".jsonl")
	f, err := os.Create(path)
	if err != nil {
		h.t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := range turns {
		enc.Encode(map[string]string{
			"id": fmt.Sprintf("%s-t%06d", prefix, i), "type": "message", "role": []string{"user", "assistant"}[i%2],
			"content":   sentence(rng, 5+rng.IntN(40)),
			"timestamp": time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC).Format(time.RFC3339),
		})
	}
	if err := w.Flush(); err != nil {
		h.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		h.t.Fatal(err)
	}
	return source{path: path, prefix: prefix, turns: turns}
}

// play runs one round: the operation with its kill, then the checks.
func (h *harness) play(r *round) {
	began := time.Now()
	st := h.stats[r.op]
	st.kills++
	switch r.op {
	case "ingest":
		name := fmt.Sprintf("ingest-r%04d", r.n)
		src := h.source(r.rng, name, fmt.Sprintf("r%04d", r.n), 20000+r.rng.IntN(30001))
		r.sources, r.remove = []source{src}, []string{name + "*.jsonl"}
		r.draw(time.Duration(float64(src.turns) * float64(h.cal.ingestPerTurn) * 1.1))
		t0 := time.Now()
		p := h.start("memhost-core", nil, "session", "ingest", src.path)
		finished, took := h.killAfter(r, p, t0)
		if finished {
			// It ran faster than measured (a machine shared with other
			// work varies): aim the next kills at what it took.
			h.cal.ingestPerTurn = took / time.Duration(src.turns)
		} else {
			// Not acknowledged: importing again must restore every turn.
			if p, ok := h.must(r, nil, "session", "ingest", src.path); ok && strings.Contains(p.out.String()+p.errb.String(), "cut off an incomplete last line") {
				h.tornRepaired++
			}
		}
		r.note = fmt.Sprintf("%d turns", src.turns)
	case "append", "remember", "write", "daily-log":
		const writers, each = 2, 8
		r.draw(time.Duration(float64(h.cal.single[r.op]*each) * 1.1))
		if r.op == "append" {
			r.touched = []string{"crash-app"}
		}
		h.burst(r, burstSpec{bin: "memhost-core", writers: writers, each: each,
			args: func(w, i int, m string) []string { return shortWrite(r.op, "crash-app", w, i, m) }})
		r.note = fmt.Sprintf("%d acknowledged, %d killed", r.acked, r.killed)
	case "sync":
		h.writeBulk(r.rng, r.n)
		r.draw(time.Duration(float64(h.cal.sync) * 1.1))
		if finished, took := h.killAfter(r, h.start("memhost-core", nil, "sync"), time.Now()); finished {
			h.cal.sync = took
		}
	case "rebuild":
		r.draw(time.Duration(float64(h.cal.rebuild) * 1.1))
		if finished, took := h.killAfter(r, h.start("memhost-core", nil, "rebuild"), time.Now()); finished {
			h.cal.rebuild = took
		}
	case "embed":
		// Fresh chunks to embed: a transcript ingested (and acknowledged)
		// first, removed after the checks.
		name := fmt.Sprintf("embedsrc-r%04d", r.n)
		src := h.source(r.rng, name, fmt.Sprintf("e%04d", r.n), 3000)
		r.sources, r.remove = []source{src}, []string{name + "*.jsonl"}
		if _, ok := h.must(r, nil, "session", "ingest", src.path); !ok {
			return
		}
		pending := h.pending(r)
		r.draw(time.Duration(float64(pending) * float64(h.cal.embedPerChunk) * 1.1))
		if finished, took := h.killAfter(r, h.start("memhost-core", embedEnv, "embed"), time.Now()); finished {
			h.cal.embedPerChunk = took / time.Duration(max(pending, 1))
		}
		r.note = fmt.Sprintf("%d chunks pending", pending)
	case "serve":
		const writers, each = 3, 8
		r.touched = []string{"crash-srv"}
		srv := h.startServer(r)
		if r.failed {
			return
		}
		r.draw(time.Duration(float64(h.cal.serveCmd*each) * 1.1))
		// Every kind of short write, each writer in its own order: the
		// kill lands in any of them, and the launcher's re-run of the one
		// it interrupted must not store it twice.
		kinds := []string{"append", "remember", "write", "daily-log"}
		h.burst(r, burstSpec{bin: "memhost", writers: writers, each: each, server: srv,
			args: func(w, i int, m string) []string {
				return shortWrite(kinds[(w+i)%len(kinds)], "crash-srv", w, i, m)
			}})
		r.note = fmt.Sprintf("%d writes through or after the killed server", r.acked)
	}
	if r.mid {
		st.mid++
	} else {
		st.after++
	}
	h.check(r)
	when := "after it finished"
	if r.mid {
		when = "mid-operation"
	}
	h.t.Logf("round %3d %-9s kill at %6v of %6v: %s; %s (%v)", r.n, r.op, r.delay.Round(time.Millisecond), r.window.Round(time.Millisecond), when, r.note, time.Since(began).Round(10*time.Millisecond))
	for _, g := range r.remove {
		matches, _ := filepath.Glob(filepath.Join(h.home, "sessions", g))
		for _, m := range matches {
			os.Remove(m)
		}
	}
}

// check runs the checks that must hold after every kill.
func (h *harness) check(r *round) {
	// The next command to touch a transcript repairs a torn tail: append
	// to each session the round wrote to (an ingest was run again above).
	for i, s := range r.touched {
		m := marker('r', r.n, "fu", i)
		p, ok := h.must(r, nil, shortWrite("append", s, 0, i, m)...)
		if !ok {
			return
		}
		h.settle(r, m, "follow-up append "+m, p, false)
	}
	h.checkFiles(r)
	h.checkSources(r, r.sources)

	// The index agrees with the files after a sync.
	if _, ok := h.must(r, nil, "sync"); !ok {
		return
	}
	rep, ok := h.health(r, "health", "--json")
	if !ok {
		return
	}
	for _, name := range []string{"database", "index-drift", "pages", "transcripts"} {
		c, found := rep.check(name)
		if !found || c.Status != "pass" || len(c.Metadata) > 0 {
			h.fail(r, "", "after sync, health check %q: %s %s %v", name, c.Status, c.Message, c.Metadata)
		}
	}

	// Nothing left behind once health --repair ran.
	rep, ok = h.health(r, "health", "--repair", "--json")
	if !ok {
		return
	}
	if c, _ := rep.check("leaked-files"); c.Status != "pass" {
		h.fail(r, "", "leaked files after health --repair: %s %s", c.Status, c.Message)
	}
	for _, s := range h.strays() {
		h.fail(r, "stray "+s, "a file left behind after health --repair: %s", s)
	}
	if r.op == "embed" {
		h.checkPlugins(r)
	}
}

// report is what health --json prints.
type report struct {
	Overall string        `json:"overall"`
	Checks  []healthCheck `json:"checks"`
	Repairs []string      `json:"repairs"`
}

type healthCheck struct {
	Name     string         `json:"name"`
	Status   string         `json:"status"`
	Message  string         `json:"message"`
	Metadata map[string]any `json:"metadata"`
}

func (rep report) check(name string) (healthCheck, bool) {
	for _, c := range rep.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return healthCheck{Name: name, Status: "missing"}, false
}

// health runs health, which exits 1 or 2 when a check warns or fails:
// the checks are judged one by one, from the JSON.
func (h *harness) health(r *round, args ...string) (report, bool) {
	p := h.start("memhost-core", nil, args...)
	if p.wait() {
		h.fail(r, "", "%s hung", strings.Join(args, " "))
		return report{}, false
	}
	var rep report
	if err := json.Unmarshal(p.out.Bytes(), &rep); err != nil || len(rep.Checks) == 0 {
		h.fail(r, "", "%s printed no report (%v): %s", strings.Join(args, " "), err, p)
		return report{}, false
	}
	return rep, true
}

// checkFiles reads every transcript and page: no transcript ends in part
// of a line, every line of every .jsonl file is a JSON object, and each
// acknowledged write is there exactly once (a killed one at most once).
func (h *harness) checkFiles(r *round) {
	counts := map[string]int{}
	sessions := filepath.Join(h.home, "sessions")
	entries, err := os.ReadDir(sessions)
	if err != nil {
		h.fail(r, "", "reading sessions/: %v", err)
		return
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		rel := "sessions/" + e.Name()
		data, err := os.ReadFile(filepath.Join(sessions, e.Name()))
		if err != nil {
			h.fail(r, "", "reading %s: %v", rel, err)
			continue
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			h.fail(r, "torn "+rel+strconv.Itoa(len(data)), "%s ends in part of a line after the next command wrote to it: %.200q",
				rel, data[bytes.LastIndexByte(data, '\n')+1:])
		}
		for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			var t struct {
				ID      string `json:"id"`
				Content string `json:"content"`
			}
			if err := json.Unmarshal(line, &t); err != nil {
				h.fail(r, fmt.Sprintf("json %s:%d:%d", rel, i+1, len(line)), "%s:%d is not a JSON object (%v): %.200q", rel, i+1, err, line)
				continue
			}
			if !strings.HasPrefix(e.Name(), ".") { // the torn-lines file keeps cut-off turns
				for _, m := range markerRE.FindAllString(t.Content, -1) {
					counts[m]++
				}
			}
		}
	}
	filepath.WalkDir(filepath.Join(h.home, "notebook"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			h.fail(r, "", "reading %s: %v", path, err)
			return nil
		}
		for _, m := range markerRE.FindAllString(string(data), -1) {
			counts[m]++
		}
		return nil
	})
	h.mu.Lock()
	acked, unacked := clone(h.acked), clone(h.unacked)
	h.mu.Unlock()
	for _, m := range sortedKeys(acked) {
		if counts[m] != 1 {
			h.fail(r, "count "+m, "acknowledged write %s is on disk %d times, want once", acked[m], counts[m])
		}
	}
	for _, m := range sortedKeys(unacked) {
		if counts[m] > 1 {
			h.fail(r, "count "+m, "killed write %s is on disk %d times, want at most once", unacked[m], counts[m])
		}
	}
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkSources checks that every turn of each ingested source is in the
// transcripts exactly once, in whichever session it went to.
func (h *harness) checkSources(r *round, srcs []source) {
	for _, src := range srcs {
		seen := make([]int, src.turns)
		var holders []string
		paths, _ := filepath.Glob(filepath.Join(h.home, "sessions", "*.jsonl"))
		for _, path := range paths {
			if strings.HasPrefix(filepath.Base(path), ".") {
				continue
			}
			f, err := os.Open(path)
			if err != nil {
				h.fail(r, "", "%v", err)
				continue
			}
			held := false
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				var t struct {
					ID string `json:"id"`
				}
				if json.Unmarshal(sc.Bytes(), &t) != nil {
					continue // reported by checkFiles
				}
				rest, ok := strings.CutPrefix(t.ID, src.prefix+"-t")
				if !ok {
					continue
				}
				if i, err := strconv.Atoi(rest); err == nil && i < src.turns {
					seen[i]++
					held = true
				}
			}
			f.Close()
			if held {
				holders = append(holders, filepath.Base(path))
			}
		}
		var lost, doubled []string
		for i, n := range seen {
			id := fmt.Sprintf("%s-t%06d", src.prefix, i)
			switch {
			case n == 0:
				lost = append(lost, id)
			case n > 1:
				doubled = append(doubled, fmt.Sprintf("%s ×%d", id, n))
			}
		}
		if len(lost) > 0 || len(doubled) > 0 {
			h.fail(r, "", "ingested %s (%d turns): %d turns lost (first %v), %d duplicated (first %v); in %v",
				filepath.Base(src.path), src.turns, len(lost), first(lost, 3), len(doubled), first(doubled, 3), holders)
		}
		if len(holders) > 1 && r != nil {
			h.notes = append(h.notes, fmt.Sprintf("round %d: the turns of %s went to %d sessions: %v", r.n, filepath.Base(src.path), len(holders), holders))
		}
	}
}

func first[T any](s []T, n int) []T { return s[:min(n, len(s))] }

// strays lists the files of the home that no memhost file name explains:
// a temporary file, a rebuild's copy or a -wal of a removed database left
// by a killed process.
func (h *harness) strays() []string {
	known := map[string]bool{
		"config.yaml": true, "health/latest-report.md": true,
		"brain/memory.db": true, "brain/memory.db-wal": true, "brain/memory.db-shm": true, "brain/memory.db.lock": true,
		"brain/notebook.lock": true, "brain/embed.lock": true, "brain/config.lock": true,
		// A server's files; a killed one leaves its socket and state,
		// which the next server replaces.
		"brain/serve.lock": true, "brain/serve.json": true, "brain/serve.log": true, "brain/serve.sock": true, "brain/serve.token": true,
		"cache/embeddings.db": true, "cache/embeddings.db-wal": true, "cache/embeddings.db-shm": true,
		"sessions/.sources.jsonl": true, "sessions/.torn-lines.jsonl": true, "sessions/.flush-receipts.jsonl": true,
		"sessions/.private.jsonl": true,
		// Health's secrets check: what it found per file, by size and mtime.
		"brain/secrets-scan.json": true,
	}
	var out []string
	filepath.WalkDir(h.home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(h.home, path)
		rel = filepath.ToSlash(rel)
		base := d.Name()
		switch {
		case known[rel]:
		case strings.HasPrefix(rel, "notebook/") && strings.HasSuffix(base, ".md") && !strings.HasPrefix(base, "."):
		case strings.HasPrefix(rel, "sessions/") && strings.Count(rel, "/") == 1 && strings.HasSuffix(base, ".jsonl") && !strings.HasPrefix(base, "."):
		// The request journal: a record per write, the sweep's marker,
		// and a killed write's temporary record, all swept by the
		// journal (host/requests).
		case strings.HasPrefix(rel, "brain/requests/"):
		// The health reports kept (health/history), one a check, pruned
		// by age: a killed check's temporary file would be hidden.
		case strings.HasPrefix(rel, "health/history/") && strings.HasSuffix(base, ".json") && !strings.HasPrefix(base, "."):
		default:
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// checkPlugins waits for the hello plugin of a killed embed to notice
// that its parent is gone and exit (it checks every second).
func (h *harness) checkPlugins(r *round) {
	plugin := filepath.Join(binDir, "memhost-embeddings-hello")
	var left []int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left = left[:0]
		procs, _ := filepath.Glob("/proc/[0-9]*/exe")
		for _, p := range procs {
			if exe, err := os.Readlink(p); err == nil && exe == plugin {
				pid, _ := strconv.Atoi(strings.Split(p, "/")[2])
				left = append(left, pid)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		h.fail(r, "", "the hello plugin still runs 5 s after embed was killed: pids %v", left)
	}
}

// summary prints the figures of the run.
func (h *harness) summary(wall time.Duration) {
	var b strings.Builder
	fmt.Fprintf(&b, "crash summary (seed %d, %d kills, %v):\n", h.s.seed, h.s.kills, wall.Round(time.Second))
	fmt.Fprintf(&b, "  %-10s %6s %6s %6s %9s\n", "op", "kills", "mid", "after", "failures")
	var tot opStats
	for _, op := range opNames {
		st := h.stats[op]
		if st.kills == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %-10s %6d %6d %6d %9d\n", op, st.kills, st.mid, st.after, st.failures)
		tot.kills, tot.mid, tot.after, tot.failures = tot.kills+st.kills, tot.mid+st.mid, tot.after+st.after, tot.failures+st.failures
	}
	fmt.Fprintf(&b, "  %-10s %6d %6d %6d %9d\n", "total", tot.kills, tot.mid, tot.after, tot.failures)
	fmt.Fprintf(&b, "  acknowledged writes checked: %d; killed writes: %d; torn tails cut off by the next command: %d\n",
		len(h.acked), len(h.unacked), h.tornRepaired)
	for _, n := range h.notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	h.t.Log(b.String())
}
