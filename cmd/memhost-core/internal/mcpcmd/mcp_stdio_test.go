package mcpcmd

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/memhost/memhost/internal/syncbuf"
)

// TestStdioConnWholeLines: the SDK's writes (answers, notifications) and
// the reader's refusals of bad lines share stdout: each line written is
// one whole message, whichever writes at the same time.
func TestStdioConnWholeLines(t *testing.T) {
	inR, inW := io.Pipe()
	var out syncbuf.Buffer
	conn, err := (&stdioTransport{in: inR, out: &out}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range n {
			io.WriteString(inW, "[]\n")
		}
		inW.Close()
	}()
	go func() {
		defer wg.Done()
		for i := range n {
			msg := &jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"text":"` + strings.Repeat("x", 4096) + `"}`)}
			if err := conn.Write(context.Background(), msg); err != nil {
				t.Errorf("write %d: %v", i, err)
			}
		}
	}()
	wg.Wait()
	if _, err := conn.Read(context.Background()); err != io.EOF {
		t.Fatalf("Read at the end of stdin: %v, want EOF", err)
	}
	conn.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	refused, notes := 0, 0
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a line that is not one message: %.100q", l)
		}
		if _, ok := m["error"]; ok {
			refused++
		} else {
			notes++
		}
	}
	if refused != n || notes != n {
		t.Errorf("%d refusals and %d notifications, want %d of each", refused, notes, n)
	}
}
