package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/federated"
	"github.com/memhost/memhost/host/health"
)

func gitOut(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return string(out)
}

func bareRemote(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", dir).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	return dir
}

// Every write through memhost is committed, with a message saying what
// changed; Close commits what is pending; nothing is left uncommitted.
func TestFederationCommitsEveryWrite(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	cfg := config.Default()
	cfg.Memory.Compaction.KeepRecentTokens = 0
	h, err := Open(ctx, Options{Home: home, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.GitInit(ctx, memhost.GitInitRequest{}); err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error {
			_, err := h.Remember(ctx, memhost.RememberRequest{Text: "Sarah Chen works at Acme", Category: "reference", File: "contacts", Section: "Sarah Chen"})
			return err
		},
		func() error {
			_, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "shipped the federation"})
			return err
		},
		func() error {
			_, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/go.md", Text: "# Go\n\nGenerics since 1.18.\n"})
			return err
		},
		func() error { _, err := h.Remove(ctx, memhost.RemoveRequest{Path: "knowledge/go.md"}); return err },
		func() error {
			_, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "hello there"})
			return err
		},
		func() error {
			_, err := h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "s1", Summary: "they said hello"})
			return err
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if st := gitOut(t, home, "status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Fatalf("left uncommitted:\n%s", st)
	}
	log := gitOut(t, home, "log", "--format=%B")
	for _, want := range []string{"remember: reference/contacts.md ## Sarah Chen", "daily-log: daily/", "write: knowledge/go.md",
		"rm: knowledge/go.md", "session/append: sessions/s1.jsonl turn ", "session/compact: s1"} {
		if !strings.Contains(log, want) {
			t.Errorf("no commit says %q:\n%s", want, log)
		}
	}
	if files := gitOut(t, home, "ls-files"); strings.Contains(files, "brain/") || strings.Contains(files, "config.yaml") {
		t.Fatalf("derived files committed:\n%s", files)
	}
}

// Pages the sync brings in are indexed: the other home's fact is found,
// and exactly the changed pages were re-indexed.
func TestFedSyncIndexesWhatChanged(t *testing.T) {
	ctx := context.Background()
	remote := bareRemote(t)
	a := openHost(t, t.TempDir(), nil)
	b := openHost(t, t.TempDir(), nil)
	writePage(t, a, "lists/todo.md", "# Todo\n- buy milk\n")
	if _, err := a.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil {
		t.Fatal(err)
	}
	r, err := b.GitInit(ctx, memhost.GitInitRequest{Remote: remote})
	if err != nil || r.SyncError != "" || r.Sync.Indexed != 1 {
		t.Fatalf("b's init: %+v %v", r, err)
	}
	rem, err := a.Remember(ctx, memhost.RememberRequest{Text: "Quokkas live on Rottnest Island", Category: "knowledge"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.FedSync(ctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatal(err)
	}
	// The merge is published as a change (MCP's subscribers, the
	// dashboard), and not committed again.
	var changes []memhost.Change
	stop := b.Subscribe(func(c memhost.Change) { changes = append(changes, c) })
	res, err := b.FedSync(ctx, memhost.FedSyncRequest{})
	stop()
	if err != nil {
		t.Fatal(err)
	}
	if res.Indexed != 1 || res.Merged != "fast-forward" {
		t.Fatalf("b's sync: %+v", res)
	}
	if len(changes) != 1 || changes[0].Op != "git/sync" || !slices.Equal(changes[0].Paths, []string{rem.Path}) {
		t.Fatalf("b's sync published %+v, want one git/sync change of %s", changes, rem.Path)
	}
	if err := b.impl.FlushCommits(ctx); err != nil {
		t.Fatal(err)
	}
	if log := gitOut(t, b.Home(), "log", "--format=%s", "-3"); strings.Contains(log, "git/sync") {
		t.Fatalf("the merge's change was committed again:\n%s", log)
	}
	if got := found(t, b, "quokkas"); len(got) == 0 {
		t.Fatal("b does not find a's fact after the sync")
	}
	if st := b.impl.FederationSummary(ctx); st == nil || st.State.LastSuccess == "" || st.Remote != remote {
		t.Fatalf("status %+v", st)
	}
}

// A merge that keeps both sides shows in status and health (a warning
// naming the sibling page), until the person removes the sibling.
func TestConflictsShowInStatusAndHealth(t *testing.T) {
	ctx := context.Background()
	remote := bareRemote(t)
	a := openHost(t, t.TempDir(), nil)
	b := openHost(t, t.TempDir(), nil)
	writePage(t, a, "reference/car.md", "# Car\n- colour: red\n")
	a.GitInit(ctx, memhost.GitInitRequest{Remote: remote})
	b.GitInit(ctx, memhost.GitInitRequest{Remote: remote})
	for _, x := range []struct {
		h *Host
		c string
	}{{a, "blue"}, {b, "green"}} {
		if _, err := x.h.Write(ctx, memhost.WriteRequest{Path: "reference/car.md", Text: "# Car\n- colour: " + x.c + "\n", Replace: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.FedSync(ctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatal(err)
	}
	res, err := b.FedSync(ctx, memhost.FedSyncRequest{})
	if err != nil || len(res.Conflicts) != 1 {
		t.Fatalf("b's sync: %+v %v", res, err)
	}
	sib := res.Conflicts[0].Sibling
	st, err := b.Status(ctx, memhost.StatusRequest{})
	if err != nil || st.Federation == nil || len(st.Federation.Conflicts) != 1 {
		t.Fatalf("status: %+v %v", st.Federation, err)
	}
	hr, err := b.Health(ctx, memhost.HealthRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var check *memhost.HealthCheck
	for i := range hr.Checks {
		if hr.Checks[i].Name == "federation" {
			check = &hr.Checks[i]
		}
	}
	if check == nil || check.Status != "warn" || !strings.Contains(check.Message, sib) || hr.Overall == health.Healthy {
		t.Fatalf("health: %+v overall %s", check, hr.Overall)
	}
	// Both versions are searchable on b.
	if len(found(t, b, "green")) == 0 || len(found(t, b, "blue")) == 0 {
		t.Fatal("one side of the conflict is not found")
	}
	if _, err := b.Remove(ctx, memhost.RemoveRequest{Path: strings.TrimPrefix(sib, "notebook/")}); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.Status(ctx, memhost.StatusRequest{}); len(st.Federation.Conflicts) != 0 {
		t.Fatalf("conflicts after removing the sibling: %+v", st.Federation.Conflicts)
	}
}

func TestGitInitBadInput(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	for _, req := range []memhost.GitInitRequest{{Branch: "a b"}, {Remote: "--upload-pack=x"}} {
		if _, err := h.GitInit(ctx, req); err == nil {
			t.Errorf("%+v accepted", req)
		}
	}
	if _, err := os.Stat(filepath.Join(h.Home(), ".git")); err == nil {
		t.Fatal("a refused init made a repository")
	}
	if _, err := h.FedSync(ctx, memhost.FedSyncRequest{}); err != federated.ErrNotFederated {
		t.Fatalf("sync of an unfederated home: %v", err)
	}
	out := filepath.Join(t.TempDir(), "elsewhere")
	h2 := openHost(t, t.TempDir(), func(c *config.Config) { c.Memory.NotebookDir = out })
	if _, err := h2.GitInit(ctx, memhost.GitInitRequest{}); err == nil || !strings.Contains(err.Error(), "outside the home") {
		t.Fatalf("notebook outside the home: %v", err)
	}
}

// BenchmarkRememberCommit: what committing adds to one remember made in
// a CLI process (remember, then the commit Close makes), against the same
// remember in a home that is not a git repository, in homes of n pages.
func BenchmarkRememberCommit(b *testing.B) {
	for _, pages := range []int{100, 10000} {
		for _, fed := range []bool{false, true} {
			b.Run(fmt.Sprintf("pages=%d/git=%v", pages, fed), func(b *testing.B) {
				ctx := context.Background()
				home := b.TempDir()
				copyNotebook(b, benchNotebook(b, pages), filepath.Join(home, "notebook"))
				h, err := Open(ctx, Options{Home: home, Config: config.Default()})
				if err != nil {
					b.Fatal(err)
				}
				defer h.Close()
				if fed {
					if _, err := h.GitInit(ctx, memhost.GitInitRequest{}); err != nil {
						b.Fatal(err)
					}
				}
				var before, after, selfBefore, selfAfter syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
				syscall.Getrusage(syscall.RUSAGE_SELF, &selfBefore)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := h.Remember(ctx, memhost.RememberRequest{Text: fmt.Sprintf("benchmark fact %d", i), Category: "knowledge"}); err != nil {
						b.Fatal(err)
					}
					if err := h.impl.FlushCommits(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				// CPU time, memhost's and its git processes': what a
				// remember costs on an idle machine, whatever the load on
				// this one.
				syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
				syscall.Getrusage(syscall.RUSAGE_SELF, &selfAfter)
				cpu := func(a, b syscall.Rusage) time.Duration {
					return time.Duration(b.Utime.Nano() + b.Stime.Nano() - a.Utime.Nano() - a.Stime.Nano())
				}
				b.ReportMetric(float64((cpu(before, after)/time.Duration(b.N)).Microseconds())/1000, "git-cpu-ms/op")
				b.ReportMetric(float64((cpu(selfBefore, selfAfter)/time.Duration(b.N)).Microseconds())/1000, "self-cpu-ms/op")
			})
		}
	}
}

// BenchmarkPullChanged: a home of n pages pulls 100 pages changed by a
// peer (fetch, fast-forward, re-index of the 100; keyword index).
func BenchmarkPullChanged(b *testing.B) {
	const pages, changed = 10000, 100
	ctx := context.Background()
	remote := bareRemote(b)
	homeA, homeB := b.TempDir(), b.TempDir()
	copyNotebook(b, benchNotebook(b, pages), filepath.Join(homeA, "notebook"))
	open := func(home string) *Host {
		h, err := Open(ctx, Options{Home: home, Config: config.Default()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { h.Close() })
		return h
	}
	a, hb := open(homeA), open(homeB)
	if _, err := a.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil {
		b.Fatal(err)
	}
	if r, err := hb.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil || r.SyncError != "" {
		b.Fatal(r.SyncError, err)
	}
	if _, err := hb.Sync(ctx, memhost.SyncRequest{}); err != nil {
		b.Fatal(err)
	}
	round := 0
	pull := func(b *testing.B) {
		var cpu time.Duration
		defer func() { b.ReportMetric(float64((cpu/time.Duration(b.N)).Microseconds())/1000, "cpu-ms/op") }()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			round++
			for p := 0; p < changed; p++ {
				n := (round*changed + p) % pages
				matches, _ := filepath.Glob(filepath.Join(homeA, "notebook", "*", fmt.Sprintf("%03d", n/1000), fmt.Sprintf("page-%05d.md", n)))
				if len(matches) != 1 {
					b.Fatalf("page %d: %v", n, matches)
				}
				f, err := os.OpenFile(matches[0], os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(f, "- pulledword%d%d\n", round, p)
				f.Close()
			}
			if _, err := a.FedSync(ctx, memhost.FedSyncRequest{}); err != nil {
				b.Fatal(err)
			}
			c0 := cpuNow()
			b.StartTimer()
			res, err := hb.FedSync(ctx, memhost.FedSyncRequest{})
			b.StopTimer()
			cpu += cpuNow() - c0
			if err != nil || res.Indexed != changed {
				b.Fatalf("pull: indexed %d of %d: %v", res.Indexed, changed, err)
			}
			q := fmt.Sprintf("pulledword%d%d", round, changed-1)
			if got, err := hb.Recall(ctx, memhost.RecallRequest{Query: q}); err != nil || len(got.Results.Notebook) != 1 {
				b.Fatalf("the pulled change is not found: %+v %v", got.Results, err)
			}
			b.StartTimer()
		}
	}
	// A one-shot `memhost sync --remote` first looks at every page for
	// edits made while no memhost ran (a stat each).
	b.Run("one-shot", pull)
	// Under `memhost serve` the watcher names the edited pages instead.
	// Its own sync loop is held off for the benchmark (its first sync
	// runs at once, with nothing to pull).
	hb.editConfig(func(c *config.Config) { c.Federation.PushIntervalSec = 3600 })
	wctx, stop := context.WithCancel(ctx)
	watched := make(chan error, 1)
	go func() { watched <- hb.Watch(wctx, WatchRequest{}) }()
	defer func() { stop(); <-watched }()
	time.Sleep(time.Second)
	b.Run("serve", pull)
}

// cpuNow is the CPU time used so far by this process and the children
// it waited for (git): what an operation costs on an idle machine,
// whatever the load on this one.
func cpuNow() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
}

// copyNotebook copies a generated notebook into a home.
func copyNotebook(b testing.TB, from, to string) {
	b.Helper()
	if out, err := exec.Command("cp", "-r", from, to).CombinedOutput(); err != nil {
		b.Fatal(err, string(out))
	}
}

// TestGitInitByAnotherProcess: a home that becomes a memhost repository
// while a Host is open on it (memhost git init run in its own process
// beside a server, one a command started on demand) is federated for that
// Host from its next write and sync: they commit and push, not "the home
// is not a git repository".
func TestGitInitByAnotherProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	getenv := func(string) string { return "" }
	server, err := Open(ctx, Options{Home: home, Config: config.Default(), Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	remote := bareRemote(t)
	cli := openHost(t, home, nil)
	if _, err := cli.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil {
		t.Fatal(err)
	}
	cli.Close()
	server.RecheckConfig()
	if _, err := server.Remember(ctx, memhost.RememberRequest{Text: "Sarah Chen - Mobile: 555-1234", Category: "reference", File: "contacts"}); err != nil {
		t.Fatal(err)
	}
	if err := server.impl.FlushCommits(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := server.FedSync(ctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatalf("sync on the Host open before git init: %v", err)
	}
	if log := gitOut(t, remote, "log", "--format=%s", "main"); !strings.Contains(log, "remember: reference/contacts.md") {
		t.Errorf("the remote's history:\n%s", log)
	}
}
