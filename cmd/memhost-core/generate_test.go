package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memhost/memhost/internal/fakellm"
	"github.com/memhost/memhost/internal/fakeollama"
	"github.com/memhost/memhost/internal/testbin"
)

// buildGenerator builds memhost-generator-ollama once; tests copy it into
// their home's plugins/ folder (beside memhost it would show in every
// other test's plugin list).
func buildGenerator() (string, error) { return testbin.Build("../../plugins/generator-ollama", "") }

// TestBinaryGenerator: remember --auto and session compact --summarize
// through the memhost binary and the real Ollama generator plugin, against
// a server speaking Ollama's chat API with scripted answers.
func TestBinaryGenerator(t *testing.T) {
	t.Parallel() // a home and processes of its own
	gen, err := buildGenerator()
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeollama.New(map[string]fakeollama.Model{"llama3.2:latest": {Capabilities: []string{"completion"}}})
	defer srv.Close()
	home := t.TempDir()
	b, err := os.ReadFile(gen)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	os.WriteFile(filepath.Join(home, "plugins", "memhost-generator-ollama"), b, 0o755)
	// Without a generator: remember --auto routes by rules and says so;
	// compact --summarize fails, naming the key to set.
	out, errOut, err := exe(home, "", nil, "remember", "--auto", "Sarah Chen - Phone: 555-1234")
	if err != nil || out != "remembered in reference/contacts.md § Sarah Chen (new section, line 4) (chosen by the rules)\n" ||
		errOut != "memhost: warning: no generator configured: set memory.generator.plugin (ollama or openai); routed by the rules instead\n" {
		t.Errorf("remember --auto without a generator: %v\n%q\n%q", err, out, errOut)
	}
	for _, text := range []string{"We picked Postgres for billing because of transactions.", "Sarah sets it up by Friday.", "What next?"} {
		if _, errOut, err := exe(home, "", nil, "session", "append", "--session", "s1", "--role", "user", text); err != nil {
			t.Fatal(errOut)
		}
	}
	_, errOut, err = exe(home, "", nil, "session", "compact", "s1", "--summarize")
	if err == nil || errOut != "memhost: no generator configured: set memory.generator.plugin (ollama or openai)\n" {
		t.Errorf("compact --summarize without a generator: %v %q", err, errOut)
	}

	cfg := "memory:\n  compaction:\n    keepRecentTokens: 5\n  generator:\n    plugin: ollama\n    options:\n      ollama: {url: \"" + srv.URL + "\"}\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Chat.Push(fakellm.Reply{Content: `{"category": "reference", "page": "people", "section": "Sarah Chen", "tags": ["people"]}`})
	out, errOut, err = exe(home, "", nil, "remember", "--auto", "Sarah moved to Acme Corp")
	if err != nil || out != "remembered in reference/people.md § Sarah Chen (new section, line 7) (chosen by the generator; tags added: people)\n" || errOut != "" {
		t.Errorf("remember --auto: %v\n%q\n%q", err, out, errOut)
	}
	page, _ := os.ReadFile(filepath.Join(home, "notebook", "reference", "people.md"))
	if string(page) != "---\ntags: [people]\n---\n# People\n\n## Sarah Chen\n- Sarah moved to Acme Corp\n" {
		t.Errorf("page:\n%s", page)
	}
	// A malformed answer: the rules route, with a warning.
	srv.Chat.Push(fakellm.Reply{Raw: `{"message": {"content": "{`})
	out, errOut, err = exe(home, "", nil, "remember", "--auto", "buy oat milk")
	if err != nil || !strings.HasPrefix(out, "remembered in lists/shopping.md") || !strings.Contains(errOut, "malformed JSON") {
		t.Errorf("malformed answer: %v\n%q\n%q", err, out, errOut)
	}
	srv.Chat.Push(fakellm.Reply{Content: "- Postgres chosen for billing (transactions).\n- Sarah sets it up by Friday."})
	out, errOut, err = exe(home, "", nil, "session", "compact", "s1", "--summarize")
	if err != nil || !strings.Contains(out, "summary written by llama3.2:latest:\n- Postgres chosen for billing") {
		t.Errorf("compact --summarize: %v\n%s\n%s", err, out, errOut)
	}
	out, _, _ = exe(home, "", nil, "plugins", "status")
	if !strings.Contains(out, "generator: ollama (ollama/llama3.2:latest), ready") {
		t.Errorf("plugins status:\n%s", out)
	}
	out, _, _ = exe(home, "", nil, "plugins", "list")
	if !strings.Contains(out, "GENERATOR") || !regexp.MustCompile(`ollama \*\s+1\.0\.0\s+ollama/llama3\.2:latest\s+ready`).MatchString(out) {
		t.Errorf("plugins list:\n%s", out)
	}
	if _, errOut, err := exe(home, "", nil, "session", "compact", "s1", "--summarize", "--summary", "x"); err == nil || !strings.Contains(errOut, "not both") {
		t.Errorf("both flags: %v %q", err, errOut)
	}
}
