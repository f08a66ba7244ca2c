package host

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
)

// notebookFiles returns every file under the notebook with its content, to
// show that a refused request left the disk as it was.
func notebookFiles(t *testing.T, h *Host) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(h.NotebookDir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		b := []byte(nil)
		if !d.IsDir() {
			if b, err = os.ReadFile(p); err != nil {
				return err
			}
		}
		files[p] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestBadPagePathsAreRefused: a page path that cannot name an indexed page
// (control characters, a folder, a hidden name) is refused with a one-line
// bad-input error naming the input, and nothing on disk changes.
func TestBadPagePathsAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	writePage(t, h, "knowledge/facts.md", "# Facts\n")
	bad := []string{
		"notes/evil\n## Injected.md",
		"tab\there.md",
		"bell\a.md",
		"knowledge/",
		"knowledge",
		"new-folder/",
		".hidden/x.md",
		"notes/.drafts/y.md",
		".secret.md",
	}
	before := notebookFiles(t, h)
	for _, p := range bad {
		calls := map[string]func() error{
			"write": func() error { _, err := h.Write(ctx, memhost.WriteRequest{Path: p, Text: "x"}); return err },
			"get":   func() error { _, err := h.Get(ctx, memhost.GetRequest{Path: p}); return err },
			"rm":    func() error { _, err := h.Remove(ctx, memhost.RemoveRequest{Path: p}); return err },
		}
		for name, call := range calls {
			err := call()
			if got := fault.KindOf(err); got != fault.BadInput {
				t.Fatalf("%s %q: kind %q (%v), want %q", name, p, got, err, fault.BadInput)
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r\t\a") || !strings.Contains(msg, shownPath(p)) {
				t.Fatalf("%s %q: error %q, want one line naming %s", name, p, msg, shownPath(p))
			}
		}
	}
	for _, file := range []string{"evil\nname", ".secret", "tab\tname"} {
		_, err := h.Remember(ctx, memhost.RememberRequest{Text: "x", File: file})
		if fault.KindOf(err) != fault.BadInput || fault.FieldOf(err) != "file" || strings.ContainsAny(err.Error(), "\n\t") {
			t.Fatalf("remember --file %q: %v (kind %q, field %q), want a one-line bad-input error about file", file, err, fault.KindOf(err), fault.FieldOf(err))
		}
	}
	if after := notebookFiles(t, h); !reflect.DeepEqual(after, before) {
		t.Fatalf("refused requests changed the notebook:\nbefore %v\nafter  %v", before, after)
	}
}

// shownPath is a path as an error shows it: quoted when it holds a
// character that is not printed as itself.
func shownPath(p string) string {
	if strconv.Quote(p) != `"`+p+`"` {
		return strconv.Quote(p)
	}
	return p
}

// TestBadSectionsAreRefused: a section name is one heading line. One with a
// line break would add headings of its own, and one that is empty once its
// #s are dropped would make a section edit an edit of the whole page.
func TestBadSectionsAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	writePage(t, h, "knowledge/facts.md", "# Facts\n\n## Process\n- ship on Fridays\n")
	bad := []string{"Evil\n## Injected", "Evil\r\n## Injected", "tab\there", "bell\a", "##", " # ", "Evil\u2028Injected"}
	before := notebookFiles(t, h)
	for _, section := range bad {
		calls := map[string]func() error{
			"write": func() error {
				_, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/facts.md", Section: section, Text: "x"})
				return err
			},
			"write --replace": func() error {
				_, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/facts.md", Section: section, Text: "x", Replace: true})
				return err
			},
			"remember": func() error {
				_, err := h.Remember(ctx, memhost.RememberRequest{Text: "x", Category: "knowledge", File: "facts", Section: section})
				return err
			},
		}
		for name, call := range calls {
			err := call()
			if fault.KindOf(err) != fault.BadInput || fault.FieldOf(err) != "section" {
				t.Fatalf("%s --section %q: %v (kind %q, field %q), want a bad-input error about section", name, section, err, fault.KindOf(err), fault.FieldOf(err))
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r\t\a\u2028") || !strings.Contains(msg, strconv.Quote(section)) {
				t.Fatalf("%s --section %q: error %q, want one line naming %s", name, section, msg, strconv.Quote(section))
			}
		}
	}
	if after := notebookFiles(t, h); !reflect.DeepEqual(after, before) {
		t.Fatalf("refused requests changed the notebook:\nbefore %v\nafter  %v", before, after)
	}
}

// TestSectionEditsKeepCRLF: remember and write into a section of a page
// with CRLF line endings keep them, so the edit changes only what it adds.
func TestSectionEditsKeepCRLF(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	writePage(t, h, "reference/contacts.md", "# Contacts\r\n\r\n## Sarah Chen\r\n- Phone: 555-1234\r\n")
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "Sarah Chen - email: sarah@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "reference/contacts.md", Section: "Max", Text: "- Phone: 555-9876"}); err != nil {
		t.Fatal(err)
	}
	want := "# Contacts\r\n\r\n## Sarah Chen\r\n- Phone: 555-1234\r\n- email: sarah@example.com\r\n\r\n## Max\r\n- Phone: 555-9876\r\n"
	if got := readPage(t, h, "reference/contacts.md"); got != want {
		t.Fatalf("contacts.md = %q, want %q", got, want)
	}
}

// TestUnindexablePagesAreNotStale: a page that no sync can index (over the
// size limit, or unreadable) is listed as such, not as stale for ever, and
// status counts it apart from the stale pages.
func TestUnindexablePagesAreNotStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	writePage(t, h, "ok.md", "# OK\nfine\n")
	writePage(t, h, "grown.md", "# Grown\nsmall for now\n")
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	writePage(t, h, "huge.md", strings.Repeat("x", MaxPageBytes+1))
	writePage(t, h, "grown.md", strings.Repeat("y", MaxPageBytes+1)) // indexed before, too large now
	want := map[string]string{"ok.md": "indexed", "huge.md": "too-large", "grown.md": "too-large"}
	unreadable := os.Geteuid() != 0 // root reads any file
	if unreadable {
		writePage(t, h, "locked.md", "# Locked\n")
		if err := os.Chmod(filepath.Join(h.NotebookDir(), "locked.md"), 0); err != nil {
			t.Fatal(err)
		}
		want["locked.md"] = "unreadable"
	}
	for _, synced := range []bool{false, true} {
		if synced {
			if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
				t.Fatal(err)
			}
		}
		files, err := h.Files(ctx, memhost.FilesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, f := range files.Files {
			got[f.Path] = f.State
			if f.Stale {
				got[f.Path] += " (stale)"
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("synced %v: files = %v, want %v", synced, got, want)
		}
		st, err := h.Status(ctx, memhost.StatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Stale != 0 || st.Unindexable != len(want)-1 {
			t.Fatalf("synced %v: status stale %d, unindexable %d; want 0, %d", synced, st.Stale, st.Unindexable, len(want)-1)
		}
	}
}
