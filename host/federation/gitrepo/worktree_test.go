package gitrepo

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memhost/memhost/host/federation/gitrepo/gitindex"
	"github.com/memhost/memhost/internal/fsx"
)

// TestPullNeverWritesThroughASymlink: a folder swapped for a symlink out
// of the home after the pull looked (CheckWorkTree) and before it writes:
// the remote's page is not written there, nor the outside file removed.
func TestPullNeverWritesThroughASymlink(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	if err := exec.Command("git", "init", "-q", dir).Run(); err != nil {
		t.Fatal(err)
	}
	const secret = "# Contacts\n\nthe outside file\n"
	if err := os.WriteFile(filepath.Join(out, "contacts.md"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "notebook"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(dir, "notebook", "reference")); err != nil {
		t.Fatal(err)
	}
	r := &Repo{Dir: dir}
	home, err := r.OpenHome()
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	write := TreeChange{Path: "notebook/reference/contacts.md", OldMode: ModeFile, NewMode: ModeFile, OldOID: "1", NewOID: "2"}
	if err := r.applyToWorkTree(home, &gitindex.Index{}, write, []byte("# From the remote\n")); !errors.Is(err, fsx.ErrSymlink) {
		t.Fatalf("write: %v, want ErrSymlink", err)
	}
	remove := TreeChange{Path: "notebook/reference/contacts.md", OldMode: ModeFile, OldOID: "1"}
	if err := r.applyToWorkTree(home, &gitindex.Index{}, remove, nil); !errors.Is(err, fsx.ErrSymlink) {
		t.Fatalf("remove: %v, want ErrSymlink", err)
	}
	if got, err := os.ReadFile(filepath.Join(out, "contacts.md")); err != nil || string(got) != secret {
		t.Fatalf("the outside file was replaced: %q, %v", got, err)
	}
}
