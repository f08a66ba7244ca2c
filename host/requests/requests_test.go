package requests

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestInserted(t *testing.T) {
	for _, c := range []struct{ old, next, want string }{
		{"", "# A\n", "# A\n"},
		{"# A\n", "# A\n\n- x\n", "\n- x\n"},
		{"# A\n\n## S\n\n- a\n\n## T\n", "# A\n\n## S\n\n- a\n- b\n\n## T\n", "- b\n"},
		{"# A\n- a\n", "# B\n- a\n", ""},           // changed
		{"# A\n- a\n", "# A\n", ""},                // removed
		{"abc", "xabcx", ""},                       // two insertions
		{"# A\n- a\n", "# A\n- a\n", ""},           // unchanged
		{"aaaa", "aaaaaa", "aa"},                   // where is ambiguous, what is not
		{"# A\n- b\n", "# A\n- a\n- b\n", "a\n- "}, // the run, wherever it starts
	} {
		if got := Inserted([]byte(c.old), []byte(c.next)); got != c.want {
			t.Errorf("Inserted(%q, %q) = %q, want %q", c.old, c.next, got, c.want)
		}
	}
}

func TestLanded(t *testing.T) {
	before, after := []byte("# Log\n"), []byte("# Log\n\n## 10:00 — shipped it\n")
	r := Record{Before: Hash(before, true), After: Hash(after, true), Inserted: Inserted(before, after)}
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
	// A new page: before is "no page".
	created := Record{Before: Hash(nil, false), After: Hash(after, true), Inserted: Inserted(nil, after)}
	if created.Landed(nil, false) || !created.Landed(after, true) {
		t.Errorf("a created page: landed on a missing page, or not on the page written")
	}
	// Too short an insertion is not looked for under others' writes.
	short := Record{Before: Hash([]byte("a"), true), After: Hash([]byte("ab"), true), Inserted: "b"}
	if short.Landed([]byte("abc"), true) {
		t.Errorf("a one-byte insertion was taken as landed under others' writes")
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
