package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost/internal/secretsample"
)

// TestCLIStoresNoSecret: every command that writes text — remember,
// write, daily-log, session append, fact add, session ingest, import — run as a
// person or an agent runs it, in its own process and then forwarded to a
// running server, tells on stderr what it redacted, prints no secret, and
// leaves no byte of one in any file of the home under the default policy.
func TestCLIStoresNoSecret(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	secrets := secretsample.All
	aws, gh, slack, pwd := secretsample.AWS, secretsample.GitHub, secretsample.Slack, secretsample.URLPassword
	src := filepath.Join(t.TempDir(), "chat.jsonl")
	os.WriteFile(src, []byte(`{"id":"1","role":"user","content":"use `+gh+`"}`+"\n"+`{"id":"2","role":"tool","content":"env","metadata":{"out":"AWS=`+aws+`"}}`+"\n"), 0o600)
	runAll := func(mode string) {
		t.Helper()
		for _, args := range [][]string{
			{"remember", "--category", "reference", "--file", "ci-" + mode, "the CI key is " + aws},
			{"write", "knowledge/db-" + mode + ".md", "postgres://app:" + pwd + "@db.internal/prod"},
			{"daily-log", "new bot token " + slack + " (" + mode + ")"},
			{"session", "append", "--session", "s-" + mode, "--role", "user", "my key is " + aws},
			{"fact", "add", "ci", "deploy key " + mode, gh},
		} {
			stdout, stderr, err := exe(home, "", nil, args...)
			if err != nil {
				t.Fatalf("%s: memhost %s: %v\n%s", mode, args[0], err, stderr)
			}
			if !strings.Contains(stderr, "secret redacted before it was stored") {
				t.Errorf("%s: memhost %s said nothing of the redaction: %q", mode, strings.Join(args[:1], " "), stderr)
			}
			for _, s := range secrets {
				if strings.Contains(stdout+stderr, s) {
					t.Errorf("%s: memhost %s printed %.8s…", mode, args[0], s)
				}
			}
		}
	}
	runAll("in-process")
	// The same through a server (socket only), then the ingest, which a
	// server runs too.
	srv := exec.Command(binary, "--home", home, "serve", "--listen", "")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if in, err := serveInfo(t, home); err == nil && in.PID == srv.Process.Pid {
			break
		}
		if time.Now().After(deadline) {
			srv.Process.Kill()
			t.Fatal("the server did not answer")
		}
	}
	runAll("served")
	if _, stderr, err := exe(home, "", nil, "session", "ingest", "--format", "memhost", src); err != nil || !strings.Contains(stderr, "secret redacted") {
		t.Errorf("session ingest: %v %q", err, stderr)
	}
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
	// An archive that holds secrets (exported with them from a keep-local
	// home), imported here.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "config.yaml"), []byte("memory:\n  privacy:\n    secrets: keep-local\n"), 0o600)
	if _, stderr, err := exe(other, "", nil, "remember", "--category", "reference", "--file", "ops", "the ops key is "+aws); err != nil {
		t.Fatalf("remember under keep-local: %v %s", err, stderr)
	}
	archive := filepath.Join(t.TempDir(), "other.tar.gz")
	if _, stderr, err := exe(other, "", nil, "export", "--include-secrets", archive); err != nil {
		t.Fatalf("export: %v %s", err, stderr)
	}
	if _, stderr, err := exe(home, "", nil, "import", archive); err != nil || !strings.Contains(stderr, "secret redacted before it was stored: aws-access-token") || strings.Contains(stderr, aws) {
		t.Errorf("import: %v %q", err, stderr)
	}
	for _, secret := range secrets {
		if files := secretsample.Holding(home, secret); len(files) > 0 {
			t.Errorf("%.8s… is in %v", secret, files)
		}
	}
}
