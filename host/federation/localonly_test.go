package federation

import "testing"

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
