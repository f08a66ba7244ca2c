package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost/internal/syncbuf"
	"github.com/memhost/memhost/server"
)

// TestBinaryServeFIFOPage: a FIFO where a page would be does not hang the
// server. The API answers 400 at once for each operation on it, the CLI
// prints one line and exits 1, a write right after succeeds, and SIGTERM
// still ends the server.
func TestBinaryServeFIFOPage(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	if _, errOut, err := exe(home, "", nil, "init"); err != nil {
		t.Fatal(err, errOut)
	}
	fifo := filepath.Join(home, "notebook", "lists", "fifo.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--home", home, "serve", "--listen", "")
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	waitServing(t, home, cmd.Process.Pid)

	client := &http.Client{
		Timeout: 10 * time.Second, // a hang guard: the answer comes at once
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", server.SocketPath(home))
		}},
	}
	for _, c := range []struct{ op, body string }{
		{"write", `{"path":"lists/fifo.md","text":"milk"}`},
		{"remember", `{"text":"oat milk","category":"lists","file":"fifo"}`},
		{"get", `{"path":"lists/fifo.md"}`},
		{"rm", `{"path":"lists/fifo.md"}`},
	} {
		resp, err := client.Post("http://memhost/api/v1/"+c.op, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.op, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"message":"not a regular file (a FIFO)","path":"lists/fifo.md"`) {
			t.Errorf("%s: %d %s", c.op, resp.StatusCode, body)
		}
	}
	_, errOut, err := exe(home, "", nil, "write", "lists/fifo.md", "milk")
	if exitCode(err) != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "not a regular file (a FIFO)") {
		t.Errorf("write through the CLI: %v %q", err, errOut)
	}
	if _, errOut, err := exe(home, "", nil, "write", "lists/ok.md", "bread"); err != nil {
		t.Fatalf("a write after: %v %s", err, errOut)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop on SIGTERM\n%s", out.String())
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO page changed: %v %v", fi, err)
	}
}
