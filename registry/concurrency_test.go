package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost/sdk"
)

// registered is the provider the registry holds for name, without
// starting or waiting for anything.
func registered(r *Registry, name string) *Provider {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.providers[name]; s != nil {
		return s.p
	}
	return nil
}

// readPid waits for faulty's MEMHOST_FAULTY_PID_FILE.
func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil {
			pid, err := strconv.Atoi(string(b))
			if err != nil {
				t.Fatalf("pid file: %v", err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatal("the plugin process never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// goneWithin reports whether pid exits within d.
func goneWithin(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return !alive(pid)
}

// slowStart is a faulty registry whose plugin takes delay to start and
// writes its pid to the returned file as it begins.
func slowStart(t *testing.T, delay time.Duration) (*Registry, string) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "faulty")}, Env: []string{
		"MEMHOST_FAULTY_START_DELAY=" + delay.String(),
		"MEMHOST_FAULTY_PID_FILE=" + pidFile,
	}})
	return r, pidFile
}

// TestStatusAnswersWhileStarting: a dashboard asking Status, Pid or Ping
// must not wait behind another goroutine's plugin start.
func TestStatusAnswersWhileStarting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const delay = 2 * time.Second
	r, pidFile := slowStart(t, delay)
	started := make(chan error, 1)
	go func() {
		_, err := r.Provider(ctx, "faulty", nil)
		started <- err
	}()
	readPid(t, pidFile) // the process runs; its handshake waits out delay
	p := registered(r, "faulty")
	if p == nil {
		t.Fatal("no provider registered while it starts")
	}
	const prompt = delay / 4
	begin := time.Now()
	st, err := p.Status(ctx)
	if d := time.Since(begin); d > prompt {
		t.Errorf("Status took %v while another goroutine started the plugin", d)
	}
	if err != nil || st.State != sdk.StateLoading || st.Message != "plugin starting" {
		t.Errorf("Status while starting = %+v, %v; want loading, \"plugin starting\"", st, err)
	}
	begin = time.Now()
	if pid := p.Pid(); pid != 0 {
		t.Errorf("Pid while starting = %d", pid)
	}
	if err := p.Ping(ctx); !errors.Is(err, ErrStarting) {
		t.Errorf("Ping while starting: %v, want ErrStarting", err)
	}
	if d := time.Since(begin); d > prompt {
		t.Errorf("Pid and Ping took %v while another goroutine started the plugin", d)
	}
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("slow start: %v", err)
		}
	case <-time.After(delay + 10*time.Second):
		t.Fatal("the slow start never finished")
	}
	if st, _ := p.Status(ctx); st.State != sdk.StateReady {
		t.Errorf("Status after the start = %+v", st)
	}
}

// TestWaitersShareOneStart: callers that need the plugin while it starts
// wait for that start rather than starting another process, and give up
// with their own context.
func TestWaitersShareOneStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, pidFile := slowStart(t, time.Second)
	go r.Provider(ctx, "faulty", nil)
	pid := readPid(t, pidFile)
	p := registered(r, "faulty")
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := p.Embed(short, []string{"x"}, sdk.KindDocument); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Embed with a context ending during the start: %v", err)
	}
	// The start goes on for the others: one caller giving up must not fail it.
	if _, err := p.Embed(ctx, []string{"x"}, sdk.KindDocument); err != nil {
		t.Fatalf("Embed waiting for the start: %v", err)
	}
	if p.Pid() != pid {
		t.Errorf("pid %d, want the one start's %d", p.Pid(), pid)
	}
}

// TestStatusOfDeadPlugin: a plugin that died answers StateError with
// why, at once, rather than "starting".
func TestStatusOfDeadPlugin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "faulty")}})
	p, err := r.Provider(ctx, "faulty", nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	syscall.Kill(pid, syscall.SIGKILL)
	waitGone(t, pid)
	st, err := p.Status(ctx)
	if err != nil || st.State != sdk.StateError || !strings.Contains(st.Message, "restarting") {
		t.Errorf("Status of a dead plugin = %+v, %v", st, err)
	}
}

// TestStopWhileHeldWaitsForRelease: Stop of a plugin a caller holds lets
// the call in flight finish, and kills the process at the last release.
func TestStopWhileHeldWaitsForRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	arrived := filepath.Join(t.TempDir(), "slow-arrived")
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "faulty")}, Env: []string{"MEMHOST_FAULTY_SLOW_FILE=" + arrived}})
	p, release, err := r.Acquire(ctx, "faulty", nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	done := make(chan error, 1)
	go func() {
		_, err := p.Embed(ctx, []string{"slow"}, sdk.KindDocument)
		done <- err
	}()
	// The call is in flight once the plugin has it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(arrived); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow call never reached the plugin")
		}
	}
	r.Stop("faulty")
	if err := <-done; err != nil {
		t.Fatalf("Embed in flight during Stop: %v", err)
	}
	if !alive(pid) {
		t.Fatal("Stop killed a plugin a caller still holds")
	}
	if _, err := p.Embed(ctx, []string{"after stop"}, sdk.KindDocument); err != nil {
		t.Errorf("Embed after Stop, still held: %v", err)
	}
	release()
	if !goneWithin(pid, 5*time.Second) {
		t.Fatal("plugin still running after the last release of a stopped plugin")
	}
	release() // a second release is harmless
	p2, err := r.Provider(ctx, "faulty", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p2 == p || p2.Pid() == pid || p2.Pid() == 0 {
		t.Errorf("after the stop, Provider gave the old provider or no process (pid %d, was %d)", p2.Pid(), pid)
	}
}

// TestAcquireCancelsPendingStop: a plugin wanted again before its last
// release keeps running.
func TestAcquireCancelsPendingStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "faulty")}})
	p, release1, err := r.Acquire(ctx, "faulty", nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	r.Stop("faulty")
	p2, release2, err := r.Acquire(ctx, "faulty", nil)
	if err != nil || p2 != p {
		t.Fatalf("Acquire during a pending stop: %p, %v (want %p)", p2, err, p)
	}
	release1()
	release2()
	if goneWithin(pid, 300*time.Millisecond) {
		t.Fatal("a stop cancelled by Acquire still killed the plugin")
	}
	r.Stop("faulty") // nobody holds it now
	if !goneWithin(pid, 5*time.Second) {
		t.Error("Stop of an unheld plugin left it running")
	}
}

// TestCloseDuringStartKillsThePlugin: Close does not wait for a start in
// flight, and the start, when it ends, kills what it started.
func TestCloseDuringStartKillsThePlugin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const delay = 1500 * time.Millisecond
	r, pidFile := slowStart(t, delay)
	started := make(chan error, 1)
	go func() {
		_, err := r.Provider(ctx, "faulty", nil)
		started <- err
	}()
	pid := readPid(t, pidFile)
	begin := time.Now()
	r.Close()
	if d := time.Since(begin); d > delay/3 {
		t.Errorf("Close waited %v for a start", d)
	}
	select {
	case err := <-started:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Provider whose start Close interrupted: %v, want ErrClosed", err)
		}
	case <-time.After(delay + 10*time.Second):
		t.Fatal("the start never finished")
	}
	if !goneWithin(pid, 5*time.Second) {
		t.Error("a plugin started during Close was left running")
	}
	p, release, err := r.Acquire(ctx, "faulty", nil)
	if p != nil || !errors.Is(err, ErrClosed) {
		t.Errorf("Acquire after Close: %v, %v", p, err)
	}
	release()
}

// TestClosedProviderIsReplaced: a provider closed by its user does not
// leave the registry handing out a dead provider.
func TestClosedProviderIsReplaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "faulty")}})
	p, err := r.Provider(ctx, "faulty", nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	p2, err := r.Provider(ctx, "faulty", nil)
	if err != nil || p2 == p {
		t.Fatalf("Provider after its provider was closed: %v (same: %v)", err, p2 == p)
	}
	if _, err := p2.Embed(ctx, []string{"x"}, sdk.KindDocument); err != nil {
		t.Error(err)
	}
}

// TestConcurrentUse drives one registry from many goroutines at once with
// the real hello plugin; -race checks the locking, and callers holding the
// plugin must never see it stopped under them.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "hello")}, MaxBackoff: 50 * time.Millisecond})
	opts := map[string]string{"dimensions": "32"}
	// Other options to the registry, which reconfigures the shared plugin,
	// but the same dimensions to hello: a size change under an Embed in
	// flight would fail that Embed for reasons this test is not about.
	other := map[string]string{"dimensions": "+32"}

	var (
		pidsMu sync.Mutex
		pids   = map[int]bool{}
	)
	seen := func(pid int) {
		pidsMu.Lock()
		pids[pid] = true
		pidsMu.Unlock()
	}

	// Holders must always get a working plugin.
	var holders sync.WaitGroup
	for g := range 4 {
		holders.Add(1)
		go func() {
			defer holders.Done()
			for i := range 12 {
				p, release, err := r.Acquire(ctx, "hello", opts)
				if err != nil {
					t.Errorf("holder %d: Acquire: %v", g, err)
					release()
					return
				}
				seen(p.Pid())
				if g == 0 && i%2 == 0 {
					if err := p.Configure(ctx, other); err != nil {
						t.Errorf("holder %d: Configure while held: %v", g, err)
					}
				}
				v, err := p.Embed(ctx, []string{"one", "two " + strconv.Itoa(i)}, sdk.KindDocument)
				if err != nil || len(v) != 2 || len(v[0]) != 32 {
					t.Errorf("holder %d: Embed while held: %d vectors, %v", g, len(v), err)
				}
				if st, err := p.Status(ctx); err != nil || st.State != sdk.StateReady {
					t.Errorf("holder %d: Status while held: %+v, %v", g, st, err)
				}
				if err := p.Ping(ctx); err != nil {
					t.Errorf("holder %d: Ping while held: %v", g, err)
				}
				seen(p.Pid())
				release()
				// Idle a while, so that Stop finds nobody holding it.
				time.Sleep(time.Duration(10+5*g) * time.Millisecond)
			}
		}()
	}

	// The others only must not race, panic or deadlock: legacy callers
	// hold nothing, so Stop may kill the plugin under them.
	quit := make(chan struct{})
	var others sync.WaitGroup
	loop := func(f func()) {
		others.Add(1)
		go func() {
			defer others.Done()
			for {
				select {
				case <-quit:
					return
				default:
				}
				f()
			}
		}()
	}
	for range 2 {
		loop(func() {
			p, _ := r.Provider(ctx, "hello", other)
			if p == nil {
				return
			}
			p.Status(ctx)
			p.Info(ctx)
			p.Embed(ctx, []string{"legacy"}, sdk.KindQuery)
			seen(p.Pid())
			time.Sleep(20 * time.Millisecond)
		})
	}
	loop(func() {
		r.Stop("hello")
		time.Sleep(15 * time.Millisecond)
	})
	loop(func() {
		r.Discover()
		r.Plugins()
		r.Names()
		time.Sleep(5 * time.Millisecond)
	})
	loop(func() {
		if p := registered(r, "hello"); p != nil {
			p.Status(ctx)
			p.Pid()
		}
		time.Sleep(time.Millisecond)
	})

	finished := make(chan struct{})
	go func() {
		holders.Wait()
		close(quit)
		others.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(2 * time.Minute):
		t.Fatal("concurrent use deadlocked")
	}
	r.Close()
	delete(pids, 0)
	if len(pids) < 2 {
		t.Errorf("%d plugin process over the run: no Stop took effect, so the test tried little", len(pids))
	}
	for pid := range pids {
		if !goneWithin(pid, 5*time.Second) {
			t.Errorf("plugin process %d left running after Close", pid)
		}
	}
}
