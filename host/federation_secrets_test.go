package host

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
)

// remoteHolds reports whether any object of the bare remote's history
// holds s.
func remoteHolds(t *testing.T, remote, s string) bool {
	t.Helper()
	out, err := exec.Command("sh", "-c", `git -C "$0" rev-list --all --objects | cut -d' ' -f1 | git -C "$0" cat-file --batch`, remote).Output()
	if err != nil {
		t.Fatalf("reading %s: %v", remote, err)
	}
	return strings.Contains(string(out), s)
}

// A shared file holding a secret is never committed, so never pushed, as
// git hosts' push protection refuses it: a page a person wrote in an
// editor, a transcript written under keep-local. The sync says which,
// health fails until the secret is gone, and the file is committed at its
// next clean change.
func TestFederationHoldsBackSecrets(t *testing.T) {
	ctx := context.Background()
	remote := bareRemote(t)
	h := openHost(t, t.TempDir(), func(c *config.Config) { c.Memory.Privacy.Secrets = config.SecretsKeepLocal })
	writePage(t, h, "lists/todo.md", "# Todo\n- buy milk\n")
	if _, err := h.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil {
		t.Fatal(err)
	}
	writePage(t, h, "reference/ci.md", "# CI\n\n- deploy key "+sampleGitHub+"\n")
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "the key is " + sampleAWS}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "a clean fact", Category: "knowledge"}); err != nil {
		t.Fatal(err)
	}
	res, err := h.FedSync(ctx, memhost.FedSyncRequest{})
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]string{}
	for _, hb := range res.HeldBack {
		held[hb.Path] = hb.Rule
	}
	if held["notebook/reference/ci.md"] != "github-pat" || held["sessions/s1.jsonl"] != "aws-access-token" {
		t.Fatalf("held back: %+v", res.HeldBack)
	}
	for _, s := range []string{sampleGitHub, sampleAWS} {
		if remoteHolds(t, remote, s) {
			t.Fatalf("the remote holds %.8s…", s)
		}
	}
	if !remoteHolds(t, remote, "a clean fact") {
		t.Fatal("the clean page was not pushed")
	}
	hr, err := h.Health(ctx, memhost.HealthRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var check memhost.HealthCheck
	for _, c := range hr.Checks {
		if c.Name == "federation" {
			check = c
		}
	}
	if check.Status != "fail" || !strings.Contains(check.Message, "notebook/reference/ci.md (github-pat") {
		t.Fatalf("health: %+v", check)
	}
	// The person takes the key out: the page is committed and pushed.
	writePage(t, h, "reference/ci.md", "# CI\n\n- deploy key in the vault\n")
	res, err = h.FedSync(ctx, memhost.FedSyncRequest{})
	if err != nil || len(res.HeldBack) != 1 || res.HeldBack[0].Path != "sessions/s1.jsonl" {
		t.Fatalf("after the edit: %+v %v", res.HeldBack, err)
	}
	if !remoteHolds(t, remote, "deploy key in the vault") || remoteHolds(t, remote, sampleGitHub) {
		t.Fatal("the cleaned page did not reach the remote as it is now")
	}
}
