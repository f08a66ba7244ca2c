package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
)

// TestSavePage: a save is conditional on the page's hash; a page changed,
// created or deleted since it was read is a conflict and stays as it is.
func TestSavePage(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	ctx := context.Background()
	var writes []string
	h.Subscribe(func(c memhost.Change) { writes = append(writes, c.Op) })

	created, err := h.SavePage(ctx, memhost.SavePageRequest{Path: "lists/reading.md", Text: "# Reading\r\n- Dune", BaseHash: ""})
	if err != nil || !created.Created || created.Path != "lists/reading.md" {
		t.Fatalf("create: %+v %v", created, err)
	}
	if got := readPage(t, h, "lists/reading.md"); got != "# Reading\n- Dune\n" {
		t.Fatalf("created %q", got)
	}
	if _, err := h.SavePage(ctx, memhost.SavePageRequest{Path: "lists/reading.md", Text: "# Other", BaseHash: ""}); fault.KindOf(err) != fault.Conflict || fault.FieldOf(err) != "baseHash" {
		t.Errorf("creating an existing page: %v", err)
	}
	p, err := h.Page(ctx, memhost.PageRequest{Path: "lists/reading.md"})
	if err != nil || p.Hash != created.Hash || p.Text != "# Reading\n- Dune\n" || p.SizeBytes != 17 || p.Mtime == "" {
		t.Fatalf("page %+v %v (saved hash %s)", p, err, created.Hash)
	}
	saved, err := h.SavePage(ctx, memhost.SavePageRequest{Path: "lists/reading.md", Text: "# Reading\n- Dune\n- Emma", BaseHash: p.Hash})
	if err != nil || saved.Created {
		t.Fatalf("save: %+v %v", saved, err)
	}
	// Edited behind the editor's back: the stale base conflicts.
	writePage(t, h, "lists/reading.md", "# Reading\n- Theirs\n")
	_, err = h.SavePage(ctx, memhost.SavePageRequest{Path: "lists/reading.md", Text: "# Mine", BaseHash: saved.Hash})
	if fault.KindOf(err) != fault.Conflict || !strings.Contains(err.Error(), "changed on disk since it was opened") {
		t.Errorf("stale save: %v", err)
	}
	if got := readPage(t, h, "lists/reading.md"); got != "# Reading\n- Theirs\n" {
		t.Errorf("a conflicting save changed the page: %q", got)
	}
	os.Remove(filepath.Join(h.NotebookDir(), "lists/reading.md"))
	if _, err := h.SavePage(ctx, memhost.SavePageRequest{Path: "lists/reading.md", Text: "# Mine", BaseHash: saved.Hash}); fault.KindOf(err) != fault.Conflict || !strings.Contains(err.Error(), "deleted") {
		t.Errorf("saving a deleted page: %v", err)
	}
	for _, bad := range []memhost.SavePageRequest{
		{Path: "../outside.md", Text: "x"},
		{Path: "/etc/passwd.md", Text: "x"},
		{Path: "lists/notes.txt", Text: "x"},
		{Path: "lists/empty.md", Text: "  \n"},
	} {
		if _, err := h.SavePage(ctx, bad); err == nil || fault.KindOf(err) == fault.Internal {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.NotebookDir()), "outside.md")); err == nil {
		t.Error("a save wrote outside the notebook")
	}
	if strings.Join(writes, ",") != "page/save,page/save" {
		t.Errorf("writes published: %q", writes)
	}
	// The index has the saved text.
	writePage(t, h, "lists/reading.md", "# Reading\n")
	p, _ = h.Page(ctx, memhost.PageRequest{Path: "lists/reading.md"})
	if _, err := h.SavePage(ctx, memhost.SavePageRequest{Path: "lists/reading.md", Text: "# Reading\n- Quixotic zebra", BaseHash: p.Hash}); err != nil {
		t.Fatal(err)
	}
	r, err := h.Recall(ctx, memhost.RecallRequest{Query: "quixotic zebra"})
	if err != nil || len(r.Results.Notebook) != 1 {
		t.Errorf("recall after a save: %+v %v", r.Results, err)
	}
}

// TestSavePageRace: of two saves on the same base, one wins and the other
// conflicts; never both.
func TestSavePageRace(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	ctx := context.Background()
	writePage(t, h, "knowledge/facts.md", "# Facts\n")
	p, _ := h.Page(ctx, memhost.PageRequest{Path: "knowledge/facts.md"})
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = h.SavePage(ctx, memhost.SavePageRequest{Path: "knowledge/facts.md", Text: "# Facts\n- writer " + string(rune('a'+i)), BaseHash: p.Hash})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case fault.KindOf(err) != fault.Conflict:
			t.Errorf("a racing save: %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d saves on one base succeeded, want 1", ok)
	}
}

func TestPagesTranscriptStorage(t *testing.T) {
	t.Parallel()
	h := newHost(t)
	ctx := context.Background()
	writePage(t, h, "reference/contacts.md", "# Contacts\n")
	writePage(t, h, "projects/garden/plan.md", "# Plan\n")
	writePage(t, h, "top.md", "# Top\n")
	writePage(t, h, ".hidden/x.md", "# x\n")
	writePage(t, h, "daily/2026-11-20.md", "# Day\n")
	writePage(t, h, "lists/notes.txt", "not a page\n")
	resp, err := h.Pages(ctx, memhost.PagesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range resp.Folders {
		var names []string
		for _, p := range f.Pages {
			names = append(names, p.Path)
		}
		got = append(got, f.Path+"="+strings.Join(names, "+"))
	}
	want := "lists=,reference=reference/contacts.md,knowledge=,daily=daily/2026-11-20.md,=top.md,projects=,projects/garden=projects/garden/plan.md"
	if strings.Join(got, ",") != want {
		t.Errorf("folders\n got %s\nwant %s", strings.Join(got, ","), want)
	}

	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	tr, err := h.Transcript(ctx, memhost.TranscriptRequest{Session: "s1"})
	if err != nil || len(tr.Turns) != 1 || tr.Turns[0].Content != "hello" || tr.Path != "sessions/s1.jsonl" {
		t.Errorf("transcript %+v %v", tr, err)
	}
	if _, err := h.Transcript(ctx, memhost.TranscriptRequest{Session: "nope"}); fault.KindOf(err) != fault.NotFound {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := h.Transcript(ctx, memhost.TranscriptRequest{Session: "../etc"}); fault.KindOf(err) != fault.BadInput {
		t.Errorf("bad session id: %v", err)
	}

	st, err := h.Storage(ctx, memhost.StorageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Daily.Files != 1 || st.Notebook.Files != 5 || st.Sessions.Files != 1 || st.Index.Bytes == 0 {
		t.Errorf("storage %+v", st)
	}
}
