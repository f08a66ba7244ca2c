//go:build !race

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/sdk"
)

// TestWorkerProcessGone: a worker process that dies mid-run loses no
// text: its decodes go to the workers left, with the same vectors.
func TestWorkerProcessGone(t *testing.T) {
	if raceEngine {
		t.Skip("a -race build has no worker processes (engine.go)")
	}
	p := loaded(t, map[string]string{"threads": "2"})
	e := p.eng.(*llamaEngine)
	texts := chunks(8)
	ctx := context.Background()
	if _, err := p.Embed(ctx, texts[:1], sdk.KindQuery); err != nil || e.workers() != 1 {
		t.Fatalf("one text: %v, %d workers: want one (no worker process for a query)", err, e.workers())
	}
	want, err := p.Embed(ctx, texts, sdk.KindDocument)
	if err != nil {
		t.Fatal(err)
	}
	e.loading.Wait() // the worker process started in the background at the batch
	if e.workers() != 2 {
		t.Fatalf("%d workers after a batch, want 2", e.workers())
	}
	again, err := p.Embed(ctx, texts, sdk.KindDocument)
	if err != nil {
		t.Fatal(err)
	}
	sameVectors(t, again, want, "on the worker process")
	dead := e.procs[0]
	if err := dead.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	got, err := p.Embed(ctx, texts, sdk.KindDocument)
	if err != nil {
		t.Fatalf("after a worker died: %v", err)
	}
	sameVectors(t, got, want, "after a worker died")
	if !dead.gone.Load() {
		t.Error("the dead worker is not marked gone")
	}
}

// withWorkers loads the test model on that many workers, logging to log,
// and waits for its worker processes.
func withWorkers(t *testing.T, workers int, log hclog.Logger) (*Provider, *llamaEngine) {
	t.Helper()
	p := loadedLog(t, log, map[string]string{"threads": strconv.Itoa(workers)})
	e := p.eng.(*llamaEngine)
	e.grow()
	e.loading.Wait()
	if e.workers() != workers {
		t.Fatalf("%d workers, want %d", e.workers(), workers)
	}
	return p, e
}

// TestFreeWhileWorkersStart: worker processes still loading the model
// when the provider is configured again are stopped by free() with the
// others, none is started after it, and none reads the model it freed
// (free() leaves no model to read: a read would panic).
func TestFreeWhileWorkersStart(t *testing.T) {
	p := loaded(t, map[string]string{"threads": "3"})
	e := p.eng.(*llamaEngine)
	e.grow()
	e.mu.Lock()
	started := slices.Concat(e.procs, e.starting)
	loading := len(e.starting)
	e.mu.Unlock()
	if len(started) != 2 || loading == 0 {
		t.Fatalf("grow started %d worker processes, %d of them loading; want 2, loading", len(started), loading)
	}
	p.unload()
	for i, w := range started {
		if w.cmd.ProcessState == nil {
			t.Errorf("worker process %d still runs after free()", i+1)
		}
	}
	e.grow()
	if len(e.starting)+len(e.procs) != 0 {
		t.Errorf("grow after free() started worker processes")
	}
}

// TestWorkerStuck: a worker process stopped mid-run (SIGSTOP; a deadlock
// looks the same) does not hang Embed: it is killed when the call's
// context ends, and the call returns the context's error; or when its
// decode has taken too long, and the others embed its texts.
func TestWorkerStuck(t *testing.T) {
	texts := chunks(16)
	for _, tc := range []struct {
		name                   string
		timeout, decodeTimeout time.Duration
	}{
		{"context deadline", 3 * time.Second, time.Hour},
		{"decode deadline", 0, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, e := withWorkers(t, 2, hclog.NewNullLogger())
			want, err := p.Embed(context.Background(), texts, sdk.KindDocument)
			if err != nil {
				t.Fatal(err)
			}
			e.decodeTimeout = tc.decodeTimeout
			pid := e.procs[0].cmd.Process.Pid
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			type result struct {
				vecs [][]float32
				err  error
			}
			done := make(chan result, 1)
			go func() {
				vecs, err := p.Embed(ctx, texts, sdk.KindDocument)
				done <- result{vecs, err}
			}()
			var got result
			select {
			case got = <-done:
			case <-time.After(time.Minute):
				syscall.Kill(pid, syscall.SIGKILL) // lets the call end, and the test's cleanup
				t.Fatal("Embed still waits for a stopped worker process a minute on")
			}
			switch {
			case got.err == nil:
				sameVectors(t, got.vecs, want, "without the stopped worker")
			case tc.timeout == 0 || !errors.Is(got.err, context.DeadlineExceeded):
				t.Fatalf("Embed: %v", got.err)
			}
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("the stopped worker process is still there (signal 0: %v)", err)
			}
		})
	}
}

// TestWorkerReplaced: a worker process killed (as by the OOM killer) is
// replaced once the call that found it gone ends, so that the next call
// runs on every worker again; and starts are restartWait apart, so that a
// worker dying at once every time is not restarted in a loop.
func TestWorkerReplaced(t *testing.T) {
	p, e := withWorkers(t, 2, hclog.NewNullLogger())
	e.restartWait = 0
	texts := chunks(8)
	ctx := context.Background()
	want, err := p.Embed(ctx, texts, sdk.KindDocument)
	if err != nil {
		t.Fatal(err)
	}
	dead := e.procs[0]
	if err := dead.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Embed(ctx, texts, sdk.KindDocument); err != nil {
		t.Fatalf("the call that finds the worker gone: %v", err)
	}
	e.loading.Wait()
	if e.workers() != 2 || e.procs[0] == dead {
		t.Fatalf("after the call that found a worker gone: %d workers, the dead one among them: %v; want 2, a new one", e.workers(), e.procs[0] == dead)
	}
	got, err := p.Embed(ctx, texts, sdk.KindDocument)
	if err != nil {
		t.Fatal(err)
	}
	sameVectors(t, got, want, "with the new worker")
	if e.procs[0].gone.Load() {
		t.Error("the new worker process is gone")
	}

	e.mu.Lock()
	e.restartWait = time.Hour
	e.mu.Unlock()
	if err := e.procs[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := p.Embed(ctx, texts, sdk.KindDocument); err != nil {
			t.Fatal(err)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.procs) != 0 || len(e.starting) != 0 {
		t.Errorf("a worker dying within restartWait of the last start was started again: %d ready, %d loading", len(e.procs), len(e.starting))
	}
}

// TestWorkerFromRunningBinary: a plugin whose binary is replaced on disk
// while it runs (an upgrade) starts its worker processes from the binary
// it runs, not from the new file. The test runs a copy of its own binary,
// which replaces its file with a script that fails.
func TestWorkerFromRunningBinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("MEMHOST_TEST_REPLACED") == "" {
		testModel(t)
		bin, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		cp := filepath.Join(t.TempDir(), "local.test")
		if err := os.WriteFile(cp, bin, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(cp, "-test.run=^TestWorkerFromRunningBinary$", "-test.v")
		cmd.Env = append(os.Environ(), "MEMHOST_TEST_REPLACED=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestWorkerFromRunningBinary") {
			t.Fatalf("the copy: %v\n%s", err, out)
		}
		return
	}
	if err := os.WriteFile(exe+".new", []byte("#!/bin/sh\necho the replaced binary >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(exe+".new", exe); err != nil {
		t.Fatal(err)
	}
	withWorkers(t, 2, hclog.NewNullLogger())
}

// TestWorkerStderrLogged: what a worker process writes on stderr (here
// the Go runtime's crash report) reaches the provider's log as warnings,
// where go-plugin's stderr would have lost it; a healthy worker writes
// nothing there.
func TestWorkerStderrLogged(t *testing.T) {
	var buf bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Warn})
	_, e := withWorkers(t, 2, log)
	if buf.Len() != 0 {
		t.Errorf("a healthy worker's start logged:\n%s", buf.String())
	}
	w := e.procs[0]
	if err := w.cmd.Process.Signal(syscall.SIGABRT); err != nil {
		t.Fatal(err)
	}
	w.cmd.Wait() // for the crash (stop would close its stdin: it could end first), and for its stderr to be read
	if got := buf.String(); !strings.Contains(got, "[WARN]  SIGABRT: abort") {
		t.Errorf("the worker's crash report is not among the provider's warnings:\n%s", got)
	}
}

// sameVectors fails t where a vector of got differs from its vector in
// want by more than batching and one-by-one embedding may (1e-4).
func sameVectors(t *testing.T, got, want [][]float32, how string) {
	t.Helper()
	for i := range want {
		if d := maxDiff(got[i], want[i]); d > 1e-4 {
			t.Errorf("text %d: differs by %g %s from its vector before", i, d, how)
		}
	}
}

// TestRepackedCopyKept: the repacked copy (BF16, or Q8_0 for AMX) is
// made once in the models folder, by the model's digest, and a damaged
// copy is not used: the model loads as it is, with its own vectors.
func TestRepackedCopyKept(t *testing.T) {
	target, ok := repackTarget()
	version := repackVersions[target]
	if !ok {
		t.Skip("this build's kernels have neither AMX nor AVX512_BF16: models load as they are")
	}
	dir := t.TempDir()
	load := func() (*Provider, []float32) {
		p := New(dir, hclog.NewNullLogger())
		if err := p.Configure(context.Background(), map[string]string{"model": testModel(t)}); err != nil {
			t.Fatal(err)
		}
		ready(t, p)
		v, err := p.Embed(context.Background(), []string{"Sarah Chen - Phone: 555-1234"}, sdk.KindDocument)
		if err != nil {
			t.Fatal(err)
		}
		return p, v[0]
	}
	_, first := load()
	copies, _ := filepath.Glob(filepath.Join(dir, ".all-MiniLM-L6-v2-Q4_K_M.*."+version+".derived"))
	if len(copies) != 1 {
		t.Fatalf("%s copies in the models folder: %v", version, copies)
	}
	before, _ := os.Stat(copies[0])
	_, second := load()
	after, _ := os.Stat(copies[0])
	if !os.SameFile(before, after) || maxDiff(first, second) != 0 {
		t.Error("the second load did not use the kept copy as it was")
	}
	if err := os.Truncate(copies[0], before.Size()/2); err != nil {
		t.Fatal(err)
	}
	_, damaged := load()
	quantised, err := loaded(t, map[string]string{"bf16": "false"}).Embed(context.Background(), []string{"Sarah Chen - Phone: 555-1234"}, sdk.KindDocument)
	if err != nil {
		t.Fatal(err)
	}
	if maxDiff(damaged, quantised[0]) > 1e-6 {
		t.Errorf("with a damaged copy: differs by %g from the model as it is", maxDiff(damaged, quantised[0]))
	}
}

// TestReadMsg: a worker's message is read whole, or the stream is
// reported out of step.
func TestReadMsg(t *testing.T) {
	le := binary.LittleEndian
	whole := append(le.AppendUint32(nil, 5), "hello"...)
	if msg, ok := readMsg(bytes.NewReader(whole)); !ok || msg != "hello" {
		t.Errorf("readMsg(whole) = %q, %v", msg, ok)
	}
	if _, ok := readMsg(bytes.NewReader(whole[:7])); ok {
		t.Error("a cut message read as whole")
	}
	if _, ok := readMsg(bytes.NewReader(le.AppendUint32(nil, 1<<20))); ok {
		t.Error("a message of 1 MiB announced read as whole")
	}
}
