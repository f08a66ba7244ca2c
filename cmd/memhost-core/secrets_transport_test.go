package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memhost/memhost/internal/secretsample"
)

// Secrets that gitleaks' rules detect (its published samples).
const (
	transportAWS    = secretsample.AWS
	transportGitHub = secretsample.GitHub
)

// TestSecretsRedactedThroughEveryTransport: every write the CLI makes
// — remember, write, daily-log, session append, fact add, session ingest
// (a tool call's metadata too), import (an archive exported with its
// secrets from a keep-local home) — redacts a pasted secret and says so
// on stderr, whether it runs in this process or through the home's server
// (HTTP over its unix socket); no output prints one and no file of the
// home holds one afterwards. (MCP's tools: TestMCPRedacts.)
func TestSecretsRedactedThroughEveryTransport(t *testing.T) {
	t.Parallel()
	scratch := t.TempDir()
	src := filepath.Join(scratch, "chat.jsonl")
	os.WriteFile(src, []byte(`{"id":"1","role":"user","content":"use `+transportGitHub+`"}`+"\n"+`{"id":"2","role":"tool","content":"env","metadata":{"out":"AWS=`+transportAWS+`"}}`+"\n"), 0o600)
	// The archive: a keep-local home's page with a key, exported with it.
	other := filepath.Join(scratch, "other")
	os.MkdirAll(other, 0o700)
	os.WriteFile(filepath.Join(other, "config.yaml"), []byte("memory:\n  privacy:\n    secrets: keep-local\n"), 0o600)
	if _, errOut, err := exe(other, "", []string{"MEMHOST_NO_SERVER=1"}, "remember", "--category", "reference", "--file", "ops", "the ops key is "+transportAWS); err != nil {
		t.Fatal(err, errOut)
	}
	archive := filepath.Join(scratch, "other.tar.gz")
	if _, errOut, err := exe(other, "", []string{"MEMHOST_NO_SERVER=1"}, "export", "--include-secrets", archive); err != nil {
		t.Fatal(err, errOut)
	}
	writes := []struct {
		name string
		args func(tag string) []string
	}{
		{"remember", func(tag string) []string {
			return []string{"remember", "--category", "reference", "--file", "keys-" + tag, "the " + tag + " key is " + transportAWS}
		}},
		{"write", func(tag string) []string {
			return []string{"write", "knowledge/env-" + tag + ".md", "TOKEN=" + transportGitHub + "\nDB=postgres://app:" + secretsample.URLPassword + "@db.internal/prod"}
		}},
		{"daily-log", func(tag string) []string { return []string{"daily-log", "rotated " + tag + " " + transportAWS} }},
		{"session append", func(tag string) []string {
			return []string{"session", "append", "--session", "s-" + tag, "--role", "user", "my key is " + transportGitHub}
		}},
		{"fact add", func(tag string) []string { return []string{"fact", "add", "CI " + tag, "deploy key", transportGitHub} }},
		{"session ingest", func(string) []string { return []string{"session", "ingest", "--format", "memhost", src} }},
		{"import", func(string) []string { return []string{"import", archive} }},
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
				out, errOut, err := exe(home, "", env, w.args(strings.ReplaceAll(mode, "-", ""))...)
				if err != nil {
					t.Fatalf("%s: %v %s", w.name, err, errOut)
				}
				for _, secret := range secretsample.All {
					if strings.Contains(out+errOut, secret) {
						t.Errorf("%s (%s) printed %.8s…", w.name, mode, secret)
					}
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
			for _, secret := range secretsample.All {
				if files := secretsample.Holding(home, secret); len(files) > 0 {
					t.Errorf("%.8s… is in %v", secret, files)
				}
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
		if files := secretsample.Holding(home, secret); len(files) > 0 {
			t.Errorf("%.8s… is in %v", secret, files)
		}
	}
}
