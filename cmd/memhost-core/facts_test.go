package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoldenFacts: the facts commands' output and exit codes, in-process
// and through a running server (the same transcript, byte for byte).
func TestGoldenFacts(t *testing.T) {
	t.Run("in-process", goldenFacts)
	if *update {
		return
	}
	t.Run("via-server", func(t *testing.T) {
		goldenViaServer, goldenForwards = true, true
		defer func() { goldenViaServer = false }()
		goldenFacts(t)
	})
}

func goldenFacts(t *testing.T) {
	g := newGolden(t)
	g.run("fact", "add", "Sarah Chen", "works at", "[[techflow]]", "--source", "chat-1 turn 1a2b3c4d5e6f")
	g.run("fact", "add", "sarah chen", "works at", "[[acme-corp]]", "--source", "chat-1 turn 8f3a2b1c9d0e", "--confidence", "0.9")
	g.run("fact", "add", "Sarah Chen", "works at", "[[Acme Corp]]")
	g.run("fact", "add", "sarah-chen", "likes", "green tea", "--keep")
	g.run("fact", "add", "sarah-chen", "likes", "hiking", "--keep")
	g.run("fact", "add", "Bob", "manager", "[[sarah-chen]]")
	g.run("facts", "Sarah Chen")
	g.run("facts", "sarah-chen", "--history")
	g.run("get", "knowledge/entities/sarah-chen.md")
	g.run("fact", "forget", "sarah-chen", "likes", "hiking")
	g.run("fact", "forget", "sarah-chen", "likes", "hiking")
	g.run("relations", "sarah-chen")
	g.run("relations", "acme-corp")
	g.run("entities")
	g.run("recall", "where does sarah work")
	g.run("recall", "tea")
	// A person edits the page: their edit wins.
	p := filepath.Join(g.home, "notebook", "knowledge", "entities", "sarah-chen.md")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	g.writeFile("knowledge/entities/sarah-chen.md", strings.Replace(string(b), "- green tea", "- jasmine tea", 1)+"\n## email\n- sarah@acme.example\n")
	g.run("facts", "sarah-chen")
	g.run("context")
	// Bad input.
	g.run("fact", "add", "sarah-chen", "likes")
	g.run("fact", "add", "sarah-chen", "likes", "two\nlines")
	g.run("fact", "add", "!!!", "likes", "tea")
	g.run("fact", "add", "x", "a", "v [k:: w]")
	g.run("fact", "add", "x", "a", "b", "--confidence", "2")
	g.run("fact", "forget")
	g.run("fact", "forget", "fnothing")
	g.run("facts", "nobody")
	g.run("relations", "nobody")
	g.run("consolidate")
	g.run("files")
	g.check("facts")
}
