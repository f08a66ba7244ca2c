package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost/internal/syncbuf"
)

// rpcLine is one line memhost mcp wrote, as much of it as the tests read.
type rpcLine struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

// mcpPipe is memhost-core mcp on pipes: send writes a line to its stdin,
// until reads its stdout up to the answer of one id.
type mcpPipe struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *syncbuf.Buffer
}

func startMCPPipe(t *testing.T, home string) *mcpPipe {
	t.Helper()
	cmd := exec.Command(filepath.Join(filepath.Dir(binary), "memhost-core"), "--home", home, "mcp")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &mcpPipe{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 100), stderr: &syncbuf.Buffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 32<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return p
}

func (p *mcpPipe) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("writing %.80q: %v (stderr %q)", line, err, p.stderr.String())
	}
}

// until returns the lines read up to the answer with id (a JSON value),
// and that answer. The wait is generous: a busy machine is slow, a
// session that ended never answers.
func (p *mcpPipe) until(id string) ([]rpcLine, rpcLine) {
	p.t.Helper()
	var before []rpcLine
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case s, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("memhost mcp ended before answering id %s; it wrote %v; stderr %q", id, before, p.stderr.String())
			}
			var l rpcLine
			if err := json.Unmarshal([]byte(s), &l); err != nil {
				p.t.Fatalf("stdout holds a line that is not JSON: %q", s)
			}
			l.raw = s
			if string(l.ID) == id && l.Result != nil {
				return before, l
			}
			before = append(before, l)
		case <-timeout:
			p.t.Fatalf("no answer to id %s; it wrote %v; stderr %q", id, before, p.stderr.String())
		}
	}
}

// TestMCPStdioMalformed: each malformed JSON-RPC message gets one JSON-RPC
// error (parse error for what is not JSON, invalid request for the rest,
// with the message's id when it is usable and null when not) and the
// session goes on: the valid request after it is answered, as the HTTP
// transport does. Batches, gone from MCP since 2025-06-18, get one error
// for the whole array, none of their messages run.
func TestMCPStdioMalformed(t *testing.T) {
	home := t.TempDir()
	p := startMCPPipe(t, home)
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	p.until("0")
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	deep := strings.Repeat("[", 1200) + strings.Repeat("]", 1200)
	tests := []struct {
		name, line string
		code       int
		id         string // of the error: "null" when unusable
		says       string // in the error's message
	}{
		{"not JSON", `this is not json`, -32700, "null", "not JSON"},
		{"cut short", `{"jsonrpc":"2.0","id":5,"method":`, -32700, "null", "not JSON"},
		{"not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/\xff\"}", -32700, "null", "UTF-8"},
		{"a number", `123`, -32600, "null", "object"},
		{"a string", `"tools/list"`, -32600, "null", "object"},
		{"empty batch", `[]`, -32600, "null", "batch"},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"tools/list"},{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`, -32600, "null", "batch"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":9,"method":"tools/list"}`, -32600, "9", `"2.0"`},
		{"no jsonrpc", `{"id":"ten","method":"tools/list"}`, -32600, `"ten"`, `"2.0"`},
		{"jsonrpc a number", `{"jsonrpc":2.0,"id":11,"method":"tools/list"}`, -32600, "11", `"2.0"`},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, "null", "id"},
		{"array id", `{"jsonrpc":"2.0","id":[12],"method":"tools/list"}`, -32600, "null", "id"},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, -32600, "null", "id"},
		{"fraction id", `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, -32600, "null", "id"},
		{"method a number", `{"jsonrpc":"2.0","id":13,"method":7}`, -32600, "13", "method"},
		{"nothing but jsonrpc", `{"jsonrpc":"2.0"}`, -32600, "null", "method"},
		{"too deep", `{"jsonrpc":"2.0","id":14,"method":"tools/list","params":` + deep + `}`, -32600, "14", "invalid request"},
		{"too long", `{"jsonrpc":"2.0","id":15,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 17<<20) + `"}}`, -32600, "null", "over 16 MB"},
		// encoding/json would store U+FFFD in its place, silently.
		{"lone surrogate in a tool's arguments", `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"remember","arguments":{"text":"kumquat \ud800 pie"}}}`,
			-32602, "16", `params.arguments.text holds \ud800`},
		{"lone surrogate in the method", `{"jsonrpc":"2.0","id":17,"method":"tools/\udc00"}`, -32600, "17", `method holds \udc00`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.t = t
			id := fmt.Sprint(100 + i)
			p.send(tt.line)
			p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`)
			before, answer := p.until(id)
			if !strings.Contains(string(answer.Result), `"memory_search"`) {
				t.Errorf("tools/list after it: %s", answer.raw)
			}
			if len(before) != 1 || before[0].Error == nil {
				t.Fatalf("want one error before the answer, got %d lines: %v", len(before), before)
			}
			got := before[0]
			if got.Error.Code != tt.code || string(got.ID) != tt.id || !strings.Contains(got.Error.Message, tt.says) {
				t.Errorf("got %s, want code %d, id %s, a message with %q", got.raw, tt.code, tt.id, tt.says)
			}
			if strings.Contains(got.Error.Message, "\n") {
				t.Errorf("message of more than one line: %q", got.Error.Message)
			}
		})
	}
	p.t = t
	if b, _ := exec.Command("grep", "-rl", "kumquat", home).Output(); len(b) > 0 {
		t.Errorf("the refused remember was written: %s", b)
	}
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("memhost mcp: %v, stderr %q", err, p.stderr.String())
	}
}

// TestMCPStdioResentCallWritesOnce: a client that sends a tools/call again
// with the same JSON-RPC id (it lost the answer) gets the first answer and
// nothing is written twice; another id writes again, and another session's
// id 5 is its own call.
func TestMCPStdioResentCallWritesOnce(t *testing.T) {
	home := t.TempDir()
	start := func() *mcpPipe {
		p := startMCPPipe(t, home)
		p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		p.until("0")
		p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return p
	}
	call := func(p *mcpPipe, id int, tool, args string) string {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
		_, l := p.until(fmt.Sprint(id))
		return string(l.Result)
	}
	p := start()
	first := call(p, 5, "daily_log", `{"text":"resent entry"}`)
	if again := call(p, 5, "daily_log", `{"text":"resent entry"}`); again != first {
		t.Fatalf("the resent call answered %s, the first %s", again, first)
	}
	call(p, 6, "notebook_write", `{"path":"knowledge/w.md","text":"- resent line"}`)
	call(p, 6, "notebook_write", `{"path":"knowledge/w.md","text":"- resent line"}`)
	call(p, 7, "daily_log", `{"text":"resent entry"}`) // a new call
	q := start()
	call(q, 5, "daily_log", `{"text":"other session entry"}`)
	count := func(glob, s string) int {
		files, _ := filepath.Glob(filepath.Join(home, "notebook", glob))
		n := 0
		for _, f := range files { // every day's: the calls may straddle midnight
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			n += strings.Count(string(b), s)
		}
		return n
	}
	if n := count("daily/*.md", "resent entry"); n != 2 {
		t.Fatalf("the daily logs hold the entry %d times, want 2 (ids 5 and 7)", n)
	}
	if n := count("daily/*.md", "other session entry"); n != 1 {
		t.Fatalf("the other session's call: %d", n)
	}
	if n := count("knowledge/w.md", "resent line"); n != 1 {
		t.Fatalf("notebook_write resent: %d lines", n)
	}
}
