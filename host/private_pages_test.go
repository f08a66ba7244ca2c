package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost"
)

// Private pages (under private/ or with private: true) and private
// sessions are searchable here and never committed, pushed or exported;
// a remote that sends a private page is refused.
func TestPrivateNeverLeaves(t *testing.T) {
	ctx := context.Background()
	remote := bareRemote(t)
	a := newHost(t)
	writePage(t, a, "lists/todo.md", "# Todo\n- buy milk\n")
	if _, err := a.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil {
		t.Fatal(err)
	}
	writePage(t, a, "private/diary.md", "# Diary\n\nkumquat confession\n")
	writePage(t, a, "knowledge/health.md", "---\nprivate: true\n---\n# Health\n\nquince allergy\n")
	if _, err := a.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "secret-chat", Role: "user", Text: "persimmon plans", Private: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Remember(ctx, memhost.RememberRequest{Text: "a shared fact", Category: "knowledge"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.FedSync(ctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"kumquat", "quince", "persimmon"} {
		if remoteHolds(t, remote, w) {
			t.Fatalf("the remote holds %q", w)
		}
		if len(found(t, a, w)) == 0 && w != "persimmon" {
			t.Fatalf("%q is not searchable here", w)
		}
	}
	if !remoteHolds(t, remote, "a shared fact") {
		t.Fatal("the shared page was not pushed")
	}
	ex, err := a.Export(ctx, memhost.ExportRequest{Path: filepath.Join(t.TempDir(), "a.tar.gz"), IncludeSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"kumquat", "quince", "persimmon"} {
		if archiveHolds(t, ex.Path, w) {
			t.Fatalf("the export holds %q: %+v", w, ex.LeftOut)
		}
	}
	// Another machine pushes a private page: refused.
	b := newHost(t)
	if _, err := b.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil {
		t.Fatal(err)
	}
	peer := filepath.Join(t.TempDir(), "peer")
	gitOut(t, filepath.Dir(peer), "clone", "-q", remote, peer)
	os.MkdirAll(filepath.Join(peer, "notebook", "knowledge"), 0o755)
	os.WriteFile(filepath.Join(peer, "notebook", "knowledge", "theirs.md"), []byte("---\nprivate: true\n---\nnot for you\n"), 0o644)
	gitOut(t, peer, "add", "-A")
	gitOut(t, peer, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qm", "private page")
	gitOut(t, peer, "push", "-q", "origin", "HEAD:main")
	if _, err := b.FedSync(ctx, memhost.FedSyncRequest{}); err == nil || !strings.Contains(err.Error(), "private") {
		t.Fatalf("a remote sending a private page: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b.NotebookDir(), "knowledge", "theirs.md")); err == nil {
		t.Fatal("the private page landed")
	}
}
