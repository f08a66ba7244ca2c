// Package turnchunk turns a transcript's lines into index chunks: one per
// turn (long turns split by the markdown chunker), each with the end of
// the chunk before it as its context. It imports host/sessions,
// host/chunk and index.
package turnchunk

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/chunk"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/internal/origin"
)

// contextWords bounds the context of a transcript chunk: the last words
// of the chunk before it, embedded before the chunk's text and searched by
// keyword at a lower weight. A reply ("yes, last Tuesday") means little
// without the question it answers; on the LoCoMo dev split this context
// lifts R@5 by about 6 points (docs/benchmarks.md).
const contextWords = 60

// Chunks turns the lines of a transcript from byte offset from on into
// index chunks, one per turn (long turns split by the markdown chunker),
// each carrying its turn's Meta and, as its context, the end of the chunk
// before it in the transcript (for the first new turn the lines before from
// are read back, so a grown transcript's new turns get the context a whole
// indexing gives them). Malformed lines are reported with their line number
// and skipped; a last line without its newline that is not whole JSON is
// one being written (or cut by a crash) and is left out silently.
func Chunks(rel string, data []byte, from int, opt chunk.Options) ([]index.Chunk, []string) {
	data = sessions.CompleteLines(data)
	session := sessions.IDOf(rel)
	prev := lastTurnText(data[:from], opt)
	maxWords := opt.MaxTokens * 3 / 4 // a token is about 3/4 of a word
	var out []index.Chunk
	var problems []string
	first := bytes.Count(data[:from], []byte("\n")) + 1
	err := sessions.ReadLines(bytes.NewReader(data[from:]), first, func(n int, line []byte) error {
		var t memhost.Turn
		if err := json.Unmarshal(line, &t); err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: not a JSON turn (%v); skipped", rel, n, err))
			return nil
		}
		texts := turnTexts(t, opt)
		if len(texts) == 0 {
			return nil
		}
		id := t.ID
		if id == "" {
			id = fmt.Sprint(n)
		}
		channel, source := t.Channel, t.SourceID
		if origin.Check(channel, source) != nil {
			// A transcript written by hand, imported or merged from a
			// remote may hold anything: an origin append would refuse
			// is not shown or searched by.
			channel, source = "", ""
		}
		meta, _ := json.Marshal(sessions.Meta{Session: session, Turns: []string{id}, Role: t.Role, Speaker: t.Speaker, Timestamp: t.Timestamp, Channel: channel, SourceID: source})
		for _, text := range texts {
			c := index.Chunk{Heading: speaker(t), StartLine: n, EndLine: n, Text: text, Meta: string(meta)}
			if maxWords > 0 {
				c.Context = lastWords(prev, min(contextWords, maxWords-len(strings.Fields(text))))
			}
			s := sha256.Sum256([]byte(c.EmbedText()))
			c.Hash = hex.EncodeToString(s[:])
			out = append(out, c)
			prev = text
		}
		return nil
	})
	if err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", rel, err))
	}
	return out, problems
}

// lastTurnText is the last chunk text of the last turn in data that has
// one (malformed and empty lines are skipped, as indexing skips them). It
// reads backwards: only the end of a long transcript is touched.
func lastTurnText(data []byte, opt chunk.Options) string {
	for len(data) > 0 {
		data = bytes.TrimRight(data, " \t\r\n")
		i := bytes.LastIndexByte(data, '\n')
		var t memhost.Turn
		if json.Unmarshal(data[i+1:], &t) == nil {
			if texts := turnTexts(t, opt); len(texts) > 0 {
				return texts[len(texts)-1]
			}
		}
		data = data[:max(i, 0)]
	}
	return ""
}

// speaker names who wrote a turn: the speaker, else the role; "summary"
// for a compaction entry.
func speaker(t memhost.Turn) string {
	if t.Type == "compaction" {
		return "summary"
	}
	if t.Speaker != "" {
		return t.Speaker
	}
	return t.Role
}

// turnTexts is a turn's content split into chunk texts, each starting with
// who wrote it; none for an empty turn.
func turnTexts(t memhost.Turn, opt chunk.Options) []string {
	content := strings.TrimSpace(strings.ToValidUTF8(t.Content, "\uFFFD"))
	if content == "" {
		return nil
	}
	who := speaker(t)
	var out []string
	for _, p := range chunk.Split(content, opt) {
		text := p.Text
		if who != "" {
			text = who + ": " + text
		}
		out = append(out, text)
	}
	return out
}

// lastWords is the last n words of s, joined by spaces; "" when n < 1.
func lastWords(s string, n int) string {
	if n < 1 {
		return ""
	}
	w := strings.Fields(s)
	return strings.Join(w[max(0, len(w)-n):], " ")
}
