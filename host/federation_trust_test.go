package host

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/federation"
)

// federationHealth is the federation check of a health report.
func federationHealth(t *testing.T, h *Host) memhost.HealthCheck {
	t.Helper()
	hr, err := h.Health(context.Background(), memhost.HealthRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range hr.Checks {
		if c.Name == "federation" {
			return c
		}
	}
	t.Fatal("no federation check")
	return memhost.HealthCheck{}
}

// pushFromClone commits what change does in a clone of remote with plain
// git (an executable bit included) and pushes it: another machine, or
// anyone with push access.
func pushFromClone(t *testing.T, remote string, change func(dir string)) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	gitRun := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=mallory", "-c", "user.email=m@evil"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if out, err := exec.Command("git", "clone", "-q", remote, dir).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v %s", err, out)
	}
	change(dir)
	gitRun("add", "-A", "-f")
	gitRun("commit", "-qm", "helpful plugin")
	gitRun("push", "-q", "origin", "HEAD:main")
}

// TestFedSyncRefusesPlantedPlugin: a plugin binary pushed to the remote
// (where the home would run it on the next recall) never lands in
// plugins/, never shows in the plugin list and never runs; the sync fails
// naming it, health fails, and the home's own writes go on being
// committed.
func TestFedSyncRefusesPlantedPlugin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := bareRemote(t)
	home := t.TempDir()
	a := openHost(t, home, nil)
	writePage(t, a, "reference/car.md", "# Car\n- colour: red\n")
	if r, err := a.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil || r.SyncError != "" {
		t.Fatalf("init: %+v %v", r, err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	pushFromClone(t, remote, func(dir string) {
		p := filepath.Join(dir, "plugins", "memhost-embeddings-local")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho ran > "+marker+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		// and a page, which comes in once the plugin is gone
		os.WriteFile(filepath.Join(dir, "notebook", "knowledge", "quokka.md"), []byte("# Quokka\nQuokkas live on Rottnest Island.\n"), 0o644)
	})
	_, err := a.FedSync(ctx, memhost.FedSyncRequest{})
	if !errors.Is(err, federation.ErrRefused) || !strings.Contains(err.Error(), "adds plugins/memhost-embeddings-local (outside the shared folders notebook/ and sessions/): refused") {
		t.Fatalf("sync: %v, want the plugin refused", err)
	}
	if _, err := os.Lstat(filepath.Join(home, "plugins", "memhost-embeddings-local")); !os.IsNotExist(err) {
		t.Fatalf("the plugin is in plugins/: %v", err)
	}
	pl, _ := a.Plugins(ctx, memhost.PluginsRequest{})
	for _, p := range append(pl.Plugins, pl.Generators...) {
		if p.Name == "local" || strings.HasPrefix(p.Path, home) {
			t.Fatalf("plugins list shows %+v", p)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the planted plugin ran")
	}
	c := federationHealth(t, a)
	if c.Status != "fail" || !strings.Contains(c.Message, "plugins/memhost-embeddings-local") {
		t.Fatalf("health: %+v, want a failure naming the plugin", c)
	}
	if len(found(t, a, "quokkas")) != 0 {
		t.Fatal("a page of the refused commit is indexed")
	}
	// The home's own writes are committed meanwhile.
	if _, err := a.Remember(ctx, memhost.RememberRequest{Text: "Sarah Chen works at Acme", Category: "reference", File: "contacts"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.FedSync(ctx, memhost.FedSyncRequest{}); !errors.Is(err, federation.ErrRefused) {
		t.Fatalf("second sync: %v", err)
	}
	if log := gitOut(t, home, "log", "--format=%s"); !strings.Contains(log, "remember: reference/contacts.md") {
		t.Fatalf("the local write was not committed:\n%s", log)
	}
}

// TestRemoteDeletingEditedPage: a page the other side deletes while it is
// edited here stays, edited, found by recall; status and health show the
// conflict until the page is changed again. A page the other side turns
// into a folder keeps this side's version in a sibling page, indexed.
func TestRemoteDeletingEditedPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := bareRemote(t)
	a := openHost(t, t.TempDir(), nil)
	b := openHost(t, t.TempDir(), nil)
	writePage(t, a, "reference/car.md", "# Car\n- colour: red\n")
	writePage(t, a, "reference/bike.md", "# Bike\n- gears: 3\n")
	a.GitInit(ctx, memhost.GitInitRequest{Remote: remote})
	if r, err := b.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil || r.SyncError != "" {
		t.Fatalf("b's init: %+v %v", r, err)
	}
	if _, err := b.Remove(ctx, memhost.RemoveRequest{Path: "reference/car.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Remove(ctx, memhost.RemoveRequest{Path: "reference/bike.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Write(ctx, memhost.WriteRequest{Path: "reference/bike.md/parts.md", Text: "# Parts\n- chain\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.FedSync(ctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write(ctx, memhost.WriteRequest{Path: "reference/car.md", Text: "# Car\n- colour: red\n- marmalade seats\n", Replace: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write(ctx, memhost.WriteRequest{Path: "reference/bike.md", Text: "# Bike\n- gears: 3\n- zeppelin bell\n", Replace: true}); err != nil {
		t.Fatal(err)
	}
	res, err := a.FedSync(ctx, memhost.FedSyncRequest{})
	if err != nil || len(res.Conflicts) != 2 {
		t.Fatalf("a's sync: %+v %v", res, err)
	}
	if got := found(t, a, "marmalade"); len(got) == 0 || got[0] != "reference/car.md" {
		t.Fatalf("recall of the edit kept over the deletion: %v", got)
	}
	if got := found(t, a, "zeppelin"); len(got) == 0 || !strings.Contains(got[0], "bike.conflict-") {
		t.Fatalf("recall of the page kept beside the folder: %v", got)
	}
	st, err := a.Status(ctx, memhost.StatusRequest{})
	if err != nil || st.Federation == nil || len(st.Federation.Conflicts) != 2 {
		t.Fatalf("status: %+v %v", st.Federation, err)
	}
	c := federationHealth(t, a)
	if c.Status != "warn" || !strings.Contains(c.Message, "notebook/reference/car.md was deleted on the other side") || !strings.Contains(c.Message, "bike.conflict-") {
		t.Fatalf("health: %+v", c)
	}
	if _, err := a.Remember(ctx, memhost.RememberRequest{Text: "the car stays", Category: "reference", File: "car"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := a.Status(ctx, memhost.StatusRequest{}); len(st.Federation.Conflicts) != 1 {
		t.Fatalf("conflicts after changing the kept page: %+v", st.Federation.Conflicts)
	}
}

// TestFedSyncRemoteGitignoreHidesNothing: a remote that adds notebook/
// and sessions/ to the shared .gitignore does not stop this home's new
// pages and transcripts (committed by its writes) from reaching it.
func TestFedSyncRemoteGitignoreHidesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := bareRemote(t)
	a := openHost(t, t.TempDir(), nil)
	writePage(t, a, "reference/car.md", "# Car\n- colour: red\n")
	if r, err := a.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil || r.SyncError != "" {
		t.Fatalf("init: %+v %v", r, err)
	}
	pushFromClone(t, remote, func(dir string) {
		f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("notebook/\nsessions/\n")
		f.Close()
	})
	if _, err := a.FedSync(ctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Remember(ctx, memhost.RememberRequest{Text: "Quokkas live on Rottnest Island", Category: "knowledge", File: "quokka"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s2", Role: "user", Text: "a turn after the .gitignore change"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.FedSync(ctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, remote, "show", "main:notebook/knowledge/quokka.md"); !strings.Contains(got, "Rottnest") {
		t.Fatalf("the remote's quokka.md: %q", got)
	}
	if got := gitOut(t, remote, "show", "main:sessions/s2.jsonl"); !strings.Contains(got, "after the .gitignore change") {
		t.Fatalf("the remote's s2.jsonl: %q", got)
	}
}

// TestFedSyncFIFOPage: a FIFO where a page was, which the remote
// changes: the sync answers a 409 naming the page as not a regular file
// (not "files changed during the merge" after five tries), health says
// so, and once the page is a file again the sync goes on.
func TestFedSyncFIFOPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := bareRemote(t)
	home := t.TempDir()
	a := openHost(t, home, nil)
	writePage(t, a, "reference/car.md", "# Car\n- colour: red\n")
	if r, err := a.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil || r.SyncError != "" {
		t.Fatalf("init: %+v %v", r, err)
	}
	pushFromClone(t, remote, func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "notebook", "reference", "car.md"), []byte("# Car\n- colour: red\n- doors: 4\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	page := filepath.Join(a.notebook.Root(), "reference", "car.md")
	if err := os.Remove(page); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(page, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := a.FedSync(ctx, memhost.FedSyncRequest{})
	if fault.KindOf(err) != fault.Conflict || !strings.Contains(err.Error(), "notebook/reference/car.md is not a regular file (a FIFO)") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("sync: %v (kind %s), want one line: the page is not a regular file", err, fault.KindOf(err))
	}
	if c := federationHealth(t, a); c.Status != "warn" || !strings.Contains(c.Message, "notebook/reference/car.md is not a regular file (a FIFO)") {
		t.Fatalf("health: %+v", c)
	}
	if err := os.Remove(page); err != nil {
		t.Fatal(err)
	}
	if _, err := a.FedSync(ctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, remote, "show", "main:notebook/reference/car.md"); !strings.Contains(got, "doors: 4") {
		t.Fatalf("the remote's car.md: %q", got)
	}
}
