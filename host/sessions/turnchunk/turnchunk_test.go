package turnchunk

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost/host/chunk"
)

// TestTurnContext: each transcript chunk is embedded with the end of the
// turn before it (at most contextWords words), the first turn with none,
// and a grown transcript's new turns get the same context as when the
// whole file is indexed at once.
func TestTurnContext(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "context.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	opt := chunk.Options{MaxTokens: 400, OverlapTokens: 80}
	chunks, problems := Chunks("sessions/s.jsonl", data, 0, opt)
	if len(chunks) != 4 || len(problems) != 1 || !strings.Contains(problems[0], "sessions/s.jsonl:3:") {
		t.Fatalf("%d chunks, problems %q", len(chunks), problems)
	}
	want := []string{
		"",
		"Caroline: Did you go hiking at the lake last weekend?",
		"Melanie: Yes! We camped two nights.",
		"three four five", // the last 60 of 63 words: "Caroline:", "one", "two" are cut
	}
	for i, c := range chunks {
		if i == 3 {
			if !strings.HasPrefix(c.Context, want[3]) || len(strings.Fields(c.Context)) != contextWords || !strings.HasSuffix(c.Context, "sixty-two") {
				t.Errorf("chunk 3 context %q", c.Context)
			}
		} else if c.Context != want[i] {
			t.Errorf("chunk %d context %q, want %q", i, c.Context, want[i])
		}
		if sum := sha256.Sum256([]byte(c.EmbedText())); c.Hash != hex.EncodeToString(sum[:]) {
			t.Errorf("chunk %d: hash is not of its embedded text", i)
		}
		if strings.Contains(c.Text, "\n") || !strings.HasPrefix(c.EmbedText(), c.Context) {
			t.Errorf("chunk %d: text %q, embedded %q", i, c.Text, c.EmbedText())
		}
	}
	// Indexed in two steps, after line 2 (the malformed line 3 is among the new ones).
	from := len(strings.Join(strings.SplitAfter(string(data), "\n")[:2], ""))
	tail, _ := Chunks("sessions/s.jsonl", data, from, opt)
	if len(tail) != 2 || tail[0].StartLine != 4 || tail[0].Context != chunks[2].Context || tail[1].Hash != chunks[3].Hash {
		t.Errorf("incremental chunks differ: %+v", tail)
	}
	// After line 3, which is malformed: the context is read further back.
	from = len(strings.Join(strings.SplitAfter(string(data), "\n")[:3], ""))
	if tail, _ := Chunks("sessions/s.jsonl", data, from, opt); len(tail) != 2 || tail[0].Hash != chunks[2].Hash {
		t.Errorf("incremental chunks after a malformed line: %+v", tail)
	}
	// Context and text together stay within the chunk size (40 tokens ≈
	// 30 words here): a chunk near the limit gets less context, or none.
	small, _ := Chunks("sessions/s.jsonl", data, 0, chunk.Options{MaxTokens: 40, OverlapTokens: 0})
	shortened := false
	for i, c := range small {
		n, own := len(strings.Fields(c.EmbedText())), len(strings.Fields(c.Text))
		if n > max(30, own) {
			t.Errorf("small chunk %d embeds %d words", i, n)
		}
		shortened = shortened || (c.Context != "" && len(strings.Fields(c.Context)) < len(strings.Fields(small[i-1].Text)))
	}
	if !shortened {
		t.Error("no context was shortened for the chunk size")
	}
}

// TestChunksLeaveOutALineBeingWritten: the indexer may read a transcript
// while a line is half written; that line is neither indexed nor reported,
// while a whole last line without its newline is indexed.
func TestChunksLeaveOutALineBeingWritten(t *testing.T) {
	whole := `{"id":"a","role":"user","content":"one"}` + "\n"
	for _, c := range []struct {
		data   string
		chunks int
	}{
		{whole + `{"id":"b","role":"user","cont`, 1},
		{whole + `{"id":"b","role":"user","content":"two"}`, 2},
		{whole, 1},
	} {
		chunks, problems := Chunks("sessions/s.jsonl", []byte(c.data), 0, chunk.Options{MaxTokens: 400})
		if len(chunks) != c.chunks || len(problems) != 0 {
			t.Errorf("%q: %d chunks, problems %v; want %d chunks", c.data, len(chunks), problems, c.chunks)
		}
	}
}
