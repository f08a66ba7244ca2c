package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// options are the command line's.
type options struct {
	Days      int
	Seed      int64
	Out       string
	Bin       string
	Bench     string
	Model     string  // a GGUF file: the local provider with it; "": the hello plugin
	KillRate  float64 // chance a day that the server is killed during a call
	DiskFull  bool    // fill A's disk once (needs root: a tmpfs of its own)
	Start     time.Time
	MaxTurns  int // turns of a conversation replayed, at most
	Questions int // conversation questions per month, at most (0: every one due)
}

// sim is one simulated life: two machines sharing a remote, an agent on
// the first, a person editing its pages, and what was acknowledged.
type sim struct {
	opt     options
	out     string
	memhost string
	rng     *rand.Rand
	offset  string    // MEMHOST_CLOCK_OFFSET of the day
	now     time.Time // the simulated day's start (09:00 UTC)
	day     int
	a, b    *machine
	remote  string
	corpus  *corpus
	next    int // the next conversation of the corpus
	// sessions counts the agent's sessions: each names its transcript.
	sessions int
	stats    *stats
	ledger   *ledger
	facts    *factBook
	convOf   map[string]string // memhost session → conversation ID
	diskDir  string            // A's tmpfs, when DiskFull
	full     bool              // the disk is full now: failures are expected
	events   []string          // what happened, for the report
	// lastPhrase is a few words of the last conversation replayed (phrase).
	lastPhrase string
}

func (s *sim) fatal(err error) {
	s.a.stopServerQuietly()
	fmt.Fprintf(os.Stderr, "memhost-sim: day %d (%s): %v\n", s.day+1, s.now.Format("2006-01-02"), err)
	if s.diskDir != "" {
		syscall.Unmount(s.diskDir, syscall.MNT_DETACH)
	}
	os.Exit(1)
}

func (m *machine) stopServerQuietly() {
	if m != nil && m.server != nil {
		_ = m.server.Process.Signal(syscall.SIGKILL)
	}
}

func (s *sim) event(format string, args ...any) {
	e := fmt.Sprintf("%s: ", s.now.Format("2006-01-02")) + fmt.Sprintf(format, args...)
	s.events = append(s.events, e)
	fmt.Fprintln(os.Stderr, "  "+e)
}

// setDay moves the calendar clock to day d, 09:00 UTC: every memhost
// process started from now on runs with it.
func (s *sim) setDay(d int) {
	s.day = d
	s.now = s.opt.Start.AddDate(0, 0, d).Add(9 * time.Hour)
	s.offset = time.Until(s.now).Round(time.Second).String()
}

// clock is the calendar clock memhost reads now: the day's offset added
// to the wall clock.
func (s *sim) clock() time.Time {
	d, _ := time.ParseDuration(s.offset)
	return time.Now().Add(d)
}

func newSim(opt options) *sim {
	s := &sim{opt: opt, out: opt.Out, rng: rand.New(rand.NewSource(opt.Seed)),
		memhost: filepath.Join(opt.Bin, "memhost"), stats: newStats(), ledger: newLedger(),
		facts: newFactBook(), convOf: map[string]string{}}
	return s
}

// setup makes the two homes, the shared remote and the corpus.
func (s *sim) setup() {
	s.setDay(0)
	if err := os.MkdirAll(filepath.Join(s.out, "transcripts"), 0o755); err != nil {
		s.fatal(err)
	}
	homeA := filepath.Join(s.out, "a")
	if s.opt.DiskFull {
		s.diskDir = filepath.Join(s.out, "a-disk")
		if err := os.MkdirAll(s.diskDir, 0o755); err != nil {
			s.fatal(err)
		}
		if err := syscall.Mount("tmpfs", s.diskDir, "tmpfs", 0, "size=4g"); err != nil {
			s.event("no disk-full day: a tmpfs could not be mounted (%v)", err)
			s.opt.DiskFull, s.diskDir = false, ""
		} else {
			homeA = filepath.Join(s.diskDir, "a")
		}
	}
	s.a = &machine{name: "a", home: homeA, sim: s}
	s.b = &machine{name: "b", home: filepath.Join(s.out, "b"), sim: s}
	s.remote = filepath.Join(s.out, "remote.git")
	if out, err := gitCmd("", "init", "-q", "--bare", "-b", "main", s.remote); err != nil {
		s.fatal(fmt.Errorf("git init: %v: %s", err, out))
	}
	for _, m := range []*machine{s.a, s.b} {
		m.must("init", "", "init")
		cfg := "memory:\n  compaction:\n    contextWindow: 16000\n    reserveTokens: 1000\n    softThresholdTokens: 3000\nfederation:\n  pushIntervalSec: 3600\n"
		if err := os.WriteFile(filepath.Join(m.home, "config.yaml"), []byte(cfg), 0o644); err != nil {
			s.fatal(err)
		}
		if s.opt.Model == "" {
			m.must("plugins", "", "plugins", "use", "hello")
		} else {
			m.must("models", "", "models", "pull", s.opt.Model)
		}
		m.must("git", "", "git", "init", "--remote", s.remote)
	}
	// The sessions a year needs, and a margin for days of five.
	c, err := loadCorpus(s.opt.Bench, s.opt.Days*3+20, s.rng)
	if err != nil {
		s.fatal(err)
	}
	s.corpus = c
}

// run lives the days.
func (s *sim) run() {
	s.setup()
	killDay := map[int]bool{}
	for d := 1; d < s.opt.Days; d++ {
		killDay[d] = s.rng.Float64() < s.opt.KillRate
	}
	fullDay := -1
	if s.opt.DiskFull {
		fullDay = s.opt.Days * 2 / 5
	}
	pluginDay := s.opt.Days / 2
	for d := 0; d < s.opt.Days; d++ {
		s.setDay(d)
		fmt.Fprintf(os.Stderr, "day %d/%d %s\n", d+1, s.opt.Days, s.now.Format("2006-01-02 Mon"))
		s.a.startServer()
		if d == fullDay {
			s.diskFullDay()
		} else {
			s.liveDay(killDay[d], d == pluginDay)
		}
		s.a.ensureServer()
		took, _ := s.a.night()
		s.stats.month.Night += took
		s.a.stopServer(false)
		if last := s.now.AddDate(0, 0, 1); last.Month() != s.now.Month() || d == s.opt.Days-1 {
			s.endOfMonth()
		}
	}
	s.finish()
}

// liveDay is an ordinary day: the person's edits, the agent's sessions with
// a daily log and remembered things between them, the changing facts,
// the second machine's writes, a sync of each, and the questions due.
func (s *sim) liveDay(kill, killPlugin bool) {
	if s.rng.Float64() < 0.3 {
		s.personEdit()
	}
	n := 1 + s.rng.Intn(5)
	killAt := -1
	if kill {
		killAt = s.rng.Intn(n)
	}
	for k := 0; k < n; k++ {
		s.session(k, k == killAt, killPlugin && k == 0)
		if s.rng.Float64() < 0.6 {
			s.dailyLog(s.a)
		}
	}
	if s.rng.Float64() < 0.5 {
		s.remember(s.a)
	}
	if s.rng.Float64() < 0.2 {
		s.changeFact()
	}
	if s.day%3 == 2 {
		s.otherMachine()
	}
	s.a.call("sync", "", "sync", "--remote")
	if s.now.Weekday() == time.Monday && s.day >= 7 {
		s.weekly()
	}
	s.askDue()
}

// weekly rolls up last week and learns skills, as a scheduled job would.
func (s *sim) weekly() {
	week := s.now.AddDate(0, 0, -7)
	y, w := week.ISOWeek()
	s.a.call("rollup", "", "rollup", "--week", fmt.Sprintf("%d-W%02d", y, w))
	var learned struct {
		Skills []struct {
			Slug   string `json:"slug"`
			Status string `json:"status"`
		} `json:"skills"`
	}
	if err := s.a.jsonCall("skills learn", &learned, "skills", "learn"); err != nil {
		s.failure(err)
		return
	}
	for _, sk := range learned.Skills {
		if sk.Status == "proposed" {
			s.a.call("skills accept", "", "skills", "accept", sk.Slug)
			s.event("skill %s accepted", sk.Slug)
		}
	}
}

// otherMachine is the second machine's turn: a daily log entry, something
// remembered, a short chat, then a sync.
func (s *sim) otherMachine() {
	s.dailyLog(s.b)
	if s.rng.Float64() < 0.5 {
		s.remember(s.b)
	}
	sid := fmt.Sprintf("b-%s", s.now.Format("20060102"))
	for i, role := range []string{"user", "assistant"} {
		code := s.ledger.code("b")
		text := fmt.Sprintf("%s on the desktop, %s (%s)", []string{"Checking the plan", "Noted the plan"}[i], pick(s.rng, topics), code)
		r := s.b.call("session append", "", "session", "append", "--session", sid, "--role", role, text)
		if s.ack(r) {
			s.ledger.add(write{Kind: "turn-b", Machine: "b", Day: s.day, Text: text, Full: text, Code: code, Session: sid})
		}
	}
	s.b.call("sync", "", "sync", "--remote")
}

// endOfMonth records the month: sizes, the server's peak memory, health,
// the facts' and the notebook's recall; on the first of a month it rolls
// up the month before and prunes logs older than 90 days.
func (s *sim) endOfMonth() {
	s.setDay(s.day) // same day, later: the month's last evening
	s.a.startServer()
	defer s.a.stopServer(false)
	month := s.now.Format("2006-01")
	s.a.call("rollup", "", "rollup", "--month", month)
	if r := s.a.call("prune", "", "prune", "--daily-older-than", "90d"); r.Fail != nil {
		s.event("prune: %v", r.Fail)
	}
	row := s.stats.month
	row.Month = month
	row.Facts = s.factRecall()
	row.Notebook = s.notebookRecall()
	var h struct {
		Overall string `json:"overall"`
		Checks  []struct {
			Name, Status, Message string
		} `json:"checks"`
	}
	// health exits 1 when it is unhealthy: its answer is still the JSON.
	r := s.a.run("", "--json", "health")
	s.stats.add("health", r.Took)
	if err := json.Unmarshal([]byte(r.Out), &h); err != nil {
		s.failure(fmt.Errorf("health: %v (%v)", err, r.Fail))
	}
	row.Health = h.Overall
	for _, c := range h.Checks {
		if c.Status != "pass" {
			row.Alerts = append(row.Alerts, c.Name+" ("+c.Status+"): "+c.Message)
		}
	}
	var st struct {
		Pending  int `json:"pending"`
		Embedded int `json:"embedded"`
	}
	if err := s.a.jsonCall("status", &st, "status"); err != nil {
		s.failure(err)
	}
	row.Pending, row.Embedded = st.Pending, st.Embedded
	row.IndexBytes = dirSize(filepath.Join(s.a.home, "brain"))
	row.NotebookBytes = dirSize(filepath.Join(s.a.home, "notebook"))
	row.SessionsBytes = dirSize(filepath.Join(s.a.home, "sessions"))
	s.a.notePeak()
	row.PeakRSSKB = s.a.peakKB
	s.a.peakKB = 0
	s.stats.closeMonth(row)
	fmt.Fprintf(os.Stderr, "%s: %s\n", month, row.summary())
}

// failure is a command that failed on every try: outside the disk-full
// day, a finding of the audit.
func (s *sim) failure(err error) {
	if s.full {
		s.stats.month.RefusedFull++
		return
	}
	s.ledger.failures = append(s.ledger.failures, fmt.Sprintf("%s: %v", s.now.Format("2006-01-02"), err))
	fmt.Fprintf(os.Stderr, "  FAILED: %v\n", err)
}

// ack reports whether a write was acknowledged (its command succeeded),
// counting it a failure otherwise.
func (s *sim) ack(r callResult) bool {
	if r.Fail != nil {
		s.failure(r.Fail)
		return false
	}
	return true
}

// diskFullDay fills A's disk, lives a session and a few writes on it (each
// may be refused: what is acknowledged must be kept), frees the disk and
// lives the rest of the day.
func (s *sim) diskFullDay() {
	ballast := filepath.Join(s.diskDir, "ballast")
	f, err := os.Create(ballast)
	if err != nil {
		s.fatal(err)
	}
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			break // ENOSPC
		}
	}
	f.Close()
	s.full = true
	s.event("disk full")
	s.session(0, false, false)
	s.dailyLog(s.a)
	s.remember(s.a)
	s.a.call("sync", "", "sync", "--remote")
	s.full = false
	if err := os.Remove(ballast); err != nil {
		s.fatal(err)
	}
	s.event("disk freed")
	s.a.ensureServer()
	s.liveDay(false, false)
}

// finish syncs both machines until each has the other's last writes,
// stops the server and audits the homes.
func (s *sim) finish() {
	s.a.call("sync", "", "sync", "--remote")
	s.b.call("sync", "", "sync", "--remote")
	s.a.call("sync", "", "sync", "--remote")
	findings := s.audit()
	if err := s.writeReport(findings); err != nil {
		s.fatal(err)
	}
	if s.diskDir != "" { // keep the first home for a look, off its tmpfs
		if out, err := exec.Command("cp", "-a", s.a.home, filepath.Join(s.out, "a")).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "memhost-sim: copy %s: %v %s\n", s.a.home, err, out)
		}
		if err := syscall.Unmount(s.diskDir, 0); err != nil {
			fmt.Fprintf(os.Stderr, "memhost-sim: unmount %s: %v\n", s.diskDir, err)
		}
	}
	fmt.Fprintf(os.Stderr, "report: %s\n", filepath.Join(s.out, "report.md"))
	if len(findings) > 0 {
		fmt.Fprintf(os.Stderr, "memhost-sim: the audit found %d problems:\n", len(findings))
		for _, f := range findings {
			fmt.Fprintln(os.Stderr, "  "+f)
		}
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "memhost-sim: the audit found nothing lost, doubled, torn or leaked")
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.Intn(len(xs))] }

func gitCmd(dir string, args ...string) (string, error) {
	cmd := execGit(dir, args...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustJSON is for values the simulation made itself.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
