package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A machine is one home and the memhost processes that run for it, as one
// of the user's computers would have them.
type machine struct {
	name   string // "a" (the agent's laptop) or "b" (a second machine)
	home   string
	sim    *sim
	server *exec.Cmd // memhost serve, when this machine runs one
	done   chan error
	pid    int // the server's pid (memhost-core's: the launcher execs it)
	peakKB int // the largest VmHWM seen of this month's servers
}

// callResult is one memhost command as the agent ran it.
type callResult struct {
	Out, Err string
	Took     time.Duration
	Fail     error
}

// env is what every memhost process of this machine runs with: the
// simulated day's clock, UTC, and no server started on demand (the
// simulation starts, stops and kills the server itself).
func (m *machine) env() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEMHOST_") && !strings.HasPrefix(kv, "TZ=") {
			env = append(env, kv)
		}
	}
	return append(env,
		"MEMHOST_HOME="+m.home,
		"MEMHOST_CLOCK_OFFSET="+m.sim.offset,
		"MEMHOST_SERVER_AUTOSTART=false",
		"TZ=UTC",
	)
}

// run runs one memhost command to its end and times it, wall clock, as
// an agent waits for it. A command is given a minute.
func (m *machine) run(stdin string, args ...string) callResult {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.sim.memhost, args...)
	cmd.Env = m.env()
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	t0 := time.Now()
	err := cmd.Run()
	r := callResult{Out: out.String(), Err: errOut.String(), Took: time.Since(t0), Fail: err}
	if err != nil {
		r.Fail = fmt.Errorf("memhost %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return r
}

// call runs a command as an agent runtime does: again when it fails, up
// to three times (a server killed under it, a disk briefly full), timing
// every try under op. It returns the last try. A retry finds the server
// gone and runs in its own process (the simulation restarts the server
// between calls, see ensureServer).
func (m *machine) call(op string, stdin string, args ...string) callResult {
	var r callResult
	for try := 0; try < 3; try++ {
		r = m.run(stdin, args...)
		m.sim.stats.add(op, r.Took)
		if r.Fail == nil {
			return r
		}
		m.sim.stats.retry(op)
		time.Sleep(100 * time.Millisecond)
	}
	return r
}

// must runs a command that the simulation cannot go on without.
func (m *machine) must(op, stdin string, args ...string) string {
	r := m.call(op, stdin, args...)
	if r.Fail != nil {
		m.sim.fatal(r.Fail)
	}
	return r.Out
}

// jsonCall runs a command with --json and decodes its answer into v.
func (m *machine) jsonCall(op string, v any, args ...string) error {
	r := m.call(op, "", append([]string{"--json"}, args...)...)
	if r.Fail != nil {
		return r.Fail
	}
	if err := json.Unmarshal([]byte(r.Out), v); err != nil {
		return fmt.Errorf("memhost %s: answer is not JSON: %v", strings.Join(args, " "), err)
	}
	return nil
}

// startServer starts memhost serve in the foreground as a child, on the
// unix socket only, and waits until it answers.
func (m *machine) startServer() {
	cmd := exec.Command(m.sim.memhost, "serve", "--listen", "")
	cmd.Env = m.env()
	logf, err := os.OpenFile(filepath.Join(m.sim.out, m.name+"-serve.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		m.sim.fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		m.sim.fatal(err)
	}
	logf.Close()
	m.server, m.pid = cmd, cmd.Process.Pid
	m.done = make(chan error, 1)
	go func() { m.done <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var st struct {
			PID int `json:"pid"`
		}
		r := m.run("", "--json", "serve", "status")
		if r.Fail == nil && json.Unmarshal([]byte(r.Out), &st) == nil && st.PID == m.pid {
			return
		}
		select {
		case err := <-m.done:
			m.done <- err
			m.sim.fatal(fmt.Errorf("%s: memhost serve exited: %v (log %s-serve.log)", m.name, err, m.name))
		case <-time.After(20 * time.Millisecond):
		}
	}
	m.sim.fatal(fmt.Errorf("%s: memhost serve did not answer in 30 s", m.name))
}

// ensureServer restarts a server that died under the agent (killed, or
// gone by itself: an event of the report).
func (m *machine) ensureServer() {
	if m.sim.full {
		return // it would not start: after the disk is freed
	}
	if m.server != nil && !m.serverAlive() {
		err := <-m.done
		m.sim.event("%s: memhost serve had exited (%v); restarted", m.name, err)
		m.server = nil
		m.startServer()
	}
}

func (m *machine) serverAlive() bool {
	if m.server == nil {
		return false
	}
	select {
	case err := <-m.done:
		m.done <- err
		return false
	default:
		return true
	}
}

// notePeak reads the server's peak resident set (VmHWM) before it goes.
func (m *machine) notePeak() {
	if !m.serverAlive() {
		return
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.pid))
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			if kb, err := strconv.Atoi(f[1]); err == nil && kb > m.peakKB {
				m.peakKB = kb
			}
		}
	}
}

// nightMax bounds a night: how long the sim gives the server's embedder
// to work through the day's backlog before stopping it. A real day has
// hours between sessions; a simulated one has seconds, so without a night
// the backlog would grow with the year and searches would answer
// keyword-only (no vector for the newest turns) where a user's are hybrid.
const nightMax = 120 * time.Second

// nightStill ends a night early: the backlog has not moved for that long
// (a provider that is not ready, chunks that fail).
const nightStill = 10 * time.Second

// night lets the running server embed what the day left, as the idle
// hours of a real day do, and returns how long that took and the chunks
// still waiting (none unless nightMax passed or the backlog stood still:
// an event of the report says so, as it says when the server died or
// never answered).
func (m *machine) night() (time.Duration, int) {
	start, moved := time.Now(), time.Now()
	pending := -1
	for time.Since(start) < nightMax && time.Since(moved) < nightStill {
		if !m.serverAlive() {
			m.sim.event("%s: memhost serve died in the night", m.name)
			break
		}
		var st struct {
			Pending int `json:"pending"`
		}
		r := m.run("", "--json", "status")
		if r.Fail == nil && json.Unmarshal([]byte(r.Out), &st) == nil {
			if st.Pending != pending {
				moved = time.Now()
			}
			if pending = st.Pending; pending == 0 {
				break
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	took := time.Since(start)
	switch {
	case pending < 0:
		m.sim.event("%s: memhost status never answered in the night", m.name)
	case pending > 0:
		m.sim.event("%s: the night ended after %.0f s with %d chunks waiting for a vector", m.name, took.Seconds(), pending)
	}
	return took, pending
}

// stopServer stops the server as a user does (SIGTERM: it finishes what
// is in flight), or kills it (SIGKILL), and waits for it to be gone.
func (m *machine) stopServer(kill bool) {
	if m.server == nil {
		return
	}
	m.notePeak()
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = m.server.Process.Signal(sig)
	select {
	case err := <-m.done:
		var ee *exec.ExitError
		if !kill && err != nil && !errors.As(err, &ee) {
			m.sim.fatal(fmt.Errorf("%s: memhost serve: %v", m.name, err))
		}
	case <-time.After(60 * time.Second):
		m.sim.fatal(fmt.Errorf("%s: memhost serve did not stop in 60 s after %v", m.name, sig))
	}
	m.server = nil
}

// killPlugin kills the server's embeddings plugin process (a child of
// the server), as a crash of the provider would. It reports whether one
// was found.
func (m *machine) killPlugin() bool {
	if !m.serverAlive() {
		return false
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		close := strings.LastIndexByte(s, ')')
		if close < 0 {
			continue
		}
		comm := s[strings.IndexByte(s, '(')+1 : close]
		f := strings.Fields(s[close+1:])
		// comm is the name cut to 15 bytes: "memhost-embeddi".
		if len(f) < 2 || !strings.HasPrefix(comm, "memhost-embed") {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == m.pid {
			return syscall.Kill(pid, syscall.SIGKILL) == nil
		}
	}
	return false
}

// dirSize is the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
