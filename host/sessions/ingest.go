package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/chunk"
	"github.com/memhost/memhost/internal/fsx"
	"github.com/memhost/memhost/internal/sockpath"
)

// Transcript formats Import reads.
const (
	FormatAuto       = "auto"
	FormatMemhost    = "memhost"     // memhost's JSONL, as Append writes it
	FormatClaudeCode = "claude-code" // ~/.claude/projects/<project>/<id>.jsonl
)

// CheckFormat refuses an unknown format name; "" means auto.
func CheckFormat(format string) error {
	switch format {
	case "", FormatAuto, FormatMemhost, FormatClaudeCode:
		return nil
	}
	return fault.BadInputf("format", "format %q: choose auto, memhost or claude-code", format)
}

// importBatch is how many bytes of whole lines Import collects before it
// writes them in one write and flushes them to disk.
const importBatch = 1 << 20

// Import appends the turns of the transcript at path to a session:
// memhost's own format, or Claude Code's (text of user and assistant
// messages; tool calls and results summarised, not dropped). A turn keeps
// its source id, so importing a file again adds nothing and a grown file
// adds only its new turns. The session is named after the file; another
// file of the same name gets its own session (see claim). The file is
// streamed: memory stays bounded however long it is, and the turns are
// written in batches of whole lines, each flushed to disk, so a crash
// loses at most the batch being written, and importing again restores it.
// A file without turns makes no session. The caller indexes
// Path(res.Session). A relative path is found in dir ("": the working
// folder) and is named as given in the result, its problems and errors.
func (s *Store) Import(ctx context.Context, dir, path, format string) (memhost.IngestFile, error) {
	res := memhost.IngestFile{Path: path, Problems: []string{}}
	file := path
	if dir != "" && !filepath.IsAbs(path) {
		file = filepath.Join(dir, path)
	}
	src, err := os.Open(file)
	if err != nil {
		kind := fault.Internal
		if errors.Is(err, fs.ErrNotExist) {
			kind = fault.NotFound
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Path = path // as the caller named it
		}
		return res, fault.Errorf(kind, "paths", "%w", err)
	}
	defer src.Close()
	if format == FormatAuto || format == "" {
		if format, err = detectFormat(src, path); err != nil {
			return res, err
		}
	}
	res.Format = format
	res.Session = sessionName(path, format)
	source := sockpath.Canonical(file) // as the server names a home: absolute, symlinks resolved
	var (
		out   *os.File // the session's transcript, locked; nil until the first turn
		known map[string]bool
		batch []byte
	)
	defer func() {
		if out != nil {
			out.Close()
		}
	}()
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := writeWhole(out, batch)
		batch = batch[:0]
		return err
	}
	var werr error
	err = ReadLines(src, 1, func(n int, line []byte) error {
		if n%1000 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		var turns []memhost.Turn
		var perr error
		if format == FormatClaudeCode {
			turns, perr = claudeTurns(line)
		} else {
			var t memhost.Turn
			if perr = json.Unmarshal(line, &t); perr == nil && strings.TrimSpace(t.Content) != "" {
				if t.Type == "" {
					t.Type = "message"
				}
				turns = []memhost.Turn{t}
			}
		}
		if line == nil {
			res.Problems = append(res.Problems, fmt.Sprintf("%s:%d: longer than %d MB; skipped", path, n, MaxLine>>20))
		} else if perr != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("%s:%d: %s; skipped", path, n, lineProblem(perr)))
		}
		if len(turns) == 0 {
			res.Skipped++
			return nil
		}
		for i, t := range turns {
			if t.ID == "" {
				t.ID = fmt.Sprintf("%d", n)
			}
			if len(turns) > 1 {
				t.ID = fmt.Sprintf("%s#%d", t.ID, i)
			}
			if out == nil {
				var repaired string
				if res.Session, out, repaired, known, werr = s.claim(res.Session, source, t); werr != nil {
					return werr
				}
				if repaired != "" {
					res.Repaired = append(res.Repaired, repaired)
				}
			}
			if known[t.ID] {
				res.Known++
				continue
			}
			t.Content = strings.ToValidUTF8(t.Content, "\uFFFD")
			red, rerr := s.redactTurn(&t)
			if rerr != nil {
				res.Problems = append(res.Problems, fmt.Sprintf("%s:%d: %v; skipped", path, n, rerr))
				res.Skipped++
				continue
			}
			for _, r := range red {
				r.Field = fmt.Sprintf("line %d %s", n, r.Field)
				res.Redacted = append(res.Redacted, r)
			}
			if t.TokenCount == 0 {
				t.TokenCount = chunk.EstimateTokens(t.Content)
			}
			b, err := json.Marshal(t)
			if err != nil {
				return err
			}
			if len(b) > MaxLine { // escaping can make a stored line longer than its source
				res.Problems = append(res.Problems, fmt.Sprintf("%s:%d: a turn of %d MB as stored, over %d MB; skipped", path, n, len(b)>>20, MaxLine>>20))
				res.Skipped++
				continue
			}
			batch = append(append(batch, b...), '\n')
			known[t.ID] = true
			res.Added++
			if len(batch) >= importBatch {
				if werr = flush(); werr != nil {
					return werr
				}
			}
		}
		return nil
	})
	if err != nil {
		if err == ctx.Err() || err == werr {
			return res, errors.Join(err, flush())
		}
		res.Problems = append(res.Problems, fmt.Sprintf("%s: %v", path, err))
	}
	return res, flush()
}

// sourcesFile records which file each imported session came from, one
// JSON line per claim, in the sessions folder (hidden: never indexed).
const sourcesFile = ".sources.jsonl"

// sourceRecord is one line of sourcesFile.
type sourceRecord struct {
	Session string `json:"session"`
	Source  string `json:"source"` // absolute, symlinks resolved
	Time    string `json:"time"`
}

// claim picks the session the turns of source go to, opens its transcript
// for appending (locked, torn tail repaired) and reads the ids it holds.
// It is the session recorded for source, else the first of name, name-2,
// name-3, … that is new, or that no other source claimed and whose
// transcript starts with first (the same file imported before sources
// were recorded). So a/chat.jsonl and b/chat.jsonl, whose turns have no
// ids of their own, never merge into one session.
func (s *Store) claim(name, source string, first memhost.Turn) (string, *os.File, string, map[string]bool, error) {
	owners, bySource, err := s.readSources()
	if err != nil {
		return "", nil, "", nil, err
	}
	if session, ok := bySource[source]; ok {
		f, repaired, err := s.openAppend(session, true, false)
		if err != nil {
			return "", nil, "", nil, err
		}
		known, _, err := turnIDs(f)
		if err != nil {
			f.Close()
			return "", nil, "", nil, err
		}
		return session, f, repaired, known, nil
	}
	for i := 1; i <= 1000; i++ {
		session := suffixed(name, i)
		if _, taken := owners[session]; taken {
			continue
		}
		f, repaired, err := s.openAppend(session, true, true)
		if errors.Is(err, fs.ErrExist) {
			if f, repaired, err = s.openAppend(session, false, false); errors.Is(err, fs.ErrNotExist) {
				continue // removed meanwhile; a later name will do
			}
		}
		if err != nil {
			return "", nil, "", nil, err
		}
		// Locked now. Whoever locked it first, even a file this call
		// created, has recorded its claim and written its turns by now.
		owners, _, err := s.readSources()
		if err != nil {
			f.Close()
			return "", nil, "", nil, err
		}
		owner, claimed := owners[session]
		known, head, err := turnIDs(f)
		if err != nil {
			f.Close()
			return "", nil, "", nil, err
		}
		// Another source's; or turns of no recorded source that are not
		// this file's (an empty one is an import's killed between making
		// the file and recording its source: free to claim).
		if claimed && owner != source ||
			!claimed && len(known) > 0 && (head.ID != first.ID || head.Content != strings.ToValidUTF8(first.Content, "\uFFFD")) {
			f.Close()
			continue
		}
		if !claimed {
			rec, _ := json.Marshal(sourceRecord{Session: session, Source: source, Time: s.Now().UTC().Format(time.RFC3339Nano)})
			if err := appendLocked(filepath.Join(s.Dir, sourcesFile), append(rec, '\n')); err != nil {
				f.Close()
				return "", nil, "", nil, err
			}
		}
		return session, f, repaired, known, nil
	}
	return "", nil, "", nil, fmt.Errorf("no free session name for %s (%s-2 … %s-1000 are taken)", source, name, name)
}

// readSources reads sourcesFile: the source each claimed session belongs
// to, and the session of each source (the last claim wins).
func (s *Store) readSources() (owners, bySource map[string]string, err error) {
	owners, bySource = map[string]string{}, map[string]string{}
	data, err := fsx.ReadFile(filepath.Join(s.Dir, sourcesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return owners, bySource, nil
	}
	if err != nil {
		return nil, nil, err
	}
	err = ReadLines(bytes.NewReader(data), 1, func(_ int, line []byte) error {
		var r sourceRecord
		if json.Unmarshal(line, &r) == nil && r.Session != "" && r.Source != "" {
			owners[r.Session], bySource[r.Source] = r.Source, r.Session
		}
		return nil
	})
	return owners, bySource, err
}

// turnIDs reads the ids of the turns in the transcript f (open, locked),
// and its first turn.
func turnIDs(f *os.File) (map[string]bool, memhost.Turn, error) {
	out := map[string]bool{}
	var first memhost.Turn
	fi, err := f.Stat()
	if err != nil {
		return nil, first, err
	}
	err = ReadLines(io.NewSectionReader(f, 0, fi.Size()), 1, func(_ int, line []byte) error {
		var t memhost.Turn
		if json.Unmarshal(line, &t) == nil && t.ID != "" {
			if len(out) == 0 {
				first = t
			}
			out[t.ID] = true
		}
		return nil
	})
	return out, first, err
}

// suffixed is name for i = 1, else name-i, kept within an id's 128 bytes.
func suffixed(name string, i int) string {
	if i == 1 {
		return name
	}
	suffix := fmt.Sprintf("-%d", i)
	if len(name)+len(suffix) > 128 {
		name = name[:128-len(suffix)]
	}
	return name + suffix
}

// detectFormat reads lines of f until one tells, then rewinds it: Claude
// Code lines carry a "message" object or a "sessionId"; memhost's carry
// "content". path names the file in errors.
func detectFormat(f *os.File, path string) (string, error) {
	defer f.Seek(0, io.SeekStart)
	format, tried := "", 0
	err := ReadLines(f, 1, func(_ int, line []byte) error {
		if tried++; tried > 50 {
			return ErrStop
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) != nil {
			return nil
		}
		_, message := m["message"]
		_, sessionID := m["sessionId"]
		_, content := m["content"]
		switch {
		case message || sessionID:
			format = FormatClaudeCode
		case content:
			format = FormatMemhost
		default:
			return nil
		}
		return ErrStop
	})
	if err == nil && format == "" {
		err = fault.BadInputf("format", "%s: cannot tell its format (name it: memhost or claude-code)", path)
	}
	return format, err
}

// sessionName derives a session id from the file name.
func sessionName(path, format string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var b strings.Builder
	for _, r := range base {
		if r < 0x80 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := strings.TrimLeft(b.String(), "._-")
	if name == "" {
		name = "session"
	}
	if format == FormatClaudeCode {
		name = "claude-" + name
	}
	if len(name) > 128 {
		name = name[:128]
	}
	return name
}

// claudeTurns converts one Claude Code line: user and assistant text
// become turns; tool calls and results become short "tool" turns;
// thinking, summaries and metadata lines are left out.
func claudeTurns(line []byte) ([]memhost.Turn, error) {
	var e struct {
		Type      string `json:"type"`
		UUID      string `json:"uuid"`
		Timestamp string `json:"timestamp"`
		Message   *struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, err
	}
	if (e.Type != "user" && e.Type != "assistant") || e.Message == nil {
		return nil, nil
	}
	base := memhost.Turn{ID: e.UUID, Type: "message", Role: e.Message.Role, Timestamp: e.Timestamp}
	if base.Role == "" {
		base.Role = e.Type
	}
	var s string
	if json.Unmarshal(e.Message.Content, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		base.Content = s
		return []memhost.Turn{base}, nil
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Name    string          `json:"name"`
		Input   json.RawMessage `json:"input"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(e.Message.Content, &blocks); err != nil {
		return nil, fmt.Errorf("message content is neither text nor blocks: %v", err)
	}
	var out []memhost.Turn
	var text []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				text = append(text, b.Text)
			}
		case "tool_use":
			t := base
			t.Type, t.Role = "tool_call", "tool"
			t.Content = "tool call: " + b.Name + " " + shorten(string(b.Input), 300)
			out = append(out, t)
		case "tool_result":
			t := base
			t.Type, t.Role = "tool_result", "tool"
			t.Content = "tool result: " + shorten(blockText(b.Content), 300)
			out = append(out, t)
		}
	}
	if len(text) > 0 {
		t := base
		t.Content = strings.Join(text, "\n\n")
		out = append([]memhost.Turn{t}, out...)
	}
	return out, nil
}

// blockText reads a tool result's content: a string or text blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, " ")
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// lineProblem says what is wrong with a transcript line in a person's
// words: JSON's syntax error as it is, a wrong type without Go's names.
func lineProblem(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	if te.Field != "" {
		return fmt.Sprintf("its %q is a JSON %s, not a %s", te.Field, te.Value, kindName(te.Type.Kind()))
	}
	return fmt.Sprintf("a JSON %s, not a turn (an object with \"content\")", te.Value)
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "number"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice:
		return "list"
	}
	return k.String()
}
