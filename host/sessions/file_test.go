package sessions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
)

func newStore(t *testing.T) *Store {
	dir := filepath.Join(t.TempDir(), "sessions")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &Store{Dir: dir, Now: time.Now}
}

// turnsOf reads a transcript's lines; a line that is not a whole JSON turn
// fails the test.
func turnsOf(t *testing.T, path string) []memhost.Turn {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("%s ends in a torn line: %q", path, data[max(0, len(data)-40):])
	}
	var out []memhost.Turn
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var tr memhost.Turn
		if err := json.Unmarshal([]byte(line), &tr); err != nil {
			t.Fatalf("%s:%d: %v: %q", path, i+1, err, line)
		}
		out = append(out, tr)
	}
	return out
}

func writeLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImportRepairsTornTail: a crash mid-write leaves half a line at the
// end of a transcript; the next import cuts it off (keeping its bytes aside
// and saying so), instead of gluing the next line onto it, and restores
// every turn.
func TestImportRepairsTornTail(t *testing.T) {
	s := newStore(t)
	src := filepath.Join(t.TempDir(), "talk.jsonl")
	writeLines(t, src,
		`{"id":"a","role":"user","content":"one"}`,
		`{"id":"b","role":"assistant","content":"two"}`,
		`{"id":"c","role":"user","content":"three"}`)
	dest := s.file("talk")
	os.WriteFile(dest, []byte(`{"id":"a","type":"message","role":"user","content":"one"}`+"\n"+`{"id":"b","type":"mess`), 0o644)

	res, err := s.Import(context.Background(), "", src, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 2 || res.Known != 1 || len(res.Repaired) != 1 {
		t.Fatalf("import = %+v", res)
	}
	got := turnsOf(t, dest)
	if len(got) != 3 || got[1].ID != "b" || got[2].Content != "three" {
		t.Fatalf("transcript = %+v", got)
	}
	kept, err := os.ReadFile(filepath.Join(s.Dir, tornFile))
	if err != nil || !strings.Contains(string(kept), `type\":\"mess`) {
		t.Fatalf("torn bytes not kept: %q, %v", kept, err)
	}
	// Importing again adds nothing and repairs nothing.
	res, err = s.Import(context.Background(), "", src, FormatAuto)
	if err != nil || res.Added != 0 || res.Known != 3 || len(res.Repaired) != 0 {
		t.Fatalf("again = %+v, %v", res, err)
	}
}

// TestAppendRepairsTornTail: the same for one appended turn; a last line
// that is whole but lacks its newline (an editor's save) is kept.
func TestAppendRepairsTornTail(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	dest := s.file("s")
	os.WriteFile(dest, []byte(`{"id":"a","type":"message","role":"user","content":"one"}`+"\n"+`{"id":"b","ty`), 0o644)
	a, err := s.Append(ctx, "s", memhost.Turn{Type: "message", Role: "user", Content: "two"})
	if err != nil || a.Repaired == "" {
		t.Fatalf("append = %+v, %v", a, err)
	}
	os.WriteFile(dest, append(mustRead(t, dest), `{"id":"c","type":"message","role":"user","content":"three"}`...), 0o644)
	if _, err := s.Append(ctx, "s", memhost.Turn{Type: "message", Role: "user", Content: "four"}); err != nil {
		t.Fatal(err)
	}
	var contents []string
	for _, tr := range turnsOf(t, dest) {
		contents = append(contents, tr.Content)
	}
	if got, want := strings.Join(contents, ","), "one,two,three,four"; got != want {
		t.Fatalf("turns = %s, want %s", got, want)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAppendRefusesSymlink: a transcript that is a symlink (here to a file
// outside the home) is never written through.
func TestAppendRefusesSymlink(t *testing.T) {
	s := newStore(t)
	outside := filepath.Join(t.TempDir(), "victim.jsonl")
	os.WriteFile(outside, []byte("keep\n"), 0o644)
	if err := os.Symlink(outside, s.file("evil")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Append(context.Background(), "evil", memhost.Turn{Type: "message", Role: "user", Content: "x"})
	if err == nil || !strings.Contains(err.Error(), "sessions/evil.jsonl") || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("append through a symlink: %v", err)
	}
	src := filepath.Join(t.TempDir(), "evil.jsonl")
	writeLines(t, src, `{"role":"user","content":"x"}`)
	if res, err := s.Import(context.Background(), "", src, FormatAuto); err == nil && res.Session == "evil" {
		t.Fatalf("import through a symlink: %+v", res)
	}
	if got := string(mustRead(t, outside)); got != "keep\n" {
		t.Fatalf("outside file written: %q", got)
	}
}

// TestImportSameNameDistinctSources: id-less transcripts of the same file
// name in different folders become different sessions; each one imported
// again goes to its own session and adds nothing.
func TestImportSameNameDistinctSources(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	root := t.TempDir()
	a, b := filepath.Join(root, "a", "chat.jsonl"), filepath.Join(root, "b", "chat.jsonl")
	os.Mkdir(filepath.Dir(a), 0o755)
	os.Mkdir(filepath.Dir(b), 0o755)
	writeLines(t, a, `{"role":"user","content":"alpha one"}`, `{"role":"assistant","content":"alpha two"}`)
	writeLines(t, b, `{"role":"user","content":"beta one"}`, `{"role":"assistant","content":"beta two"}`, `{"role":"user","content":"beta three"}`)
	ra, err := s.Import(ctx, "", a, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := s.Import(ctx, "", b, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if ra.Session == rb.Session || ra.Added != 2 || rb.Added != 3 {
		t.Fatalf("a = %+v, b = %+v", ra, rb)
	}
	for _, c := range []struct {
		path, session string
		turns         int
	}{{a, ra.Session, 2}, {b, rb.Session, 3}} {
		r, err := s.Import(ctx, "", c.path, FormatAuto)
		if err != nil || r.Session != c.session || r.Added != 0 || r.Known != c.turns {
			t.Fatalf("again %s = %+v, %v", c.path, r, err)
		}
		if got := len(turnsOf(t, s.file(c.session))); got != c.turns {
			t.Fatalf("%s has %d turns, want %d", c.session, got, c.turns)
		}
	}
}

// TestImportLinesThatAreNotTurns: null, {} and objects without content are
// left out and counted; malformed lines are counted too; a file with no
// turn at all makes no session.
func TestImportLinesThatAreNotTurns(t *testing.T) {
	s := newStore(t)
	src := filepath.Join(t.TempDir(), "odd.jsonl")
	writeLines(t, src, `null`, `{}`, `{"role":"user","content":"real"}`, `{"id":"x","content":""}`, `[1,2]`, `{broken`)
	res, err := s.Import(context.Background(), "", src, FormatMemhost)
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 1 || res.Skipped != 5 || len(res.Problems) != 2 {
		t.Fatalf("import = %+v", res)
	}
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	writeLines(t, empty, `null`, `{broken`)
	res, err = s.Import(context.Background(), "", empty, FormatMemhost)
	if err != nil || res.Added != 0 {
		t.Fatalf("import = %+v, %v", res, err)
	}
	if _, err := os.Stat(s.file(res.Session)); !os.IsNotExist(err) {
		t.Fatalf("a file with no turns made %s: %v", s.file(res.Session), err)
	}
}

// TestLineProblemsInPlainWords: a malformed line is described without
// Go's type names.
func TestLineProblemsInPlainWords(t *testing.T) {
	s := newStore(t)
	src := filepath.Join(t.TempDir(), "odd.jsonl")
	writeLines(t, src, `[1,2]`, `{"id":5,"content":"x"}`, `{broken`, `{"content":"fine"}`)
	res, err := s.Import(context.Background(), "", src, FormatMemhost)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(res.Problems, "\n")
	for _, want := range []string{`:1: a JSON array, not a turn (an object with "content"); skipped`, `:2: its "id" is a JSON number, not a string; skipped`, `:3: invalid character`} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q lack %q", got, want)
		}
	}
	if strings.Contains(got, "sessions.Turn") || strings.Contains(got, "Go ") {
		t.Errorf("Go's names in %q", got)
	}
}

// TestImportClaimsAnEmptyOrphan: an import killed after creating its
// session's file but before recording the source left it empty; the next
// import of the same name takes it instead of moving on to name-2.
func TestImportClaimsAnEmptyOrphan(t *testing.T) {
	s := newStore(t)
	os.WriteFile(s.file("chat"), nil, 0o644)
	src := filepath.Join(t.TempDir(), "chat.jsonl")
	writeLines(t, src, `{"role":"user","content":"hello"}`)
	res, err := s.Import(context.Background(), "", src, FormatAuto)
	if err != nil || res.Session != "chat" || res.Added != 1 {
		t.Fatalf("import = %+v, %v", res, err)
	}
}

// TestImportRaceForANewSession: a second importer that locks a session's
// new transcript before the importer that created it (between its create
// and its lock) must leave neither doubled turns (the same source) nor two
// sources merged into one session.
func TestImportRaceForANewSession(t *testing.T) {
	ctx := context.Background()
	for _, sameSource := range []bool{true, false} {
		s := newStore(t)
		other := &Store{Dir: s.Dir, Now: s.Now}
		root := t.TempDir()
		a, b := filepath.Join(root, "a", "chat.jsonl"), filepath.Join(root, "b", "chat.jsonl")
		os.Mkdir(filepath.Dir(a), 0o755)
		os.Mkdir(filepath.Dir(b), 0o755)
		writeLines(t, a, `{"role":"user","content":"alpha one"}`, `{"role":"assistant","content":"alpha two"}`)
		writeLines(t, b, `{"role":"user","content":"beta one"}`)
		second := b
		if sameSource {
			second = a
		}
		var rb memhost.IngestFile
		var errb error
		beforeLock = func(string) {
			beforeLock = nil // the second import runs through
			rb, errb = other.Import(ctx, "", second, FormatAuto)
		}
		ra, err := s.Import(ctx, "", a, FormatAuto)
		beforeLock = nil
		if err != nil || errb != nil {
			t.Fatal(err, errb)
		}
		turns := map[string]int{}
		for _, session := range []string{"chat", "chat-2"} {
			if _, err := os.Stat(s.file(session)); err != nil {
				continue
			}
			for _, tu := range turnsOf(t, s.file(session)) {
				turns[session+": "+tu.Content]++
			}
		}
		var want map[string]int
		if sameSource {
			want = map[string]int{"chat: alpha one": 1, "chat: alpha two": 1}
		} else if ra.Session == "chat-2" && rb.Session == "chat" {
			want = map[string]int{"chat: beta one": 1, "chat-2: alpha one": 1, "chat-2: alpha two": 1}
		}
		if !reflect.DeepEqual(turns, want) {
			t.Errorf("same source %v: a → %s, second → %s; turns %v", sameSource, ra.Session, rb.Session, turns)
		}
	}
}
