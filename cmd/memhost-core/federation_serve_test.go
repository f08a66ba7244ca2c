package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// exeIn runs the binary in dir (its working folder) on home.
func exeIn(dir, home string, args ...string) (string, string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MEMHOST_HOME="+home)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// TestFederationCommandsForwarded: with memhost serve running, git init,
// sync --remote, export and import are run by the server (it counts the
// requests), and relative paths given on the command line name files in
// the caller's folder, not the server's.
func TestFederationCommandsForwarded(t *testing.T) {
	t.Parallel() // a home and processes of its own
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git federation is tested with the git binary, which is not installed (make need-git installs it): %v", err)
	}
	work := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", filepath.Join(work, "memory.git")).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	a, b := fedHome(t, "a"), fedHome(t, "b")
	mustExe(t, a, "remember", "--category", "knowledge", "--file", "home", "The spare key is under the blue pot")
	for _, h := range []string{a, b} {
		mustExe(t, h, "serve", "--detach")
		t.Cleanup(func() { exe(h, "", nil, "serve", "stop") })
	}
	run := func(home string, args ...string) string {
		t.Helper()
		before, err := serveInfo(t, home)
		if err != nil {
			t.Fatal(err)
		}
		out, errOut, err := exeIn(work, home, args...)
		if err != nil {
			t.Fatalf("memhost %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
		after, err := serveInfo(t, home)
		if err != nil {
			t.Fatal(err)
		}
		// One request for the command, one for serve status itself.
		if n := after.Requests - before.Requests; n < 2 {
			t.Errorf("memhost %s: the server answered %d requests; was it forwarded?", strings.Join(args, " "), n)
		}
		return out
	}

	remote := filepath.Join(work, "memory.git")
	out := run(a, "git", "init", "--remote", "memory.git")
	if !strings.Contains(out, "made a git repository of") || !strings.Contains(out, "remote: "+remote+"\n") || !strings.Contains(out, "synced with "+remote+" (main)") {
		t.Fatalf("git init: %s", out)
	}
	if cfg, _ := os.ReadFile(filepath.Join(a, "config.yaml")); !strings.Contains(string(cfg), remote) {
		t.Fatalf("config.yaml does not name the remote's absolute path:\n%s", cfg)
	}
	mustExe(t, a, "remember", "--category", "knowledge", "--file", "home", "The boiler is serviced in October")
	if out := run(a, "sync", "--remote"); !strings.Contains(out, "synced with "+remote+" (main)") || !strings.Contains(out, ", pushed;") {
		t.Fatalf("sync --remote: %s", out)
	}
	if got, err := exec.Command("git", "--git-dir", remote, "show", "main:notebook/knowledge/home.md").CombinedOutput(); err != nil || !strings.Contains(string(got), "boiler") {
		t.Fatalf("the remote after sync --remote: %v %s", err, got)
	}

	if out := run(a, "export", "backup.tar.gz"); !strings.HasPrefix(out, "exported ") || !strings.Contains(out, filepath.Join(work, "backup.tar.gz")) {
		t.Fatalf("export: %s", out)
	}
	if _, err := os.Stat(filepath.Join(work, "backup.tar.gz")); err != nil {
		t.Fatalf("the archive is not in the caller's folder: %v", err)
	}
	if out := run(b, "import", "backup.tar.gz"); !strings.HasPrefix(out, "imported ") || strings.Contains(out, " 0 added") {
		t.Fatalf("import: %s", out)
	}
	if out := mustExe(t, b, "recall", "boiler serviced"); !strings.Contains(out, "knowledge/home.md") {
		t.Fatalf("recall of an imported page: %s", out)
	}

	// Refused through the server as in-process: one line naming the file.
	_, errOut, err := exeIn(work, a, "export", "backup.tar.gz")
	if exitCode(err) != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, filepath.Join(work, "backup.tar.gz")+" already exists") {
		t.Fatalf("export over an existing file: %v %q", err, errOut)
	}
	_, errOut, err = exeIn(work, b, "import", "nope.tar.gz")
	if exitCode(err) != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, filepath.Join(work, "nope.tar.gz")) {
		t.Fatalf("import of a missing file: %v %q", err, errOut)
	}
}
