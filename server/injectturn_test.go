package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInjectTurnOnce: the debug API's inject-turn takes a requestId, as
// every write does, so that a client that lost the answer (the server died,
// the connection broke) may send it again: the turn is written once and the
// retry answers as the first request did.
func TestInjectTurnOnce(t *testing.T) {
	home := t.TempDir()
	r := start(t, home, "127.0.0.1:0", "health:\n  everyMin: 0\n")
	send := func(body string) (int, map[string]any) {
		t.Helper()
		code, resp, _ := do(t, "POST", r.info.URL+"/api/debug/brain/inject-turn", body)
		var out map[string]any
		if err := json.Unmarshal([]byte(resp), &out); err != nil {
			t.Fatalf("%d %s: %v", code, resp, err)
		}
		return code, out
	}
	req := `{"role": "user", "content": "Sarah's new number is 555-4321", "requestId": "inject-1"}`
	code1, first := send(req)
	code2, again := send(req)
	if code1 != 200 || code2 != 200 {
		t.Fatalf("inject-turn, then its retry: %d %v, %d %v", code1, first, code2, again)
	}
	id1, id2 := first["turn"].(map[string]any)["id"], again["turn"].(map[string]any)["id"]
	if id1 != id2 {
		t.Errorf("the retry answers turn %v, the first request turn %v", id2, id1)
	}
	b, err := os.ReadFile(filepath.Join(home, "sessions", "debug.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "555-4321"); n != 1 {
		t.Errorf("the turn is in the transcript %d times:\n%s", n, b)
	}
	// Another id is another turn; a bad id is refused naming the field.
	if code, out := send(`{"role": "user", "content": "Sarah's new number is 555-4321", "requestId": "inject-2"}`); code != 200 || out["turn"].(map[string]any)["id"] == id1 {
		t.Errorf("another request id: %d %v", code, out)
	}
	if code, out := send(`{"role": "user", "content": "x", "requestId": "a b"}`); code != 400 || out["error"].(map[string]any)["field"] != "requestId" {
		t.Errorf("a request id with a space: %d %v", code, out)
	}
}
