package sessions

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
)

// A line longer than MaxLine is skipped, handed to fn as a nil line (so
// that a caller counting malformed lines counts it), and every line after
// it is still read, with its own number.
func TestReadLinesSkipsTooLong(t *testing.T) {
	long := bytes.Repeat([]byte("x"), MaxLine+1)
	for _, tail := range []string{"\n", ""} {
		in := append(append([]byte("first\n"), long...), []byte("\n\nthird"+tail)...)
		var got []string
		err := ReadLines(bytes.NewReader(in), 1, func(n int, line []byte) error {
			if line == nil {
				got = append(got, "nil")
			} else {
				got = append(got, string(line))
			}
			got[len(got)-1] += "@" + string(rune('0'+n))
			return nil
		})
		if want := "first@1 nil@2 third@4"; err != nil || strings.Join(got, " ") != want {
			t.Fatalf("tail %q: %v %v, want %s", tail, got, err, want)
		}
	}
}

// A 100 MB line in an ingested file is one skipped line: the turns after
// it are imported and the problem says which line and why.
func TestImportSkipsTooLongLine(t *testing.T) {
	s := newStore(t)
	src := filepath.Join(t.TempDir(), "big.jsonl")
	var b bytes.Buffer
	b.WriteString(`{"role":"user","content":"before"}` + "\n")
	b.WriteString(`{"role":"user","content":"`)
	b.Write(bytes.Repeat([]byte("y"), 100<<20))
	b.WriteString(`"}` + "\n")
	b.WriteString(`{"role":"user","content":"after"}` + "\n")
	if err := os.WriteFile(src, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := s.Import(context.Background(), "", src, FormatMemhost)
	if err != nil || res.Added != 2 || res.Skipped != 1 || len(res.Problems) != 1 || !strings.Contains(res.Problems[0], ":2: longer than") {
		t.Fatalf("import = %+v, %v", res, err)
	}
	if got := turnsOf(t, s.file(res.Session)); len(got) != 2 || got[1].Content != "after" {
		t.Fatalf("turns %+v", got)
	}
}

// A turn whose stored line would be longer than a reader takes is refused
// whole, naming its size, not its text; the transcript stays readable.
func TestAppendRefusesTooLongTurn(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, "s1", memhost.Turn{Role: "user", Content: "small"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Append(ctx, "s1", memhost.Turn{Role: "user", Content: strings.Repeat("z", MaxLine)})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != fault.BadInput || len(err.Error()) > 300 {
		t.Fatalf("append of a 64 MB turn: %.300v", err)
	}
	tr, err := s.Read("s1")
	if err != nil || len(tr.Turns) != 1 {
		t.Fatalf("read after the refusal: %d turns, %v", len(tr.Turns), err)
	}
}

// A turn appended while a Rewrite replaces the transcript lands in the
// new file: the appender opened the old one, and Rewrite renamed the new
// one over it before the appender got the lock.
func TestAppendDuringRewriteLands(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, "s1", memhost.Turn{Role: "user", Content: "first"}); err != nil {
		t.Fatal(err)
	}
	beforeLock = func(string) {
		beforeLock = nil // the rewrite's own open runs through
		if _, err := s.Rewrite("s1", func(data []byte) []byte { return bytes.ToUpper(data) }); err != nil {
			t.Error(err)
		}
	}
	defer func() { beforeLock = nil }()
	if _, err := s.Append(ctx, "s1", memhost.Turn{Role: "user", Content: "second"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.file("s1"))
	if err != nil || !bytes.Contains(data, []byte("FIRST")) || !bytes.Contains(data, []byte(`"second"`)) {
		t.Fatalf("the transcript after the rewrite and the append:\n%s %v", data, err)
	}
}
