package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/memhost/memhost"
)

// FuzzReadLines checks the line reader against a plain split: every
// non-blank line, trimmed, with its number, in order, whatever the line
// endings, the lengths (long is the length of a line added at the end, up
// to 1 MiB, past the scanner's first buffer) and how the reader hands out
// its bytes.
func FuzzReadLines(f *testing.F) {
	for _, s := range []string{
		"", "\n", "a", "a\nb\n", "a\r\nb\r\n", "\n\n  \t\n x \n", "no final newline",
		`{"id":"1","type":"message","content":"hi"}` + "\n" + `{"id":"2","content":"yo"}`,
		"\r", "a\rb\n", "\xff\xfe\n\x00\n", "\f\v line \u00a0\n", "日本語\n한국어\n",
	} {
		f.Add([]byte(s), uint16(0), false)
	}
	f.Add([]byte("short\n"), uint16(4200), false) // 4200*16 bytes: more than 64 KiB
	f.Add([]byte("a\r\n\r\n"), uint16(65535), true)
	f.Fuzz(func(t *testing.T, data []byte, long uint16, oneByte bool) {
		if long > 0 {
			data = append(data, bytes.Repeat([]byte("0123456789abcde "), int(long))...)
		}
		type line struct {
			n    int
			text string
		}
		var want []line
		for i, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			if l := bytes.TrimSpace(l); len(l) > 0 {
				want = append(want, line{i + 1, string(l)})
			}
		}
		var r = bytes.NewReader(data)
		var got []line
		read := func(n int, l []byte) error {
			got = append(got, line{n, string(l)})
			return nil
		}
		var err error
		if oneByte {
			err = ReadLines(iotest.HalfReader(r), 1, read)
		} else {
			err = ReadLines(r, 1, read)
		}
		if err != nil {
			t.Fatalf("ReadLines: %v", err)
		}
		if len(got) != len(want) {
			t.Fatalf("got %d lines, want %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("line %d: got %d %q, want %d %q", i, got[i].n, trunc(got[i].text), want[i].n, trunc(want[i].text))
			}
		}
	})
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// claudeLines are Claude Code transcript lines, from host/testdata/claude
// and the shapes claudeTurns reads.
var claudeLines = []string{
	`{"type":"summary","summary":"Config file session","leafUuid":"42f8e822"}`,
	`{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/u/project","sessionId":"4f35e220-c435","version":"1.0.3","type":"user","message":{"role":"user","content":"Please add a config file for the staging database"},"uuid":"u1","timestamp":"2025-05-26T07:27:40.079Z"}`,
	`{"parentUuid":"u1","sessionId":"4f35e220-c435","type":"assistant","message":{"role":"assistant","model":"claude-sonnet-4","content":[{"type":"thinking","thinking":"private"},{"type":"text","text":"I will create config/staging.yaml with the Postgres host."},{"type":"tool_use","id":"toolu_1","name":"Write","input":{"file_path":"config/staging.yaml","content":"db: postgres://staging"}}]},"uuid":"a1","timestamp":"2025-05-26T07:27:45.000Z"}`,
	`{"parentUuid":"a1","sessionId":"4f35e220-c435","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"File created successfully"}]},"uuid":"u2","timestamp":"2025-05-26T07:27:46.000Z"}`,
	`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":[{"type":"text","text":"part one"},{"type":"text","text":"part two"}]}]},"uuid":"u3"}`,
	`{"type":"assistant","message":{"content":[{"type":"text","text":"  "},{"type":"text","text":"two\n\nparagraphs"}]}}`,
	`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Bash","input":{"command":"` + strings.Repeat("echo ünïcödé ", 60) + `"}}]},"uuid":"a2"}`,
	`{"type":"user","message":{"role":"user","content":42},"uuid":"u4"}`,
	`{"type":"user","message":null}`,
	`{"type":"file-history-snapshot","messageId":"x","snapshot":{}}`,
	`{"type":"user","message":{"role":"user","content":"\ud800 lone surrogate \u00e9"},"uuid":"u5"}`,
	"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"name\":\"x\",\"input\":{\"k\":\"raw \xff bytes\"}}]}}",
	`not json at all`,
	`null`,
	`[]`,
}

// FuzzClaudeTurns checks one Claude Code line's conversion: no panic, and
// the turns it gives are messages or tool summaries with something in
// them.
func FuzzClaudeTurns(f *testing.F) {
	for _, l := range claudeLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		turns, err := claudeTurns(line)
		if err != nil && len(turns) > 0 {
			t.Fatalf("claudeTurns gave %d turns and an error %v", len(turns), err)
		}
		for i, tn := range turns {
			switch tn.Type {
			case "message":
				if strings.TrimSpace(tn.Content) == "" {
					t.Fatalf("turn %d is an empty message", i)
				}
			case "tool_call", "tool_result":
				if tn.Role != "tool" {
					t.Fatalf("turn %d is a %s with role %q", i, tn.Type, tn.Role)
				}
			default:
				t.Fatalf("turn %d has type %q", i, tn.Type)
			}
		}
	})
}

// memhostLines are lines of memhost's JSONL format.
var memhostLines = []string{
	`{"id": "D1:1", "type": "message", "role": "user", "speaker": "Caroline", "content": "Did you go hiking at the lake last weekend?", "timestamp": "2023-05-08T13:56:00"}`,
	`{"id": "D1:2", "type": "message", "role": "assistant", "speaker": "Melanie", "content": "Yes! We camped two nights.", "timestamp": "2023-05-08T13:57:00"}`,
	`{"content": "no id, no type"}`,
	`{"id": "c1", "type": "compaction", "content": "Summary of the first hour.", "tokenCount": 7, "metadata": {"kept": 3}}`,
	`{"id": "u", "content": "unicode: 会议 café 🙂 \ud83d\ude42 \ud800"}`,
	`{"id": "dup", "content": "first"}`,
	`{"id": "dup", "content": "second, same id"}`,
	`{"id": "3", "content": "an id that is also a line number"}`,
	`{"id": 5, "content": "id of the wrong type"}`,
	"{\"id\": \"raw\", \"content\": \"raw invalid \xff\xfe bytes\"}",
	`not json at all`,
	`null`,
	`"a string"`,
	``,
}

// FuzzImport imports a fuzzed transcript into a fresh session twice: no
// panic, every line that is a memhost turn (a JSON object that decodes as
// a Turn) is added or known, what is written is valid UTF-8 that reads
// back, and the second import adds nothing.
func FuzzImport(f *testing.F) {
	f.Add([]byte(strings.Join(memhostLines, "\n")), false)
	f.Add([]byte(strings.Join(claudeLines, "\n")), true)
	f.Add([]byte(strings.Join(memhostLines, "\r\n")+"\r\n"), false)
	for _, l := range memhostLines {
		f.Add([]byte(l), false)
	}
	for _, l := range claudeLines {
		f.Add([]byte(l+"\n"+l), true)
	}
	f.Add([]byte(`{"id":"big","content":"`+strings.Repeat("long ", 30000)+`"}`), false)
	f.Fuzz(func(t *testing.T, data []byte, claude bool) {
		dir := t.TempDir()
		src := filepath.Join(dir, "t.jsonl")
		if err := os.WriteFile(src, data, 0o644); err != nil {
			t.Fatal(err)
		}
		sessDir := filepath.Join(dir, "sessions")
		if err := os.Mkdir(sessDir, 0o755); err != nil {
			t.Fatal(err)
		}
		s := &Store{Dir: sessDir, Now: func() time.Time { return time.Unix(0, 0) }}
		format := FormatMemhost
		if claude {
			format = FormatClaudeCode
		}
		res, err := s.Import(context.Background(), "", src, format)
		if err != nil {
			t.Fatalf("Import: %v", err)
		}
		// What the source holds, counted as the code means it.
		turns := 0
		ReadLines(bytes.NewReader(data), 1, func(_ int, line []byte) error {
			if claude {
				ts, _ := claudeTurns(line)
				turns += len(ts)
			} else {
				var t memhost.Turn
				if isObject(line) && json.Unmarshal(line, &t) == nil && strings.TrimSpace(t.Content) != "" {
					turns++ // a line without content (null, {}) is no turn
				}
			}
			return nil
		})
		if res.Added+res.Known != turns {
			t.Fatalf("added %d + known %d turns, want %d: %+v", res.Added, res.Known, turns, res)
		}
		written, err := os.ReadFile(filepath.Join(sessDir, res.Session+".jsonl"))
		if err != nil && res.Added > 0 {
			t.Fatal(err)
		}
		n := 0
		ReadLines(bytes.NewReader(written), 1, func(ln int, line []byte) error {
			var tn memhost.Turn
			if err := json.Unmarshal(line, &tn); err != nil {
				t.Fatalf("written line %d does not parse: %v", ln, err)
			}
			if !utf8.ValidString(tn.Content) {
				t.Fatalf("written line %d has content %q, not valid UTF-8", ln, tn.Content)
			}
			if tn.ID == "" {
				t.Fatalf("written line %d has no id", ln)
			}
			n++
			return nil
		})
		if n != res.Added {
			t.Fatalf("%d lines written, %d turns added", n, res.Added)
		}
		again, err := s.Import(context.Background(), "", src, format)
		if err != nil {
			t.Fatalf("second Import: %v", err)
		}
		if again.Added != 0 || again.Known != res.Added+res.Known {
			t.Fatalf("second import added %d, knew %d; the first added %d, knew %d", again.Added, again.Known, res.Added, res.Known)
		}
	})
}

func isObject(line []byte) bool {
	return bytes.HasPrefix(bytes.TrimSpace(line), []byte("{"))
}
