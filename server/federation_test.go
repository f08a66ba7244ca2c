package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
)

// seedPages writes notebook pages and a transcript into a home before its
// server starts.
func seedPages(t *testing.T, home string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(home, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestArchiveThroughServer: export through one home's server on its unix
// socket, import the archive through another's: the pages and the
// transcript arrive and are searchable there. Relative paths and an
// archive that exists are refused, naming the path.
func TestArchiveThroughServer(t *testing.T) {
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	seedPages(t, a, map[string]string{
		"notebook/reference/contacts.md": "# Contacts\n\n## Sarah Chen\n- Phone: 555-1234\n",
		"sessions/planning.jsonl":        `{"id":"p1","type":"message","role":"user","content":"Plan the quokka migration","timestamp":"2026-02-20T10:00:00Z"}` + "\n",
	})
	seedPages(t, b, map[string]string{"notebook/lists/shopping.md": "# Shopping\n\n- oat milk\n"})
	ra, rb := start(t, a, "", ""), start(t, b, "", "")
	ca, cb := ra.client(t), rb.client(t)
	if _, err := ca.Remember(ctx, memhost.RememberRequest{Text: "The kettle is descaled every second Sunday", Category: "knowledge", File: "home"}); err != nil {
		t.Fatal(err)
	}

	archive := filepath.Join(t.TempDir(), "a.tar.gz")
	exp, err := ca.Export(ctx, memhost.ExportRequest{Path: archive})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(archive)
	if err != nil || fi.Size() != exp.Bytes || exp.Files < 3 || len(exp.SHA256) != 64 {
		t.Fatalf("export: %+v, file %v %v", exp, fi, err)
	}
	if _, err := ca.Export(ctx, memhost.ExportRequest{Path: archive}); fault.KindOf(err) != fault.Conflict || fault.FieldOf(err) != "path" {
		t.Fatalf("export over an existing file: %v", err)
	}
	if _, err := ca.Export(ctx, memhost.ExportRequest{Path: "backup.tar.gz"}); fault.KindOf(err) != fault.BadInput || fault.FieldOf(err) != "path" ||
		!strings.Contains(err.Error(), "backup.tar.gz is a relative path") {
		t.Fatalf("export to a relative path: %v", err)
	}

	imp, err := cb.Import(ctx, memhost.ImportRequest{Path: archive})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"notebook/reference/contacts.md", "notebook/knowledge/home.md", "sessions/planning.jsonl"} {
		if !slices.Contains(imp.Added, want) {
			t.Errorf("import: %s not added: %+v", want, imp)
		}
	}
	if imp.Indexed == 0 || imp.Files != exp.Files {
		t.Fatalf("import: %+v", imp)
	}
	rec, err := cb.Recall(ctx, memhost.RecallRequest{Query: "kettle descaled"})
	if err != nil || len(rec.Results.Notebook) == 0 || rec.Results.Notebook[0].Path != "knowledge/home.md" {
		t.Fatalf("recall of an imported page: %+v %v", rec, err)
	}
	turns, err := cb.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "quokka migration"})
	if err != nil || len(turns.Results) != 1 || turns.Results[0].Session != "planning" {
		t.Fatalf("conversation search of an imported transcript: %+v %v", turns, err)
	}
	// The home's own page stays.
	if data, err := os.ReadFile(filepath.Join(b, "notebook", "lists", "shopping.md")); err != nil || !strings.Contains(string(data), "oat milk") {
		t.Fatalf("the importing home's page: %q %v", data, err)
	}
	// Again: nothing new.
	imp, err = cb.Import(ctx, memhost.ImportRequest{Path: archive})
	if err != nil || len(imp.Added) != 0 || len(imp.Merged) != 0 || imp.Unchanged != imp.Files {
		t.Fatalf("import again: %+v %v", imp, err)
	}
	if _, err := cb.Import(ctx, memhost.ImportRequest{Path: "a.tar.gz"}); fault.KindOf(err) != fault.BadInput || fault.FieldOf(err) != "path" {
		t.Fatalf("import of a relative path: %v", err)
	}
	if _, err := cb.Import(ctx, memhost.ImportRequest{Path: filepath.Join(t.TempDir(), "none.tar.gz")}); fault.KindOf(err) != fault.NotFound || fault.FieldOf(err) != "path" {
		t.Fatalf("import of a missing file: %v", err)
	}
}

// bareRemote makes an empty bare repository (branch main) in a
// temporary folder.
func bareRemote(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git federation is tested with the git binary, which is not installed (make need-git installs it): %v", err)
	}
	dir := filepath.Join(t.TempDir(), "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", dir).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	return dir
}

// gitShow is a file of a commit of a (bare) repository.
func gitShow(t *testing.T, repo, spec string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", repo, "show", spec).CombinedOutput()
	if err != nil {
		t.Fatalf("git show %s: %v %s", spec, err, out)
	}
	return string(out)
}

// TestFederationThroughServer: git init and git sync through two homes'
// servers and a bare repository: what one remembers reaches the other,
// which indexes it. A push the remote refuses is an error that still
// reports what the sync did (the answer carries both).
func TestFederationThroughServer(t *testing.T) {
	ctx := context.Background()
	remote := bareRemote(t)
	a, b := t.TempDir(), t.TempDir()
	seedPages(t, a, map[string]string{"notebook/reference/contacts.md": "# Contacts\n\n## Sarah Chen\n- Phone: 555-1234\n"})
	ra, rb := start(t, a, "", ""), start(t, b, "", "")
	ca, cb := ra.client(t), rb.client(t)

	// Not a repository yet: the sync says so.
	if _, err := ca.FedSync(ctx, memhost.FedSyncRequest{}); fault.KindOf(err) != fault.BadInput || fault.FieldOf(err) != "federation" {
		t.Fatalf("sync before git init: %v", err)
	}
	in, err := ca.GitInit(ctx, memhost.GitInitRequest{Remote: remote})
	if err != nil {
		t.Fatal(err)
	}
	if !in.Created || in.Branch != "main" || in.Commit == "" || in.Remote != remote || in.SyncError != "" || in.Sync == nil || !in.Sync.Pushed {
		t.Fatalf("git init: %+v (sync %+v)", in, in.Sync)
	}
	if got := gitShow(t, remote, "main:notebook/reference/contacts.md"); !strings.Contains(got, "555-1234") {
		t.Fatalf("the remote after git init: %q", got)
	}
	if _, err := ca.GitInit(ctx, memhost.GitInitRequest{Branch: "no such branch"}); fault.KindOf(err) != fault.BadInput || fault.FieldOf(err) != "branch" {
		t.Fatalf("git init with a bad branch: %v", err)
	}

	// A remembers; its sync pushes it.
	if _, err := ca.Remember(ctx, memhost.RememberRequest{Text: "The quokka key is under the blue pot", Category: "knowledge", File: "home"}); err != nil {
		t.Fatal(err)
	}
	sa, err := ca.FedSync(ctx, memhost.FedSyncRequest{})
	if err != nil || !sa.Pushed || sa.Remote != remote || sa.Branch != "main" {
		t.Fatalf("sync of a: %+v %v", sa, err)
	}
	if got := gitShow(t, remote, "main:notebook/knowledge/home.md"); !strings.Contains(got, "blue pot") {
		t.Fatalf("the remote after a's sync: %q", got)
	}

	// B joins: its first sync merges a's pages in and indexes them.
	in, err = cb.GitInit(ctx, memhost.GitInitRequest{Remote: remote})
	if err != nil || in.SyncError != "" || in.Sync == nil || in.Sync.Merged == "" || in.Sync.Indexed == 0 {
		t.Fatalf("git init of b: %+v %v", in, err)
	}
	rec, err := cb.Recall(ctx, memhost.RecallRequest{Query: "quokka key"})
	if err != nil || len(rec.Results.Notebook) == 0 || rec.Results.Notebook[0].Path != "knowledge/home.md" {
		t.Fatalf("b's recall of a's page: %+v %v", rec, err)
	}

	// A sync tells b's event stream (open dashboards, MCP subscribers)
	// which pages it changed, by index path. b's serve loop may sync
	// before b's sync below does (it syncs at once when the home becomes
	// a repository): the stream is followed from before a's push, and
	// either sync's event will do.
	evctx, stopEvents := context.WithCancel(ctx)
	defer stopEvents()
	events := make(chan Event, 64)
	go cb.Events(evctx, func(ev Event) { events <- ev })
	for ev := range events {
		if ev.Type == "ready" {
			break
		}
	}
	if _, err := ca.Remember(ctx, memhost.RememberRequest{Text: "The wifi password is on the fridge", Category: "knowledge", File: "wifi"}); err != nil {
		t.Fatal(err)
	}
	if s, err := ca.FedSync(ctx, memhost.FedSyncRequest{}); err != nil || !s.Pushed {
		t.Fatalf("a's sync of the wifi page: %+v %v", s, err)
	}
	if got := gitShow(t, remote, "main:notebook/knowledge/wifi.md"); !strings.Contains(got, "fridge") {
		t.Fatalf("the remote after a's sync: %q", got)
	}
	if s, err := cb.FedSync(ctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatalf("b's sync: %+v %v", s, err)
	}
	// The git sync is told as a "git-sync" event, not as the watcher's
	// "sync" (TestEventsAndDebug waits for that one after an edit).
	deadline := time.After(30 * time.Second)
	for heard := false; !heard; {
		select {
		case ev := <-events:
			// The one of the sync that merged a's page names it.
			heard = ev.Type == "git-sync" && strings.Contains(string(ev.Data), `"knowledge/wifi.md"`)
		case <-deadline:
			t.Fatal("no git-sync event named knowledge/wifi.md")
		}
	}

	// The remote now refuses pushes: b's sync fails to push; the error
	// and the sync's report both reach the client.
	hook := filepath.Join(remote, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'pushes are closed' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Remember(ctx, memhost.RememberRequest{Text: "Bob fixed the sink", Category: "knowledge", File: "house"}); err != nil {
		t.Fatal(err)
	}
	if sa, err = ca.FedSync(ctx, memhost.FedSyncRequest{}); fault.KindOf(err) != fault.Unavailable || sa.Pushed || sa.PushError == "" {
		t.Fatalf("a's sync to a remote that refuses: %+v %v", sa, err)
	}
	if _, err := cb.Remember(ctx, memhost.RememberRequest{Text: "The plumber is Bob Smith", Category: "reference", File: "contacts"}); err != nil {
		t.Fatal(err)
	}
	sb, err := cb.FedSync(ctx, memhost.FedSyncRequest{})
	if fault.KindOf(err) != fault.Unavailable || fault.FieldOf(err) != "remote" || !strings.Contains(err.Error(), "push to "+remote+" failed") {
		t.Fatalf("b's sync to a remote that refuses: %v", err)
	}
	if sb.Remote != remote || sb.Branch != "main" || sb.Before == "" || sb.Pushed || sb.PushError == "" {
		t.Fatalf("b's sync report with the error: %+v", sb)
	}
}

// TestSocketOnlyRoutes: git init, export and import name files (or a
// remote) on the server's machine: over TCP they are refused (403, kind
// outside) and nothing is written; git sync is served.
func TestSocketOnlyRoutes(t *testing.T) {
	home := t.TempDir()
	r := start(t, home, "127.0.0.1:0", "")
	out := filepath.Join(t.TempDir(), "x.tar.gz")
	for _, tt := range []struct{ path, body string }{
		{"/api/v1/export", `{"path":"` + out + `"}`},
		{"/api/v1/import", `{"path":"` + out + `"}`},
		{"/api/v1/git/init", `{}`},
	} {
		code, body, _ := do(t, "POST", r.info.URL+tt.path, tt.body)
		if e := errorOf(t, body); code != 403 || e.Kind != fault.Outside || !strings.Contains(e.Message, "unix socket") {
			t.Errorf("%s over TCP: %d %s", tt.path, code, body)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("an export over TCP wrote the archive: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".git")); !os.IsNotExist(err) {
		t.Fatalf("git init over TCP made a repository: %v", err)
	}
	// git sync names no file: served (here: the home is no repository).
	code, body, _ := do(t, "POST", r.info.URL+"/api/v1/git/sync", `{}`)
	if e := errorOf(t, body); code != 400 || e.Field != "federation" {
		t.Fatalf("git sync over TCP: %d %s", code, body)
	}
	// The same export through the socket works.
	if _, err := r.client(t).Export(context.Background(), memhost.ExportRequest{Path: out}); err != nil {
		t.Fatal(err)
	}
}
