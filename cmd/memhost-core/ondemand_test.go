package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost/server"
)

// onDemand is the environment of a command that may start a server
// (TestMain turns server.autostart off for the others).
var onDemand = []string{"MEMHOST_SERVER_AUTOSTART=true"}

// onDemandServers lists the live processes serving home on demand (their
// pids), and the zombies among them.
func onDemandServers(t *testing.T, home string) (live, zombies []int) {
	t.Helper()
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte("\x00--on-demand")) || !bytes.Contains(cmdline, []byte("\x00"+home+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
			zombies = append(zombies, pid)
			continue
		}
		live = append(live, pid)
	}
	return live, zombies
}

// waitServer waits until home's server answers, and returns its Info.
func waitServer(t *testing.T, home string) server.Info {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if in, err := serveInfo(t, home); err == nil && in.PID != 0 {
			return in
		}
	}
	t.Fatalf("no server answered for %s; its log:\n%s", home, readLog(home))
	return server.Info{}
}

func readLog(home string) string {
	b, _ := os.ReadFile(filepath.Join(home, "brain", "serve.log"))
	return string(b)
}

// stopServer stops home's server and waits for its process to go.
func stopServer(t *testing.T, home string) {
	t.Helper()
	if _, errOut, err := exe(home, "", nil, "serve", "stop"); err != nil && !strings.Contains(errOut, "no memhost server runs") {
		t.Errorf("serve stop: %v %s", err, errOut)
	}
}

// TestOnDemandServer: a command that finds no server answers in its own
// process and leaves one started in the background, on the unix socket
// only; the next command answers through it with what it would have
// printed in-process; serve status says how it was started; memhost serve
// by hand takes the home over from it.
func TestOnDemandServer(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	out, errOut, err := exe(home, "", onDemand, "remember", "--category", "reference", "--file", "birds", "the heron nests by the lake")
	if err != nil {
		t.Fatalf("the first command: %v %s", err, errOut)
	}
	if !strings.Contains(out, "reference/birds.md") {
		t.Errorf("the first command printed %q", out)
	}
	in := waitServer(t, home)
	t.Cleanup(func() { stopServer(t, home) })
	if !in.OnDemand || in.URL != "" || in.IdleExitS != 3600 {
		t.Errorf("the server started on demand: %+v (want on demand, no TCP, an hour's idle exit)", in)
	}
	served, errOut, err := exe(home, "", onDemand, "recall", "heron")
	if err != nil {
		t.Fatal(err, errOut)
	}
	local, errOut, err := exe(home, "", append(onDemand, "MEMHOST_NO_SERVER=1"), "recall", "heron")
	if err != nil {
		t.Fatal(err, errOut)
	}
	mask := func(s string) string { // the timings differ
		return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r >= '0' && r <= '9' }), "#")
	}
	if mask(served) != mask(local) || !strings.Contains(served, "heron") {
		t.Errorf("through the server:\n%s\nin-process:\n%s", served, local)
	}
	if after, _ := serveInfo(t, home); after.Requests <= in.Requests {
		t.Errorf("recall did not go through the server (%d requests, then %d)", in.Requests, after.Requests)
	}
	status, _, err := exe(home, "", nil, "serve", "status")
	if err != nil || !strings.Contains(status, "started:  on demand by a command; exits after 1h0m0s without a request") {
		t.Errorf("serve status:\n%s %v", status, err)
	}
	// By hand: the on-demand server gives way.
	out, errOut, err = exe(home, "", nil, "serve", "--detach", "--listen", "")
	if err != nil {
		t.Fatalf("serve --detach over an on-demand server: %v %s %s", err, out, errOut)
	}
	if byHand := waitServer(t, home); byHand.OnDemand || byHand.PID == in.PID {
		t.Errorf("after serve --detach: %+v", byHand)
	}
}

// TestOnDemandRace: commands started at once on a home without a server
// all answer, and one server is left, no zombie.
func TestOnDemandRace(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	if _, errOut, err := exe(home, "", nil, "remember", "--category", "reference", "--file", "birds", "the heron nests by the lake"); err != nil {
		t.Fatal(err, errOut)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, errOut, err := exe(home, "", onDemand, "recall", "heron")
			if err != nil || !strings.Contains(out, "heron") {
				errs <- fmt.Errorf("call %d: %v %q %q", i, err, out, errOut)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	in := waitServer(t, home)
	t.Cleanup(func() { stopServer(t, home) })
	// The losers exit once they find the home's lock taken.
	var live, zombies []int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if live, zombies = onDemandServers(t, home); len(live) == 1 && len(zombies) == 0 {
			break
		}
	}
	if len(live) != 1 || live[0] != in.PID || len(zombies) != 0 {
		t.Fatalf("servers of the home %v (the one answering: %d), zombies %v; log:\n%s", live, in.PID, zombies, readLog(home))
	}
}

// TestOnDemandIdleExitAndKill: a server started on demand exits by itself
// once idle; one killed in the middle of a command leaves the command to
// run in its process (the write stored once), and the next command
// starts another.
func TestOnDemandIdleExitAndKill(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	idle := append(onDemand, "MEMHOST_SERVER_IDLEEXITSECONDS=1")
	if _, errOut, err := exe(home, "", idle, "status"); err != nil {
		t.Fatal(err, errOut)
	}
	in := waitServer(t, home)
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(in.PID, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the idle on-demand server (pid %d) did not exit; log:\n%s", in.PID, readLog(home))
		}
	}
	if live, zombies := onDemandServers(t, home); len(live)+len(zombies) != 0 {
		t.Fatalf("after the idle exit: servers %v, zombies %v", live, zombies)
	}

	// Killed mid-command: the server dies after the write and before its
	// answer (MEMHOST_CRASH_AFTER_WRITE, which the server it starts keeps).
	crash := append(onDemand, "MEMHOST_CRASH_AFTER_WRITE=*")
	if _, errOut, err := exe(home, "", crash, "status"); err != nil {
		t.Fatal(err, errOut)
	}
	killed := waitServer(t, home)
	_, errOut, err := exe(home, "", crash, "daily-log", "the kingfisher came back")
	if err != nil {
		t.Fatalf("daily-log through a server killed mid-call: %v %s", err, errOut)
	}
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(killed.PID, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server did not kill itself after the write")
		}
	}
	days, _ := filepath.Glob(filepath.Join(home, "notebook", "daily", "*.md"))
	n := 0
	for _, d := range days {
		b, _ := os.ReadFile(d)
		n += strings.Count(string(b), "the kingfisher came back")
	}
	if n != 1 {
		t.Fatalf("the daily log holds the entry %d times, want 1", n)
	}
	if _, errOut, err := exe(home, "", onDemand, "status"); err != nil {
		t.Fatal(err, errOut)
	}
	if again := waitServer(t, home); again.PID == killed.PID || !again.OnDemand {
		t.Errorf("after the kill, the next command's server: %+v", again)
	}
	stopServer(t, home)
}

// TestOnDemandReadOnlyHome: on a home whose disk is read-only a command
// answers as it does without autostart, and no server is left trying.
func TestOnDemandReadOnlyHome(t *testing.T) {
	t.Parallel() // a home and processes of its own
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=16m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v)", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	home := filepath.Join(dir, "home")
	if _, errOut, err := exe(home, "", nil, "remember", "--category", "reference", "--file", "birds", "the heron nests by the lake"); err != nil {
		t.Fatal(err, errOut)
	}
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only (%v)", err)
	}
	defer syscall.Mount("", dir, "", syscall.MS_REMOUNT, "")
	off, offErr, offRun := exe(home, "", nil, "recall", "heron")
	on, onErr, onRun := exe(home, "", onDemand, "recall", "heron")
	if exitCode(onRun) != exitCode(offRun) || on != off || onErr != offErr {
		t.Errorf("on a read-only home, with autostart: %d %q %q; without: %d %q %q", exitCode(onRun), on, onErr, exitCode(offRun), off, offErr)
	}
	time.Sleep(500 * time.Millisecond)
	if live, zombies := onDemandServers(t, home); len(live)+len(zombies) != 0 {
		t.Errorf("servers %v, zombies %v on a read-only home", live, zombies)
	}
}

// TestOnDemandMCP: an MCP session that finds no server starts one and runs
// its calls through it once it answers.
func TestOnDemandMCP(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	cmd := exec.Command(binary, "--home", home, "mcp")
	cmd.Env = append(os.Environ(), onDemand...)
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcpsdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	t.Cleanup(func() { stopServer(t, home) })
	mcpCall(t, cs, "remember", map[string]any{"text": "the heron nests by the lake", "category": "reference", "file": "birds"}, nil)
	in := waitServer(t, home)
	if !in.OnDemand || in.Requests < 2 { // the call, and this status
		t.Errorf("the session's server: %+v (want on demand, the call through it)", in)
	}
}

// TestOnDemandStartFails: a server that cannot start (the address
// config.yaml chooses is taken) is recorded, and the commands after it run
// in-process without starting another for a while; the commands answer.
func TestOnDemandStartFails(t *testing.T) {
	t.Parallel() // a home and processes of its own
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("server:\n  listen: "+ln.Addr().String()+"\n"), 0o600)
	if _, errOut, err := exe(home, "", onDemand, "remember", "--category", "reference", "--file", "birds", "the heron nests by the lake"); err != nil {
		t.Fatal(err, errOut)
	}
	marker := filepath.Join(home, "brain", "autostart-failed")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record of the failed start; log:\n%s", readLog(home))
		}
	}
	// The failed server's last words (its error) reach the log as it
	// exits, after the record.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if live, zombies := onDemandServers(t, home); len(live)+len(zombies) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server that failed to start did not exit")
		}
	}
	before := readLog(home)
	for range 3 {
		if out, errOut, err := exe(home, "", onDemand, "recall", "heron"); err != nil || !strings.Contains(out, "heron") {
			t.Fatalf("recall after the failed start: %v %q %q", err, out, errOut)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if after := readLog(home); after != before {
		t.Errorf("commands started servers again after a failed start:\n%s", strings.TrimPrefix(after, before))
	}
	if live, zombies := onDemandServers(t, home); len(live)+len(zombies) != 0 {
		t.Errorf("servers %v, zombies %v", live, zombies)
	}
}

// TestOnDemandDropsOverrides: the overrides of config.yaml a first command
// runs with are its own: the server it starts runs without them, so the
// commands after it, without them, answer through it.
func TestOnDemandDropsOverrides(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	if _, errOut, err := exe(home, "", append(onDemand, "MEMHOST_MEMORY_SEARCH_MAXRESULTS=1"), "remember", "--category", "reference", "--file", "birds", "the heron nests by the lake"); err != nil {
		t.Fatal(err, errOut)
	}
	in := waitServer(t, home)
	t.Cleanup(func() { stopServer(t, home) })
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", in.PID))
	if err != nil {
		t.Fatal(err)
	}
	if vars := "\x00" + string(env); strings.Contains(vars, "\x00MEMHOST_MEMORY_SEARCH_MAXRESULTS=") || !strings.Contains(vars, "\x00MEMHOST_SERVER_AUTOSTART=true\x00") {
		t.Errorf("the server's environment keeps the command's override, or loses the server block's: %q", strings.ReplaceAll(string(env), "\x00", " "))
	}
	if _, errOut, err := exe(home, "", onDemand, "recall", "heron"); err != nil {
		t.Fatal(err, errOut)
	}
}
