package sessions

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/memhost/memhost/host/chunk"
	"github.com/memhost/memhost/host/fault"
)

// Transcript formats Import reads.
const (
	FormatAuto       = "auto"
	FormatMemhost    = "memhost"     // seed 002's JSONL, as Append writes it
	FormatClaudeCode = "claude-code" // ~/.claude/projects/<project>/<id>.jsonl
)

// Imported reports one imported file.
type Imported struct {
	Path     string   `json:"path"`
	Session  string   `json:"session"`
	Format   string   `json:"format"`
	Added    int      `json:"added"`    // turns appended
	Known    int      `json:"known"`    // turns already in the session (skipped)
	Skipped  int      `json:"skipped"`  // lines that are not turns (metadata, empty)
	Problems []string `json:"problems"` // malformed lines, file:line
}

// CheckFormat refuses an unknown format name; "" means auto.
func CheckFormat(format string) error {
	switch format {
	case "", FormatAuto, FormatMemhost, FormatClaudeCode:
		return nil
	}
	return fault.BadInputf("format", "format %q: choose auto, memhost or claude-code", format)
}

// Import appends the turns of the transcript at path to the session named
// after its file: memhost's own format, or Claude Code's (text of user and
// assistant messages; tool calls and results summarised, not dropped). A
// turn keeps its source id, so importing a file again adds nothing and a
// grown file adds only its new turns. The file is streamed: memory stays
// bounded however long it is. The caller indexes Path(res.Session). A
// relative path is found in dir ("": the working folder) and is named as
// given in the result, its problems and its errors.
func (s *Store) Import(ctx context.Context, dir, path, format string) (Imported, error) {
	res := Imported{Path: path, Problems: []string{}}
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
	dest := s.file(res.Session)
	out, err := os.OpenFile(dest, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return res, err
	}
	defer out.Close()
	if err := syscall.Flock(int(out.Fd()), syscall.LOCK_EX); err != nil {
		return res, err
	}
	known, err := ids(dest)
	if err != nil {
		return res, err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	var werr error
	err = ReadLines(src, 1, func(n int, line []byte) error {
		if n%1000 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		var turns []Turn
		var perr error
		if format == FormatClaudeCode {
			turns, perr = claudeTurns(line)
		} else {
			var t Turn
			if perr = json.Unmarshal(line, &t); perr == nil {
				if t.Type == "" {
					t.Type = "message"
				}
				turns = []Turn{t}
			}
		}
		if perr != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("%s:%d: %v; skipped", path, n, perr))
			return nil
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
			if known[t.ID] {
				res.Known++
				continue
			}
			t.Content = strings.ToValidUTF8(t.Content, "\uFFFD")
			if t.TokenCount == 0 {
				t.TokenCount = chunk.EstimateTokens(t.Content)
			}
			b, err := json.Marshal(t)
			if err != nil {
				return err
			}
			if _, werr = w.Write(append(b, '\n')); werr != nil {
				return werr
			}
			known[t.ID] = true
			res.Added++
		}
		return nil
	})
	if err != nil {
		if err == ctx.Err() || err == werr {
			return res, err
		}
		res.Problems = append(res.Problems, fmt.Sprintf("%s: %v", path, err))
	}
	if err := w.Flush(); err != nil {
		return res, err
	}
	return res, out.Sync()
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
func claudeTurns(line []byte) ([]Turn, error) {
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
	base := Turn{ID: e.UUID, Type: "message", Role: e.Message.Role, Timestamp: e.Timestamp}
	if base.Role == "" {
		base.Role = e.Type
	}
	var s string
	if json.Unmarshal(e.Message.Content, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		base.Content = s
		return []Turn{base}, nil
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
	var out []Turn
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
		out = append([]Turn{t}, out...)
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
