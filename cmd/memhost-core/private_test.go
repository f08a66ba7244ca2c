package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// exeUmask runs the binary under umask 022, the usual default that made
// a home's files readable by every local user.
func exeUmask(t *testing.T, home string, args ...string) string {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", `umask 022; exec "$0" "$@"`, binary}, args...)...)
	cmd.Env = append(os.Environ(), "MEMHOST_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("memhost %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// openToOthers lists what under root a group or another user can read.
func openToOthers(t *testing.T, root string) []string {
	t.Helper()
	var open []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if fi, err := d.Info(); err == nil && d.Type()&fs.ModeSymlink == 0 && fi.Mode().Perm()&0o077 != 0 {
			open = append(open, strings.TrimPrefix(p, root)+" "+fi.Mode().Perm().String())
		}
		return nil
	})
	return open
}

// A home made by memhost under umask 022 is the user's alone: the folder
// 0700, its files 0600 (transcripts, the index, config.yaml).
func TestHomeIsPrivate(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	exeUmask(t, home, "init")
	exeUmask(t, home, "remember", "--category", "reference", "the staging password is hunter2")
	exeUmask(t, home, "session", "append", "--session", "s1", "--role", "user", "a turn")
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("home: %v %v", fi.Mode(), err)
	}
	for _, f := range []string{"config.yaml", "sessions/s1.jsonl", "brain/memory.db"} {
		if fi, err := os.Stat(filepath.Join(home, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, fi.Mode(), err)
		}
	}
	if open := openToOthers(t, home); len(open) > 0 {
		t.Fatalf("readable by others: %v", open)
	}
}

// A home left open to others (made by an older memhost, or by hand) is
// made private when it is opened, and health says what was repaired.
func TestHomeMadePrivateOnOpen(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	os.MkdirAll(filepath.Join(home, "sessions"), 0o755)
	os.Chmod(home, 0o755)
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("memory: {}\n"), 0o644)
	os.Chmod(filepath.Join(home, "config.yaml"), 0o644)
	out := exeUmask(t, home, "health", "--json")
	if fi, _ := os.Stat(home); fi.Mode().Perm() != 0o700 {
		t.Fatalf("home not repaired: %v", fi.Mode())
	}
	for _, f := range []string{"config.yaml", "sessions"} {
		if fi, _ := os.Stat(filepath.Join(home, f)); fi.Mode().Perm()&0o077 != 0 {
			t.Fatalf("%s not repaired: %v", f, fi.Mode())
		}
	}
	var rep struct {
		Checks []struct{ Name, Status, Message string }
	}
	if i := strings.Index(out, "{"); i >= 0 {
		json.Unmarshal([]byte(out[i:]), &rep)
	}
	var msg string
	for _, c := range rep.Checks {
		if c.Name == "home-private" {
			msg = c.Status + ": " + c.Message
		}
	}
	if !strings.Contains(msg, "0755") || !strings.Contains(msg, "config.yaml") {
		t.Fatalf("health does not say what was repaired: %q\n%s", msg, out)
	}
}
