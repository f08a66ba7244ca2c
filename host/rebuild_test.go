package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memhost/memhost"
)

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestRebuildRemovesLeftovers: a rebuild killed midway leaves its files;
// the next rebuild removes those of dead processes, not a live one's.
func TestRebuildRemovesLeftovers(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	if _, err := h.Remember(context.Background(), memhost.RememberRequest{Text: "Sarah Chen's phone is 555-1234"}); err != nil {
		t.Fatal(err)
	}
	brain := filepath.Join(h.Home(), "brain")
	dead := filepath.Join(brain, fmt.Sprintf("memory.db.rebuild-%d", deadPID(t)))
	live := filepath.Join(brain, fmt.Sprintf("memory.db.rebuild-%d", os.Getppid()))
	for _, p := range []string{dead, dead + "-wal", dead + "-shm", live} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Rebuild(context.Background(), memhost.RebuildRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dead, dead + "-wal", dead + "-shm"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left after a rebuild: %v", filepath.Base(p), err)
		}
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's rebuild file was removed: %v", err)
	}
}
