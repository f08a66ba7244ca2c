package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Secrets that gitleaks' rules detect (made-up values).
const (
	transportAWS    = "AKIALALEMEL33243OLIB"
	transportGitHub = "ghp_R8wK3mZp5VtQ9xLc2HbN7jYf4sDg6aWe1uTo"
)

// TestSecretsRedactedThroughEveryTransport: every write the CLI makes
// redacts a pasted secret and says so on stderr, whether it runs in this
// process or through the home's server (HTTP over its unix socket); no
// file of the home holds the secret afterwards. (MCP's tools:
// TestMCPRedacts.)
func TestSecretsRedactedThroughEveryTransport(t *testing.T) {
	t.Parallel()
	writes := []struct {
		name string
		args func(tag string) []string
	}{
		{"remember", func(tag string) []string {
			return []string{"remember", "--category", "reference", "--file", "keys-" + tag, "the " + tag + " key is " + transportAWS}
		}},
		{"write", func(tag string) []string {
			return []string{"write", "knowledge/env-" + tag + ".md", "TOKEN=" + transportGitHub}
		}},
		{"daily-log", func(tag string) []string { return []string{"daily-log", "rotated " + tag + " " + transportAWS} }},
		{"session append", func(tag string) []string {
			return []string{"session", "append", "--session", "s-" + tag, "--role", "user", "my key is " + transportGitHub}
		}},
		{"fact add", func(tag string) []string { return []string{"fact", "add", "CI " + tag, "deploy key", transportGitHub} }},
	}
	for _, mode := range []string{"in-process", "server"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			if _, errOut, err := exe(home, "", nil, "init"); err != nil {
				t.Fatal(err, errOut)
			}
			var env []string
			if mode == "server" {
				out, errOut, err := exe(home, "", nil, "serve", "--detach", "--listen", "")
				if err != nil {
					t.Fatalf("serve --detach: %v %q %q", err, out, errOut)
				}
				in, err := serveInfo(t, home)
				if err != nil || in.PID == 0 {
					t.Fatalf("serve status: %+v %v", in, err)
				}
				t.Cleanup(func() { syscall.Kill(in.PID, syscall.SIGKILL) })
			} else {
				env = []string{"MEMHOST_NO_SERVER=1"}
			}
			for _, w := range writes {
				before := 0
				if mode == "server" {
					in, _ := serveInfo(t, home)
					before = int(in.Requests)
				}
				_, errOut, err := exe(home, "", env, w.args(strings.ReplaceAll(mode, "-", ""))...)
				if err != nil {
					t.Fatalf("%s: %v %s", w.name, err, errOut)
				}
				if !strings.Contains(errOut, "redacted") {
					t.Errorf("%s (%s): stderr does not say what was redacted: %q", w.name, mode, errOut)
				}
				if mode == "server" {
					if in, _ := serveInfo(t, home); int(in.Requests) <= before+1 {
						t.Errorf("%s did not go through the server (%d requests before, %d after)", w.name, before, in.Requests)
					}
				}
			}
			for _, secret := range []string{transportAWS, transportGitHub} {
				filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
					if err != nil || d.IsDir() || strings.HasSuffix(p, ".sock") {
						return nil
					}
					if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
						t.Errorf("%s holds %.8s…", strings.TrimPrefix(p, home), secret)
					}
					return nil
				})
			}
		})
	}
}

// TestMCPRedacts: MCP's writes (memhost mcp, in its own process) redact
// a pasted secret and their answers say what was redacted; no file of the
// home holds it afterwards.
func TestMCPRedacts(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	cs, _ := mcpStdio(t, home, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"remember", map[string]any{"text": "the CI key is " + transportAWS, "category": "reference", "file": "ci"}},
		{"notebook_write", map[string]any{"path": "knowledge/env.md", "text": "TOKEN=" + transportGitHub}},
		{"daily_log", map[string]any{"text": "rotated " + transportAWS}},
		{"fact_add", map[string]any{"entity": "CI", "attribute": "deploy key", "value": transportGitHub}},
	} {
		var resp struct {
			Redacted []struct{ Rule string } `json:"redacted"`
		}
		mcpCall(t, cs, c.tool, c.args, &resp)
		if len(resp.Redacted) != 1 || resp.Redacted[0].Rule == "" {
			t.Errorf("%s: redacted %+v", c.tool, resp.Redacted)
		}
	}
	cs.Close()
	for _, secret := range []string{transportAWS, transportGitHub} {
		filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
					t.Errorf("%s holds %.8s…", strings.TrimPrefix(p, home), secret)
				}
			}
			return nil
		})
	}
}
