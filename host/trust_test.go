package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
)

// guard runs f and fails the test if it does not return within a generous
// time: the calls it guards must never block on what the file system
// holds (a FIFO).
func guard[T any](t *testing.T, what string, f func() (T, error)) (T, error) {
	t.Helper()
	type res struct {
		v   T
		err error
	}
	ch := make(chan res, 1)
	go func() { v, err := f(); ch <- res{v, err} }()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s hangs", what)
		var zero T
		return zero, nil
	}
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFIFOPages: every operation on a page that is a FIFO answers at once
// with a bad-input error naming it, holds no lock afterwards (a normal
// write right after succeeds), and a sync with a FIFO page and a FIFO
// transcript completes and reports both.
func TestFIFOPages(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	ctx := context.Background()
	today := "daily/" + h.Now().Format(time.DateOnly) + ".md"
	for _, rel := range []string{today, "reference/contacts.md", "lists/fifo.md"} {
		mkfifo(t, filepath.Join(h.NotebookDir(), rel))
	}
	mkfifo(t, filepath.Join(h.home, "sessions", "fifo.jsonl"))

	type op struct {
		name string
		page string
		f    func() (any, error)
	}
	ops := []op{
		{"remember", "reference/contacts.md", func() (any, error) {
			return h.Remember(ctx, memhost.RememberRequest{Text: "Sarah's phone is 555", Category: "reference", File: "contacts"})
		}},
		{"write", "lists/fifo.md", func() (any, error) { return h.Write(ctx, memhost.WriteRequest{Path: "lists/fifo.md", Text: "milk"}) }},
		{"daily-log", today, func() (any, error) { return h.DailyLog(ctx, memhost.DailyLogRequest{Text: "standup"}) }},
		{"get", "lists/fifo.md", func() (any, error) { return h.Get(ctx, memhost.GetRequest{Path: "lists/fifo.md"}) }},
		{"rm", "lists/fifo.md", func() (any, error) { return h.Remove(ctx, memhost.RemoveRequest{Path: "lists/fifo.md"}) }},
	}
	for i, o := range ops {
		_, err := guard(t, o.name, o.f)
		if err == nil {
			t.Fatalf("%s on a FIFO page: no error", o.name)
		}
		if got := fault.KindOf(err); got != fault.BadInput {
			t.Errorf("%s: kind %s, want %s (%v)", o.name, got, fault.BadInput, err)
		}
		if want := "not a regular file (a FIFO): " + o.page; !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not say %q", o.name, err, want)
		}
		page := "lists/after-" + o.name + ".md"
		if _, err := guard(t, "a write after "+o.name, func() (memhost.WriteResponse, error) {
			return h.Write(ctx, memhost.WriteRequest{Path: page, Text: "written " + string(rune('a'+i))})
		}); err != nil {
			t.Fatalf("write after %s: %v", o.name, err)
		}
	}

	res, err := guard(t, "sync", func() (memhost.SyncResult, error) { return h.Sync(ctx, memhost.SyncRequest{}) })
	if err != nil {
		t.Fatal(err)
	}
	problems := map[string]string{}
	for _, p := range res.Problems {
		problems[p.Path] = p.Problem
	}
	for _, p := range []string{today, "lists/fifo.md", "sessions/fifo.jsonl"} {
		if !strings.Contains(problems[p], "not a regular file (a FIFO)") {
			t.Errorf("sync: problem for %s is %q (all: %v)", p, problems[p], problems)
		}
	}
	if _, err := guard(t, "rebuild", func() (memhost.SyncResult, error) { return h.Rebuild(ctx, memhost.RebuildRequest{}) }); err != nil {
		t.Fatal(err)
	}
	files, err := guard(t, "files", func() (memhost.FilesResponse, error) { return h.Files(ctx, memhost.FilesRequest{}) })
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files.Files {
		if f.Path == "lists/fifo.md" && f.State != "unindexable" {
			t.Errorf("files: %s is %s", f.Path, f.State)
		}
	}
	if _, err := guard(t, "sessions list", func() (memhost.SessionsResponse, error) { return h.Sessions(ctx, memhost.SessionsRequest{}) }); err != nil {
		t.Errorf("sessions list: %v", err)
	}
	if _, err := guard(t, "page", func() (memhost.PageResponse, error) { return h.Page(ctx, memhost.PageRequest{Path: "lists/fifo.md"}) }); fault.KindOf(err) != fault.BadInput {
		t.Errorf("dashboard page of a FIFO: %v, want a bad-input error", err)
	}
	if _, err := guard(t, "transcript", func() (memhost.TranscriptResponse, error) {
		return h.Transcript(ctx, memhost.TranscriptRequest{Session: "fifo"})
	}); fault.KindOf(err) != fault.BadInput {
		t.Errorf("transcript of a FIFO: %v, want a bad-input error", err)
	}
	if _, err := guard(t, "health", func() (memhost.HealthResponse, error) { return h.Health(ctx, memhost.HealthRequest{}) }); err != nil {
		t.Errorf("health: %v", err)
	}
	if got := found(t, h, "written"); len(got) == 0 {
		t.Error("the writes after the FIFO attempts are not found")
	}
}

// TestSymlinkLoopPageIsBadInput: get, write and rm of a page that is a
// symlink loop are bad input (400), not internal errors.
func TestSymlinkLoopPageIsBadInput(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	ctx := context.Background()
	nb := h.NotebookDir()
	for _, l := range [][2]string{{"a.md", "a.md"}, {"b.md", "c.md"}, {"c.md", "b.md"}} {
		if err := os.Symlink(l[1], filepath.Join(nb, l[0])); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"a.md", "b.md"} {
		_, gerr := h.Get(ctx, memhost.GetRequest{Path: p})
		_, werr := h.Write(ctx, memhost.WriteRequest{Path: p, Text: "x"})
		for name, err := range map[string]error{"get": gerr, "write": werr} {
			if got := fault.KindOf(err); err == nil || got != fault.BadInput {
				t.Errorf("%s %s: %v (kind %s), want a bad-input error", name, p, err, got)
			}
		}
	}
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatalf("sync with symlink loops: %v", err)
	}
}

// TestNamesGetRefusesAreNotIndexed: a page whose name get would refuse (a
// line break or another control character, a name starting or ending with
// a space) is reported by sync and never returned by recall, so that
// recall never names a page get cannot read.
func TestNamesGetRefusesAreNotIndexed(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	ctx := context.Background()
	bad := []string{"notes/a\nb.md", "notes/tab\there.md", "line\nbreak/page.md", "notes/ trailing.md"}
	for _, rel := range bad {
		writePage(t, h, rel, "# Quokka\n\nquokka facts\n")
	}
	writePage(t, h, "notes/good.md", "# Quokka\n\nquokka facts too\n")
	res, err := h.Sync(ctx, memhost.SyncRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var reported []string
	for _, p := range res.Problems {
		reported = append(reported, p.Path)
	}
	for _, rel := range bad {
		if !slices.Contains(reported, rel) {
			t.Errorf("sync did not report %q (reported %q)", rel, reported)
		}
	}
	got := found(t, h, "quokka")
	if !slices.Equal(got, []string{"notes/good.md"}) {
		t.Errorf("recall found %q, want only notes/good.md", got)
	}
	for _, p := range got {
		if _, err := h.Get(ctx, memhost.GetRequest{Path: p}); err != nil {
			t.Errorf("recall returned %q, which get refuses: %v", p, err)
		}
	}
	// Written through the watcher's path (a sync of named pages) too.
	if err := h.indexer.SyncPaths(ctx, bad...); err != nil {
		t.Fatal(err)
	}
	if got := found(t, h, "quokka"); !slices.Equal(got, []string{"notes/good.md"}) {
		t.Errorf("after SyncPaths recall found %q", got)
	}
}
