package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGitDiesWithMemhost: a process running git through Repo, killed with
// SIGKILL, takes its git with it (an orphaned git fetch would race the
// next sync for its refs).
func TestGitDiesWithMemhost(t *testing.T) {
	if os.Getenv("MEMHOST_TEST_GIT_CHILD") != "" {
		// The child: a git that waits on a command of its own (an alias
		// running sleep), as a fetch waits on the remote.
		(&Repo{Dir: os.Getenv("MEMHOST_TEST_GIT_CHILD")}).GitIO(context.Background(), nil, nil, "-c", "alias.wait=!sleep 20", "wait")
		return
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	child := exec.Command(os.Args[0], "-test.run=^TestGitDiesWithMemhost$")
	child.Env = append(os.Environ(), "MEMHOST_TEST_GIT_CHILD="+dir)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	var git int
	for deadline := time.Now().Add(30 * time.Second); git == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the child never started git")
		}
		git = childNamed(child.Process.Pid, "git")
	}
	child.Process.Kill()
	child.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(git, 0); err == syscall.ESRCH || zombie(git) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(git, syscall.SIGKILL)
			t.Fatalf("git (pid %d) outlived the process that ran it", git)
		}
	}
}

// childNamed is the pid of a child of parent running command name, or 0.
func childNamed(parent int, name string) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) > 1 && s[open+1:end] == name && f[1] == strconv.Itoa(parent) {
			pid, _ := strconv.Atoi(strings.Fields(s)[0])
			return pid
		}
	}
	return 0
}

// zombie: pid has exited, its parent has not reaped it yet.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] == "Z"
}
