package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryPluginOptionControlChar: a plugin option holding a control
// character is refused before the plugin sees it, with the option named,
// and config.yaml keeps nothing of it (the ollama plugin takes any model
// name, and config.yaml kept "a\x01b").
func TestBinaryPluginOptionControlChar(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	if _, errOut, err := exe(home, "", nil, "init"); err != nil {
		t.Fatalf("init: %v %s", err, errOut)
	}
	before, _ := os.ReadFile(filepath.Join(home, "config.yaml"))
	_, errOut, err := exe(home, "", nil, "plugins", "use", "ollama", "--set", "model=all-minilm\x01", "--set", "url=http://127.0.0.1:1")
	if err == nil {
		t.Fatalf("plugins use with a control character succeeded; stderr %q", errOut)
	}
	if want := `option model="all-minilm\x01" holds a control character (U+0001)`; !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr %q, want one line with %s", errOut, want)
	}
	if after, _ := os.ReadFile(filepath.Join(home, "config.yaml")); string(after) != string(before) {
		t.Errorf("config.yaml changed:\n%s", after)
	}
}
