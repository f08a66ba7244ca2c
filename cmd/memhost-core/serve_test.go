package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost/internal/syncbuf"
	"github.com/memhost/memhost/server"
	"github.com/memhost/memhost/server/client"
)

// serveInfo runs `memhost serve status --json`.
func serveInfo(t testing.TB, home string) (server.Info, error) {
	t.Helper()
	out, errOut, err := exe(home, "", nil, "serve", "status", "--json")
	if err != nil {
		return server.Info{}, fmt.Errorf("%v: %s", err, errOut)
	}
	var in server.Info
	return in, json.Unmarshal([]byte(out), &in)
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestBinaryServe: the server as a user runs it: --detach, status, one per
// home, commands forwarded (and the same without it), stop; SIGTERM ends a
// foreground server with exit 0.
func TestBinaryServe(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	if _, _, err := exe(home, "", nil, "init"); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := exe(home, "", nil, "serve", "--detach", "--listen", "127.0.0.1:0")
	if err != nil || !strings.Contains(out, "running in the background, pid ") {
		t.Fatalf("serve --detach: %v %q %q", err, out, errOut)
	}
	in, err := serveInfo(t, home)
	if err != nil || in.PID == 0 || !strings.HasPrefix(in.URL, "http://127.0.0.1:") || !in.Watcher {
		t.Fatalf("serve status: %+v %v", in, err)
	}
	t.Cleanup(func() { syscall.Kill(in.PID, syscall.SIGKILL) })
	if b, err := os.ReadFile(filepath.Join(home, "brain", "serve.log")); err != nil || !strings.Contains(string(b), "serving") {
		t.Errorf("serve.log: %q %v", b, err)
	}
	out, _, _ = exe(home, "", nil, "serve", "status")
	for _, want := range []string{"running, pid", in.URL, "unix://", "uptime:", "watcher:  active"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve status lacks %q:\n%s", want, out)
		}
	}

	// A second server refuses, naming the first.
	_, errOut, err = exe(home, "", nil, "serve", "--listen", "")
	if exitCode(err) != 1 || !strings.Contains(errOut, fmt.Sprintf("pid %d", in.PID)) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("second server: %v %q", err, errOut)
	}

	// Commands go through the server, and answer as in-process.
	before, _ := serveInfo(t, home)
	if _, errOut, err := exe(home, "", nil, "remember", "Sarah Chen - Phone: 555-1234"); err != nil {
		t.Fatal(err, errOut)
	}
	viaServer, _, err := exe(home, "", nil, "recall", "sarah", "phone")
	if err != nil {
		t.Fatal(err)
	}
	after, _ := serveInfo(t, home)
	if after.Requests-before.Requests < 3 { // status, remember, recall (and this status)
		t.Errorf("the server answered %d requests for remember and recall", after.Requests-before.Requests)
	}
	inProcess, _, err := exe(home, "", nil, "recall", "sarah", "phone", "--no-server")
	if err != nil {
		t.Fatal(err)
	}
	ms := func(s string) string { return millis.ReplaceAllString(s, "N ms") }
	if ms(viaServer) != ms(inProcess) || !strings.Contains(viaServer, "reference/contacts.md") {
		t.Errorf("recall via the server:\n%s\nin-process:\n%s", viaServer, inProcess)
	}

	// stop: the process ends, the socket goes; commands run in-process.
	out, errOut, err = exe(home, "", nil, "serve", "stop")
	if err != nil || !strings.Contains(out, fmt.Sprintf("stopped memhost serve (pid %d)", in.PID)) {
		t.Fatalf("serve stop: %v %q %q", err, out, errOut)
	}
	if err := syscall.Kill(in.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pid %d still runs after stop: %v", in.PID, err)
	}
	_, errOut, err = exe(home, "", nil, "serve", "status")
	if exitCode(err) != 1 || !strings.Contains(errOut, "no memhost server runs for") {
		t.Errorf("status with no server: %v %q", err, errOut)
	}
	if out, _, err := exe(home, "", nil, "recall", "sarah"); err != nil || !strings.Contains(out, "reference/contacts.md") {
		t.Errorf("recall without a server: %v %s", err, out)
	}

	// Foreground: SIGTERM finishes and exits 0.
	cmd := exec.Command(binary, "--home", home, "serve", "--listen", "")
	var fgOut syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &fgOut, &fgOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitServing(t, home, cmd.Process.Pid)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v\n%s", err, fgOut.String())
	}
	if _, err := os.Stat(server.SocketPath(home)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left after SIGTERM: %v", err)
	}
}

var jsonMillis = regexp.MustCompile(`"(\w+)Ms": [0-9.]+`)

// waitServing waits until the server of home answers with pid.
func waitServing(t *testing.T, home string, pid int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if in, err := serveInfo(t, home); err == nil && in.PID == pid {
			return
		}
	}
	t.Fatalf("memhost serve (pid %d) did not answer", pid)
}

// TestBinaryServeKilled: kill -9 the server while agents write through it.
// Every write either went through the server or, when the server stopped
// answering, ran again in-process: each command exits 0 and its entry is
// on disk (at least once), the next server starts over the stale socket.
func TestBinaryServeKilled(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	if _, _, err := exe(home, "", nil, "init"); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		out, errOut, err := exe(home, "", nil, "serve", "--detach", "--listen", "")
		if err != nil {
			t.Fatalf("round %d: serve --detach: %v %s %s", round, err, out, errOut)
		}
		in, err := serveInfo(t, home)
		if err != nil {
			t.Fatal(err)
		}
		const writers, each = 4, 6
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failures []string
		fellBack := 0
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					text := fmt.Sprintf("round%d-writer%d-entry%d", round, w, i)
					args := []string{"session", "append", "--session", fmt.Sprintf("s%d", w), "--role", "user", text}
					if i%2 == 1 {
						args = []string{"daily-log", text}
					}
					_, errOut, err := exe(home, "", nil, args...)
					mu.Lock()
					if err != nil {
						failures = append(failures, fmt.Sprintf("%s: %v %s", text, err, errOut))
					}
					if strings.Contains(errOut, "running in this process instead") {
						fellBack++
					}
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(50+rand.IntN(200)) * time.Millisecond)
		syscall.Kill(in.PID, syscall.SIGKILL)
		wg.Wait()
		for _, f := range failures {
			t.Errorf("round %d: %s", round, f)
		}
		t.Logf("round %d: killed after the server took requests; %d writes ran again in-process", round, fellBack)
		// Every entry is on disk.
		var all strings.Builder
		filepath.Walk(home, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".jsonl")) {
				b, _ := os.ReadFile(p)
				all.Write(b)
			}
			return nil
		})
		for w := range writers {
			for i := range each {
				if text := fmt.Sprintf("round%d-writer%d-entry%d", round, w, i); !strings.Contains(all.String(), text) {
					t.Errorf("lost: %s", text)
				}
			}
		}
		// The killed server's socket is stale: the next round's server
		// replaces it.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if err := syscall.Kill(in.PID, 0); errors.Is(err, syscall.ESRCH) || time.Now().After(deadline) {
				break
			}
		}
	}
	// And everything is found by search afterwards.
	out, _, err := exe(home, "", nil, "conversation-search", "round2-writer0-entry0")
	if err != nil || !strings.Contains(out, "s0") {
		t.Errorf("search after the kills: %v %s", err, out)
	}
}

// TestBinaryLauncher: the launcher (bin/memhost) relays commands into the
// server and prints exactly what memhost-core prints in-process, exit codes
// and stdin included; relative paths are the caller's; a command that
// reads no stdin does not wait for a pipe that stays open.
func TestBinaryLauncher(t *testing.T) {
	t.Parallel() // a home and processes of its own
	work := t.TempDir()
	home := filepath.Join(work, "home")
	if _, _, err := exe(home, "", nil, "init"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(work, "chat.jsonl"), []byte(`{"id":"t1","type":"message","role":"user","content":"the zeppelin lands at noon","timestamp":"2024-03-01T09:00:00Z"}`+"\n"), 0o644)
	if out, errOut, err := exe(home, "", nil, "serve", "--detach", "--listen", ""); err != nil {
		t.Fatalf("serve: %v %s %s", err, out, errOut)
	}
	in, err := serveInfo(t, home)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exe(home, "", nil, "serve", "stop") })

	type result struct {
		out, err string
		code     int
	}
	runIn := func(dir, stdin string, env []string, args ...string) result {
		cmd := exec.Command(binary, args...)
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), "MEMHOST_HOME="+home), env...)
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		return result{o.String(), e.String(), exitCode(err)}
	}
	// Each command once through the server, then again in-process on a
	// copy of the home as it was before (so both see the same state).
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"remember", "Sarah Chen - Phone: 555-1234"}},
		{"Kettle: descale monthly\n", []string{"remember", "--category", "knowledge"}},
		{"", []string{"recall", "sarah", "phone"}},
		{"", []string{"--json", "recall", "kettle"}},
		{"", []string{"get", "nope.md"}},
		{"", []string{"get", "../etc/passwd"}},
		{"", []string{"recall", "--max-results", "0", "x"}},
		{"", []string{"recall"}},
		{"", []string{"frobnicate"}},
		{"- [ ] one\n- [ ] two\n", []string{"write", "lists/todo.md", "-"}},
		{"", []string{"session", "ingest", "chat.jsonl"}},
		{"", []string{"session", "ingest", "missing.jsonl"}},
		{"", []string{"conversation-search", "zeppelin"}},
		{`{"session_id":"x","hook_event_name":"SessionStart"}`, []string{"hook", "session-start"}},
		{"", []string{"--home", "home", "context"}},
		{"", []string{"remember", "bad \xff text"}},
		{"", []string{"write", "knowledge/caf\xe9.md", "x"}},
	} {
		before := filepath.Join(t.TempDir(), "home")
		if err := exec.Command("cp", "-a", home, before).Run(); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(before, "brain", "serve.sock"))
		got := runIn(work, c.stdin, nil, c.args...)
		// In-process on the copy: same paths in the output.
		cmd := exec.Command(filepath.Join(filepath.Dir(binary), "memhost-core"), c.args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "MEMHOST_HOME="+before, "MEMHOST_NO_SERVER=1")
		if len(c.args) > 1 && c.args[0] == "--home" {
			cmd.Args = append([]string{cmd.Path, "--home", before}, c.args[2:]...)
		}
		if c.stdin != "" {
			cmd.Stdin = strings.NewReader(c.stdin)
		}
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		want := result{strings.ReplaceAll(o.String(), before, home), strings.ReplaceAll(e.String(), before, home), exitCode(err)}
		norm := func(s string) string {
			return jsonMillis.ReplaceAllString(millis.ReplaceAllString(s, "N ms"), `"${1}Ms": N`)
		}
		if norm(got.out) != norm(want.out) || got.err != want.err || got.code != want.code {
			t.Errorf("memhost %v:\nthrough the server: exit %d\n%s%s\nin-process: exit %d\n%s%s", c.args, got.code, got.out, got.err, want.code, want.out, want.err)
		}
	}
	after, _ := serveInfo(t, home)
	if after.Requests-in.Requests < 10 {
		t.Errorf("the server answered %d requests for the commands: were they relayed?", after.Requests-in.Requests)
	}

	// A relative MEMHOST_HOME is the caller's, not the server's folder.
	rel := exec.Command(binary, "remember", "--category", "knowledge", "relative home works")
	rel.Dir, rel.Env = work, append(os.Environ(), "MEMHOST_HOME=home")
	if out, err := rel.CombinedOutput(); err != nil {
		t.Fatalf("relative MEMHOST_HOME: %v %s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "notebook", "knowledge", "facts.md")); !strings.Contains(string(b), "relative home works") {
		t.Errorf("relative MEMHOST_HOME wrote elsewhere: facts.md is %q", b)
	}

	// A relayed write is published on the event stream, as an API write is
	// (dashboards and MCP subscribers follow it).
	c, err := client.Dial(home, nil)
	if err != nil {
		t.Fatal(err)
	}
	evCtx, stopEvents := context.WithTimeout(context.Background(), 20*time.Second)
	wrote := make(chan string, 16)
	ready := make(chan struct{}, 1)
	evErr := make(chan error, 1)
	go func() {
		evErr <- c.Events(evCtx, func(e server.Event) {
			switch e.Type {
			case "ready":
				ready <- struct{}{}
			case "write":
				wrote <- string(e.Data)
			}
		})
	}()
	select { // events from now on reach the stream (a fixed sleep missed it once)
	case <-ready:
	case err := <-evErr:
		t.Fatalf("the event stream ended before it said ready: %v", err)
	case <-evCtx.Done():
		t.Fatal("the event stream never said ready")
	}
	if r := runIn(work, "", nil, "remember", "--category", "knowledge", "relayed writes are published"); r.code != 0 {
		t.Fatalf("remember: %+v", r)
	}
	select {
	case d := <-wrote:
		if !strings.Contains(d, `"op":"remember"`) || !strings.Contains(d, "knowledge/") {
			t.Errorf("write event %s", d)
		}
	case <-evCtx.Done():
		t.Error("no write event for a relayed remember")
	}
	stopEvents()
	c.Close()

	// A misspelt variable is warned of through the server too.
	if r := runIn(work, "", []string{"MEMHOST_HOEM=x"}, "recall", "sarah"); r.code != 0 || !strings.Contains(r.err, "MEMHOST_HOEM is not a memhost variable") {
		t.Errorf("misspelt variable through the server: exit %d, stderr %q", r.code, r.err)
	}

	// A command that reads no stdin does not wait for stdin to close.
	pr, pw, _ := os.Pipe()
	defer pw.Close()
	cmd := exec.Command(binary, "recall", "sarah")
	cmd.Env = append(os.Environ(), "MEMHOST_HOME="+home)
	cmd.Stdin = pr
	done := make(chan error, 1)
	cmd.Start()
	pr.Close()
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("recall with an open stdin: %v", err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Error("recall waited for stdin to close")
	}
}

// TestBinaryLauncherStdinReplay: the server dies while a relayed command
// reads stdin; memhost-core, run instead, gets all of it: what the server
// had been sent and what came after.
func TestBinaryLauncherStdinReplay(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	if out, errOut, err := exe(home, "", nil, "serve", "--detach", "--listen", ""); err != nil {
		t.Fatalf("serve: %v %s %s", err, out, errOut)
	}
	in, err := serveInfo(t, home)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(in.PID, syscall.SIGKILL) })
	pr, pw, _ := os.Pipe()
	cmd := exec.Command(binary, "remember", "--category", "knowledge", "-")
	cmd.Env = append(os.Environ(), "MEMHOST_HOME="+home)
	cmd.Stdin = pr
	var out, errOut syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	pw.WriteString("stdinreplay part-one\n")
	time.Sleep(500 * time.Millisecond) // the server asked for stdin and got part one
	syscall.Kill(in.PID, syscall.SIGKILL)
	time.Sleep(200 * time.Millisecond)
	pw.WriteString("part-two\n")
	pw.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("remember: %v\n%s%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "running in this process instead") {
		t.Errorf("no word of the server going away: %q", errOut.String())
	}
	b, _ := os.ReadFile(filepath.Join(home, "notebook", "knowledge", "facts.md"))
	if !strings.Contains(string(b), "stdinreplay part-one") || !strings.Contains(string(b), "part-two") {
		t.Errorf("facts.md after the replay:\n%s", b)
	}
}
