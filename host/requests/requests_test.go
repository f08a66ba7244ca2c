package requests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestChange(t *testing.T) {
	for _, c := range []struct{ old, next, ctx, was, now string }{
		{"", "# A\n", "", "", "# A\n"},
		{"# A\n", "# A\n\n- x\n", "# A\n", "", "\n- x\n"},
		{"# A\n\n## S\n\n- a\n\n## T\n", "# A\n\n## S\n\n- a\n- b\n\n## T\n", "# A\n\n## S\n\n- a\n", "", "- b\n"},
		{"# A\n- a\n", "# B\n- a\n", "# ", "A", "B"},
		{"# A\n- a\n", "# A\n", "# A\n", "- a\n", ""},
		{"# A\n- a\n", "# A\n- a\n", "# A\n- a\n", "", ""},
	} {
		ctx, was, now := Change([]byte(c.old), []byte(c.next))
		if ctx != c.ctx || was != c.was || now != c.now {
			t.Errorf("Change(%q, %q) = %q %q %q, want %q %q %q", c.old, c.next, ctx, was, now, c.ctx, c.was, c.now)
		}
	}
	long := strings.Repeat("x", 100) + "!"
	if ctx, _, _ := Change([]byte(long), []byte(long+"?")); len(ctx) != contextBytes {
		t.Errorf("the context kept is %d bytes, want %d", len(ctx), contextBytes)
	}
}

// record is what a write of before into after records.
func record(before, after []byte) Record {
	ctx, was, now := Change(before, after)
	return Record{Before: Hash(before, true), After: Hash(after, true), Context: ctx, Old: was, New: now}
}

func TestLanded(t *testing.T) {
	before, after := []byte("# Log\n"), []byte("# Log\n\n## 10:00 — shipped it\n")
	r := record(before, after)
	later := append(append([]byte(nil), after...), "\n## 10:01 — another entry\n"...)
	other := []byte("# Log\n\n## 10:01 — another entry\n")
	for _, c := range []struct {
		name   string
		page   []byte
		exists bool
		want   bool
	}{
		{"as written", after, true, true},
		{"as before", before, true, false},
		{"written, then others wrote", later, true, true},
		{"not written, others wrote", other, true, false},
		{"page gone", nil, false, false},
	} {
		if got := r.Landed(c.page, c.exists); got != c.want {
			t.Errorf("%s: Landed = %v, want %v", c.name, got, c.want)
		}
	}
	// A short write is told from the same text elsewhere by what precedes it.
	short := record([]byte("# Notes\n\nfirst\n"), []byte("# Notes\n\nfirst\n\nok\n"))
	if !short.Landed([]byte("# Notes\n\nfirst\n\nok\n\nlater\n"), true) {
		t.Errorf("a short write under a later one was not found")
	}
	if short.Landed([]byte("# Notes\n\nok\n\nfirst\n\nlater\n"), true) {
		t.Errorf("the same short text elsewhere was taken for the write")
	}
	// A write that removed text landed when the text is gone.
	cut := record([]byte("# A\n\n- drop me\n- keep\n"), []byte("# A\n\n- keep\n"))
	if !cut.Landed([]byte("# A\n\n- keep\n- new\n"), true) || cut.Landed([]byte("# A\n\n- drop me\n- keep\n- new\n"), true) {
		t.Errorf("a removal was judged wrongly under a later write")
	}
}

func TestJournal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "requests")
	j := Open(dir)
	if _, ok, err := j.Get("nope"); ok || err != nil {
		t.Fatalf("Get of a missing record: %v %v", ok, err)
	}
	r := Record{ID: "abc-1", Op: "write", Path: "a.md", Before: "x", After: "y", Response: []byte(`{"path":"a.md"}`)}
	if err := j.Put(r); err != nil {
		t.Fatal(err)
	}
	got, ok, err := j.Get("abc-1")
	if err != nil || !ok || got.Op != "write" || got.Path != "a.md" || string(got.Response) != `{"path":"a.md"}` || got.Time.IsZero() {
		t.Fatalf("Get = %+v %v %v", got, ok, err)
	}
	if err := j.Put(Record{ID: "../escape"}); err == nil {
		t.Fatalf("Put of an id naming another folder succeeded")
	}
	// A record older than Keep is swept by the next write after the
	// sweep's interval; a recent one stays.
	old := time.Now().Add(-Keep - time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "abc-1.json"), old, old); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, sweptMarker)
	if err := os.Chtimes(marker, old, old); err != nil {
		t.Fatal(err)
	}
	if err := j.Put(Record{ID: "abc-2", Op: "rm"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := j.Get("abc-1"); ok {
		t.Errorf("a record older than Keep was kept")
	}
	if _, ok, _ := j.Get("abc-2"); !ok {
		t.Errorf("a new record was swept")
	}
	// A torn record is as none.
	if err := os.WriteFile(filepath.Join(dir, "torn.json"), []byte(`{"id":"to`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := j.Get("torn"); ok || err != nil {
		t.Errorf("a torn record: %v %v", ok, err)
	}
}

// TestRecordsOfRenamedOps: a record written under an operation's name
// before it took its table name reads as the table's name, so that a
// retry across the upgrade replays instead of conflicting.
func TestRecordsOfRenamedOps(t *testing.T) {
	j := Open(filepath.Join("testdata", "legacy"))
	for id, want := range map[string]string{"fa-1": "fact/add", "mr-1": "models/rm"} {
		got, ok, err := j.Get(id)
		if err != nil || !ok || got.Op != want {
			t.Errorf("Get(%s) = %+v %v %v, want op %s", id, got, ok, err, want)
		}
	}
}
