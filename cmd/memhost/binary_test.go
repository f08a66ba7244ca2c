package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the memhost executable built for these tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "memhost-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "memhost")
	build := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building memhost:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// exe runs the binary with home and extra environment.
func exe(home string, stdin string, env []string, args ...string) (string, string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "MEMHOST_HOME="+home)
	cmd.Env = append(cmd.Env, env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func TestBinaryPipedStdin(t *testing.T) {
	home := t.TempDir()
	out, errOut, err := exe(home, "Kettle descaling: every second Sunday\n", nil, "remember", "--category", "knowledge")
	if err != nil {
		t.Fatalf("remember from a pipe: %v %s", err, errOut)
	}
	if !strings.HasPrefix(out, "remembered in knowledge/facts.md") {
		t.Errorf("remember: %q", out)
	}
	out, _, err = exe(home, "", nil, "recall", "descaling", "--json")
	if err != nil || !strings.Contains(out, `"path": "knowledge/facts.md"`) {
		t.Errorf("recall: %v %s", err, out)
	}
	_, errOut, err = exe(home, "", nil, "get", "../secret")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || strings.Count(errOut, "\n") != 1 {
		t.Errorf("bad path through the binary: %v %q", err, errOut)
	}
}

// TestBinaryConcurrentWriters: memhost watch runs while several processes
// remember and recall at once. Every command succeeds, no "database is
// locked" reaches anyone, and every fact is on its page and found.
func TestBinaryConcurrentWriters(t *testing.T) {
	home := t.TempDir()
	if _, errOut, err := exe(home, "", nil, "init"); err != nil {
		t.Fatalf("init: %v %s", err, errOut)
	}
	watch := exec.Command(binary, "watch")
	watch.Env = append(os.Environ(), "MEMHOST_HOME="+home, "MEMHOST_MEMORY_SYNC_WATCHDEBOUNCEMS=50")
	stdout, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var watchErr bytes.Buffer
	watch.Stderr = &watchErr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	var watchLog strings.Builder
	logDone := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			watchLog.WriteString(sc.Text() + "\n")
		}
		close(logDone)
	}()

	const writers, each = 3, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				args := [][]string{
					{"remember", "--category", "knowledge", "--file", "shared", fmt.Sprintf("concurrent fact w%dn%d", w, i)},
					{"recall", "concurrent"},
				}
				for _, a := range args {
					_, errOut, err := exe(home, "", nil, a...)
					if err != nil || errOut != "" {
						mu.Lock()
						failures = append(failures, fmt.Sprintf("%v: %v %s", a, err, errOut))
						mu.Unlock()
					}
				}
			}
		}()
	}
	// Meanwhile an editor writes pages behind memhost's back, for watch.
	for i := range 5 {
		os.WriteFile(filepath.Join(home, "notebook", "knowledge", fmt.Sprintf("editor%d.md", i)), []byte(fmt.Sprintf("# Editor\nhandwritten note %d\n", i)), 0o644)
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}

	page, err := os.ReadFile(filepath.Join(home, "notebook", "knowledge", "shared.md"))
	if err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		for i := range each {
			fact := fmt.Sprintf("concurrent fact w%dn%d", w, i)
			if !strings.Contains(string(page), "- "+fact+"\n") {
				t.Errorf("lost %q", fact)
			}
		}
	}
	// The watcher indexes the editor's pages without anyone searching.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _, err := exe(home, "", []string{"MEMHOST_MEMORY_SYNC_SYNCONSEARCH=false"}, "recall", "handwritten", "--json", "--max-results", "10")
		if err == nil && strings.Count(out, `"path": "knowledge/editor`) == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch did not index the editor's pages: %s\nwatch log:\n%s", out, watchLog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	watch.Process.Signal(syscall.SIGINT)
	if err := watch.Wait(); err != nil {
		t.Errorf("watch exited with %v: %s", err, watchErr.String())
	}
	<-logDone
	if !strings.Contains(watchLog.String(), "knowledge/editor") {
		t.Errorf("watch did not log what it indexed:\n%s", watchLog.String())
	}
	if strings.Contains(watchErr.String(), "locked") {
		t.Errorf("watch stderr: %s", watchErr.String())
	}
}
