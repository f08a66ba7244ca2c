package federation

import (
	"os/exec"
	"testing"
)

// The records of sessions/ that name this machine's files or hold bytes
// cut off after a crash are never committed; transcripts and flush
// receipts are.
func TestLocalRecordsNotShared(t *testing.T) {
	r := &Repo{}
	for p, want := range map[string]bool{
		"sessions/s1.jsonl":              true,
		"sessions/.flush-receipts.jsonl": true,
		"sessions/.sources.jsonl":        false,
		"sessions/.torn-lines.jsonl":     false,
		"notebook/reference/contacts.md": true,
		"brain/memory.db":                false,
	} {
		if got := r.Shares(p); got != want {
			t.Errorf("Shares(%q) = %v, want %v", p, got, want)
		}
	}
}

// Nor does git show them to a person as files left to add: after a
// commit, a home holding them has a clean `git status` (the simulator's
// audit found .sources.jsonl listed as untracked for ever).
func TestLocalRecordsNotListedAsUntracked(t *testing.T) {
	r := newHome(t, "a", map[string]string{"notebook/reference/contacts.md": "# Contacts\n"})
	for name := range localOnly {
		write(t, r.Dir, "sessions/"+name, "{}\n")
	}
	out, err := exec.Command("git", "-C", r.Dir, "status", "--porcelain").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v %s", err, out)
	}
	if len(out) != 0 {
		t.Fatalf("git status lists:\n%s", out)
	}
}
