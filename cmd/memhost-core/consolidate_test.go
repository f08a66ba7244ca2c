package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/internal/fakellm"
	"github.com/memhost/memhost/internal/fakeollama"
)

// TestBinaryConsolidate: memhost consolidate through the memhost binary
// and the real Ollama generator plugin, against a server speaking Ollama's
// chat API with scripted answers for a conversation with a contradiction;
// then the page on disk, recall's FACTS group, a hand edit, a second run,
// a malformed answer, and status in text and JSON, in-process and through
// memhost serve.
func TestBinaryConsolidate(t *testing.T) {
	t.Parallel() // a home and processes of its own
	gen, err := buildGenerator()
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeollama.New(map[string]fakeollama.Model{"llama3.2:latest": {Capabilities: []string{"completion"}}})
	defer srv.Close()
	var mu sync.Mutex
	seen := map[string]int{}
	srv.Chat.SetAnswer(func(req fakellm.Request) string {
		var ep string
		for _, m := range req.Messages {
			if m.Role == "user" && strings.HasPrefix(m.Content, "[e1] ") {
				ep = m.Content
			}
		}
		mu.Lock()
		seen[ep]++
		n := seen[ep]
		mu.Unlock()
		switch {
		case strings.Contains(ep, "TechFlow"):
			return `{"facts": [{"entity": "Sarah Chen", "attribute": "role", "value": "designer", "episode": "e1"}],
			 "relations": [{"from": "Sarah Chen", "relation": "works at", "to": "TechFlow", "episode": "e1"},
			               {"from": "Sarah Chen", "relation": "works at", "to": "Acme Corp", "episode": "e2"}]}`
		case strings.Contains(ep, "wifi"):
			if n%2 == 1 {
				return `{"facts": [{"entity": "office", "attribute": "wifi"`
			}
			return `{"facts": "none"}`
		}
		return `{"facts": [], "relations": []}`
	})
	home := t.TempDir()
	b, err := os.ReadFile(gen)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	os.WriteFile(filepath.Join(home, "plugins", "memhost-generator-ollama"), b, 0o755)
	cfg := "memory:\n  generator:\n    plugin: ollama\n    options:\n      ollama: {url: \"" + srv.URL + "\", retries: \"0\"}\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, turn := range [][2]string{
		{"chat-1", "My colleague Sarah Chen works at TechFlow as a designer."},
		{"chat-1", "Sarah moved to Acme Corp last week."},
		{"chat-2", "The office wifi changed."},
	} {
		if _, errOut, err := exe(home, "", nil, "session", "append", "--session", turn[0], "--role", "user", turn[1]); err != nil {
			t.Fatal(errOut)
		}
	}
	out, errOut, err := exe(home, "", nil, "consolidate")
	if err != nil || !strings.HasPrefix(out, "consolidated 3 episodes in 1 batches; llama3.2:latest") ||
		!strings.Contains(out, "sarah-chen: works at = [[acme-corp]]") || !strings.Contains(out, "added, superseding ^") ||
		!strings.Contains(out, "skipped chat-2 (1 episodes, tried again next run): two bad answers; the last: does not match the schema") {
		t.Fatalf("consolidate: %v\n%s\n%s", err, out, errOut)
	}
	if n := len(srv.Chat.Requests()); n != 3 {
		t.Fatalf("%d chat requests, want 3 (chat-1 once, chat-2 twice)", n)
	}
	page, err := os.ReadFile(filepath.Join(home, "notebook", "knowledge", "entities", "sarah-chen.md"))
	if err != nil || !strings.Contains(string(page), "~~[[techflow]]~~") || !strings.Contains(string(page), "- [[acme-corp]]") {
		t.Fatalf("page: %v\n%s", err, page)
	}
	if _, err := os.Stat(filepath.Join(home, "notebook", "knowledge", "entities", "office.md")); !os.IsNotExist(err) {
		t.Fatalf("the skipped batch wrote a page: %v", err)
	}
	out, _, err = exe(home, "", nil, "recall", "where does sarah work")
	if err != nil || !strings.HasPrefix(out, "FACTS (") || !strings.Contains(strings.SplitN(out, "\n", 3)[1], "[[acme-corp]]") {
		t.Fatalf("recall does not open with the FACTS group:\n%s", out)
	}
	out, _, _ = exe(home, "", nil, "status")
	if !strings.Contains(out, "generator:     ollama (configured)\n") ||
		!strings.Contains(out, ": 3 episodes, 3 facts applied, 1 batches skipped\n") {
		t.Fatalf("status:\n%s", out)
	}

	// Through memhost serve: the same command is forwarded; the page
	// edited by hand is read again; a second run adds nothing.
	if out, errOut, err := exe(home, "", nil, "serve", "--detach", "--listen", ""); err != nil {
		t.Fatalf("serve: %v\n%s%s", err, out, errOut)
	}
	defer exe(home, "", nil, "serve", "stop")
	edited := strings.Replace(string(page), "- [[acme-corp]]", "- [[globex]]", 1)
	os.WriteFile(filepath.Join(home, "notebook", "knowledge", "entities", "sarah-chen.md"), []byte(edited), 0o644)
	out, _, _ = exe(home, "", nil, "recall", "where does sarah work")
	if !strings.HasPrefix(out, "FACTS (") || !strings.Contains(out, "[[globex]]") {
		t.Fatalf("recall after the hand edit:\n%s", out)
	}
	out, errOut, err = exe(home, "", nil, "consolidate")
	if err != nil || !strings.HasPrefix(out, "consolidated 1 episodes in 0 batches") || strings.Contains(out, "sarah-chen") {
		t.Fatalf("second consolidate: %v\n%s\n%s", err, out, errOut)
	}
	if after, _ := os.ReadFile(filepath.Join(home, "notebook", "knowledge", "entities", "sarah-chen.md")); string(after) != edited {
		t.Fatalf("the second run changed the page:\n%s", after)
	}
	out, _, err = exe(home, "", nil, "status", "--json")
	var st mh.StatusResponse
	if err != nil || json.Unmarshal([]byte(out), &st) != nil || st.Generator.Plugin != "ollama" || st.Generator.Last == nil ||
		st.Generator.Last.Episodes != 1 || st.Generator.Last.Applied != 0 || st.Generator.Last.Skipped != 1 {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
}
