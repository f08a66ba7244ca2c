// Federation bugs found while testing three servers
// (TestThreeFederatedServersConverge), each held here.

package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/federation"
)

// TestLoopReportsIndexPaths: the serve loop (FederationService.RunLoop) tells
// OnSync the files a merge changed as index paths ("knowledge/x.md"), as
// every other SyncResult does; it used to pass federation's home-relative
// paths ("notebook/knowledge/x.md"), so serve's "sync" event named pages
// that do not exist and MCP subscribers were sent
// memhost://notebook/notebook/knowledge/x.md.
func TestLoopReportsIndexPaths(t *testing.T) {
	ctx := context.Background()
	remote := bareRemote(t)
	open := func(home string) *Host {
		cfg := config.Default()
		cfg.Federation.PushIntervalSec = 1
		h, err := Open(ctx, Options{Home: home, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		if _, err := h.Init(ctx, memhost.InitRequest{}); err != nil {
			t.Fatal(err)
		}
		if r, err := h.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil || r.SyncError != "" {
			t.Fatalf("git init: %v %s", err, r.SyncError)
		}
		return h
	}
	a, b := open(t.TempDir()), open(t.TempDir())
	if _, err := b.Remember(ctx, memhost.RememberRequest{Text: "quokkas live on Rottnest", Category: "knowledge", File: "animals"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.FedSync(ctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatal(err)
	}
	got := make(chan memhost.SyncResult, 1)
	lctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.impl.RunLoop(lctx, func(r memhost.SyncResult) {
			select {
			case got <- r:
			default:
			}
		})
	}()
	var r memhost.SyncResult
	select {
	case r = <-got:
	case <-lctx.Done():
		t.Fatal("the loop never reported a sync")
	}
	cancel()
	<-done
	if !slices.Contains(r.Paths, "knowledge/animals.md") {
		t.Errorf("the loop reported %q; want the index path knowledge/animals.md", r.Paths)
	}
	for _, p := range r.Paths {
		if strings.HasPrefix(p, "notebook/") {
			t.Errorf("the loop reported the home path %q", p)
		}
	}
}

// TestCommitDuringApplyMergesAgain: a commit that lands after Sync made
// its merge commit and before it updates the work tree (memhost's
// committer commits a remember there) leaves the merge commit's first
// parent behind HEAD. Sync merges again, as for a local change; it used to
// fail the whole sync with "Not possible to fast-forward" (seen under load
// in TestThreeFederatedServersConverge).
func TestCommitDuringApplyMergesAgain(t *testing.T) {
	ctx := context.Background()
	remote := bareRemote(t)
	home := func(name string, files map[string]string) *federation.Repo {
		dir := filepath.Join(t.TempDir(), name)
		for rel, text := range files {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := &federation.Repo{Dir: dir, Author: name + " <" + name + "@test>"}
		if _, err := r.Init(ctx, federation.InitOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Sync(ctx, federation.SyncOptions{Remote: remote}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := home("a", map[string]string{"notebook/knowledge/a.md": "# A\n"})
	b := home("b", nil)
	// Both sides change something: a's next sync makes a merge commit.
	os.WriteFile(filepath.Join(b.Dir, "notebook", "knowledge", "b.md"), []byte("# B\n"), 0o644)
	if _, err := b.CommitAll(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Sync(ctx, federation.SyncOptions{Remote: remote}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(a.Dir, "notebook", "knowledge", "a2.md"), []byte("# A2\n"), 0o644)
	if _, err := a.CommitAll(ctx, "a2"); err != nil {
		t.Fatal(err)
	}
	// The committer's commit of a remember, just as apply begins.
	committed := false
	lock := func(ctx context.Context) (func(), error) {
		if !committed {
			committed = true
			os.WriteFile(filepath.Join(a.Dir, "notebook", "knowledge", "remembered.md"), []byte("# Remembered\n"), 0o644)
			if _, err := a.Commit(ctx, "remember: knowledge/remembered.md", "notebook/knowledge/remembered.md"); err != nil {
				return nil, err
			}
		}
		return func() {}, nil
	}
	res, err := a.Sync(ctx, federation.SyncOptions{Remote: remote, Lock: lock})
	if err != nil {
		t.Fatalf("a sync with a commit landing before the work tree's update failed: %v (%+v)", err, res)
	}
	for _, f := range []string{"a.md", "a2.md", "b.md", "remembered.md"} {
		if _, err := os.Stat(filepath.Join(a.Dir, "notebook", "knowledge", f)); err != nil {
			t.Errorf("after the sync: %v", err)
		}
	}
}

// TestStatusMasksRemotePassword: a token in the remote URL shows in
// none of status, health or the recorded error.
func TestStatusMasksRemotePassword(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	remote := "https://me:s3cr3tTOKEN@127.0.0.1:1/memory.git"
	if _, err := h.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil {
		t.Fatal(err)
	}
	st, err := h.Status(ctx, memhost.StatusRequest{})
	if err != nil || st.Federation == nil {
		t.Fatalf("status: %+v %v", st.Federation, err)
	}
	hr, err := h.Health(ctx, memhost.HealthRequest{})
	if err != nil {
		t.Fatal(err)
	}
	shown := fmt.Sprintf("%+v %+v", st.Federation, hr.Checks)
	if strings.Contains(shown, "s3cr3tTOKEN") {
		t.Fatalf("the token is shown: %s", shown)
	}
	if st.Federation.State.Failures == 0 || !strings.Contains(st.Federation.Remote, "127.0.0.1") {
		t.Fatalf("the failed sync is not reported: %+v", st.Federation)
	}
}
