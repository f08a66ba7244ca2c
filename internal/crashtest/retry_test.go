package crashtest

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
)

// dyingServer starts memhost serve so that it kills itself (SIGKILL) after
// the next write it makes, before answering (MEMHOST_CRASH_AFTER_WRITE):
// the moment a client can only learn of by running the command again.
func (h *harness) dyingServer() *proc {
	srv := h.start("memhost-core", []string{"MEMHOST_CRASH_AFTER_WRITE=*"}, "serve", "--listen", "")
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-srv.done:
			h.t.Fatalf("memhost serve exited: %s", srv)
		default:
		}
		p := h.start("memhost-core", nil, "serve", "status", "--json")
		p.wait()
		var in struct{ PID int }
		if p.err == nil && json.Unmarshal(p.out.Bytes(), &in) == nil && in.PID == srv.cmd.Process.Pid {
			return srv
		}
	}
	h.t.Fatalf("memhost serve did not answer within 30 s: %s", srv)
	return nil
}

// count returns how many times text is in the files matching pattern
// (relative to the home).
func (h *harness) count(pattern, text string) int {
	h.t.Helper()
	files, err := filepath.Glob(filepath.Join(h.home, pattern))
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			h.t.Fatal(err)
		}
		n += strings.Count(string(b), text)
	}
	return n
}

// TestServerDiesAfterWrite runs every kind of write through a server that
// dies after the write reached the disk and before it answered: the
// launcher runs the command again in its own process (with the same
// request id), which must succeed and write nothing more. Each kind is
// checked on the files: the text once, the page removed or moved.
func TestServerDiesAfterWrite(t *testing.T) {
	h := newHarness(t, settings{})
	if _, ok := h.must(nil, nil, "init"); !ok {
		t.FailNow()
	}
	for _, p := range []string{"doomed", "moving", "person"} {
		path := filepath.Join(h.home, "notebook", "knowledge", p+".md")
		if err := os.WriteFile(path, []byte("# "+p+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := h.must(nil, nil, "fact", "add", "Ada Lovelace", "field", "mathematics"); !ok {
		t.FailNow()
	}
	cases := []struct {
		name  string
		args  []string
		check func() string // "" when the files are right
	}{
		{"daily-log", []string{"daily-log", "entry-dl-1 about the kettle"}, func() string {
			return once(h.count("notebook/daily/*.md", "entry-dl-1"))
		}},
		{"write", []string{"write", "knowledge/retried.md", "entry-w-1 appended"}, func() string {
			return once(h.count("notebook/knowledge/retried.md", "entry-w-1"))
		}},
		{"write-section", []string{"write", "--section", "Notes", "knowledge/retried.md", "entry-ws-1 in a section"}, func() string {
			return once(h.count("notebook/knowledge/retried.md", "entry-ws-1"))
		}},
		{"remember", []string{"remember", "--category", "knowledge", "--file", "rules", "entry-r-1 never double a word"}, func() string {
			return once(h.count("notebook/knowledge/rules.md", "entry-r-1"))
		}},
		{"session-append", []string{"session", "append", "--session", "retry", "--role", "user", "entry-sa-1 said once"}, func() string {
			return once(h.count("sessions/retry.jsonl", "entry-sa-1"))
		}},
		{"episodes", []string{"episodes"}, func() string { // today's log of the turn session-append wrote
			return once(h.count("notebook/episodes/*.md", "entry-sa-1"))
		}},
		{"fact-add", []string{"fact", "add", "Ada Lovelace", "born", "entry-fa-1815"}, func() string {
			return once(h.count("notebook/knowledge/entities/ada-lovelace.md", "entry-fa-1815"))
		}},
		{"fact-forget", []string{"fact", "forget", "Ada Lovelace", "field"}, func() string {
			return once(h.count("notebook/knowledge/entities/ada-lovelace.md", "mathematics"))
		}},
		{"rm", []string{"rm", "knowledge/doomed.md"}, func() string {
			if _, err := os.Stat(filepath.Join(h.home, "notebook", "knowledge", "doomed.md")); !os.IsNotExist(err) {
				return fmt.Sprintf("the page is still there (%v)", err)
			}
			return ""
		}},
		{"mv", []string{"mv", "knowledge/moving.md", "reference/moved.md"}, func() string {
			if _, err := os.Stat(filepath.Join(h.home, "notebook", "reference", "moved.md")); err != nil {
				return fmt.Sprintf("the page is not at its new name (%v)", err)
			}
			return ""
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := h.dyingServer()
			p := h.start("memhost", nil, c.args...)
			p.wait()
			if !diedOfItsWrite(srv) {
				t.Fatalf("the server did not die of the write: %s\ncommand: %s", srv, p)
			}
			if p.err != nil {
				t.Fatalf("the command failed after its server died: %s", p)
			}
			if !strings.Contains(p.errb.String(), "running in this process instead") {
				t.Fatalf("the command did not run again in-process: %s", p)
			}
			if msg := c.check(); msg != "" {
				t.Fatalf("%s after the retry: %s", c.name, msg)
			}
		})
	}

	// stdio MCP: the tool call the server died under runs again in the
	// MCP process.
	for _, tool := range []struct{ name, args, pattern, text string }{
		{"notebook_write", `{"path":"knowledge/mcp.md","text":"entry-mw-1 over mcp"}`, "notebook/knowledge/mcp.md", "entry-mw-1"},
		{"daily_log", `{"text":"entry-md-1 over mcp"}`, "notebook/daily/*.md", "entry-md-1"},
		{"remember", `{"text":"entry-mr-1 over mcp","category":"knowledge","file":"mcp-rules"}`, "notebook/knowledge/mcp-rules.md", "entry-mr-1"},
	} {
		t.Run("mcp-"+tool.name, func(t *testing.T) {
			srv := h.dyingServer()
			out := h.mcpCall(t, tool.name, tool.args)
			if !diedOfItsWrite(srv) {
				t.Fatalf("the server did not die of the write: %s\nanswer: %s", srv, out)
			}
			if strings.Contains(out, `"isError":true`) {
				t.Fatalf("the tool call failed after its server died: %s", out)
			}
			if msg := once(h.count(tool.pattern, tool.text)); msg != "" {
				t.Fatalf("%s after the retry: %s", tool.name, msg)
			}
		})
	}
}

// diedOfItsWrite reports whether a dying server killed itself (it has
// when its client is done), and kills it when it has not.
func diedOfItsWrite(srv *proc) bool {
	select {
	case <-srv.done:
		return srv.killedBySignal()
	case <-time.After(10 * time.Second):
		srv.cmd.Process.Kill()
		<-srv.done
		return false
	}
}

func once(n int) string {
	if n != 1 {
		return fmt.Sprintf("the text is there %d times, want once", n)
	}
	return ""
}

// mcpCall runs memhost mcp over stdio, calls one tool and returns the
// call's JSON-RPC answer.
func (h *harness) mcpCall(t *testing.T, tool, args string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "memhost-core"), "mcp")
	// The environment the server got (start): a MEMHOST_ variable of the
	// test's own (the date runs' clock offset) would make the server's
	// overrides differ, and memhost mcp would not use it.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEMHOST_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "MEMHOST_HOME="+h.home, "MEMHOST_SERVER_AUTOSTART=false")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	answers := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(outPipe)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			answers <- sc.Text()
		}
		close(answers)
	}()
	send := func(s string) {
		if _, err := io.WriteString(in, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	wait := func(id string) string {
		timeout := time.After(2 * time.Minute)
		for {
			select {
			case a, ok := <-answers:
				if !ok {
					t.Fatalf("memhost mcp ended before answering %s; stderr: %s", id, stderr.String())
				}
				if strings.Contains(a, `"id":`+id+`,`) || strings.Contains(a, `"id":`+id+`}`) {
					return a
				}
			case <-timeout:
				t.Fatalf("memhost mcp did not answer %s; stderr: %s", id, stderr.String())
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"crashtest","version":"1"}}}`)
	wait("1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`)
	return wait("2")
}
