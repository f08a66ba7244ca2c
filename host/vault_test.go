package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/markdown"
)

// vaultPage is a page as Obsidian users write them: frontmatter with
// aliases, tags, dates and a link, wikilinks of every form, sections.
const vaultPage = `---
title: Sarah Chen
aliases: [Sarah, S. Chen]
tags:
  - person
  - team/design
created: 2026-03-02
related: "[[Project Alpha]]"
---
# Sarah Chen

Lead designer on [[Project Alpha]]; see [[Project Alpha#Design reviews|the reviews]]. #contact

## Contact
- Email: sarah@example.com

## Notes
- Prefers async reviews, says [[glossary]].

## Later
- Nothing yet.
`

// h2Sections splits a page's body (after its frontmatter) at its H2
// headings, bytes and all: sections[0] is the text before the first.
func h2Sections(page string) []string {
	_, body := markdown.SplitFrontmatter(page)
	var out []string
	cur := ""
	for _, l := range strings.SplitAfter(body, "\n") {
		if strings.HasPrefix(l, "## ") {
			out = append(out, cur)
			cur = ""
		}
		cur += l
	}
	return append(out, cur)
}

// TestWriteToolsKeepFrontmatter: a page with frontmatter and wikilinks
// survives every write tool byte for byte outside what the tool edits:
// its frontmatter is never dropped or reordered, and every section but
// the edited one is unchanged.
func TestWriteToolsKeepFrontmatter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const rel = "knowledge/sarah-chen.md"
	tests := []struct {
		name string
		run  func(h *Host) error
		// edited is the H2 section that may change ("" none, "*" the
		// whole body); page is where the page is afterwards.
		edited, page string
	}{
		{"remember into a section", func(h *Host) error {
			_, err := h.Remember(ctx, memhost.RememberRequest{Text: "Phone: 555-0100", Category: "knowledge", File: "sarah-chen", Section: "Contact"})
			return err
		}, "## Contact\n", rel},
		{"remember into a new section", func(h *Host) error {
			_, err := h.Remember(ctx, memhost.RememberRequest{Text: "Likes tea", Category: "knowledge", File: "sarah-chen", Section: "Preferences"})
			return err
		}, "new", rel},
		{"write append to the page", func(h *Host) error {
			_, err := h.Write(ctx, memhost.WriteRequest{Path: rel, Text: "Appended at the end."})
			return err
		}, "## Later\n", rel},
		{"write append to a section", func(h *Host) error {
			_, err := h.Write(ctx, memhost.WriteRequest{Path: rel, Section: "Notes", Text: "- Met on Tuesday"})
			return err
		}, "## Notes\n", rel},
		{"write replace a section", func(h *Host) error {
			_, err := h.Write(ctx, memhost.WriteRequest{Path: rel, Section: "Notes", Text: "- Replaced notes", Replace: true})
			return err
		}, "## Notes\n", rel},
		{"write replace the whole page", func(h *Host) error {
			_, err := h.Write(ctx, memhost.WriteRequest{Path: rel, Text: "# Sarah Chen\n\nAll new body.", Replace: true})
			return err
		}, "*", rel},
		{"mv the page", func(h *Host) error {
			_, err := h.Move(ctx, memhost.MoveRequest{From: rel, To: "people/sarah.md"})
			return err
		}, "", "people/sarah.md"},
		{"mv a page it links to", func(h *Host) error {
			_, err := h.Move(ctx, memhost.MoveRequest{From: "reference/glossary.md", To: "reference/terms.md"})
			return err
		}, "links", rel},
		{"daily-log into a log with frontmatter", func(h *Host) error {
			_, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "Met [[Sarah Chen]]"})
			return err
		}, "new", "daily/2026-11-23.md"},
		{"rollup written again", func(h *Host) error {
			_, err := h.Rollup(ctx, memhost.RollupRequest{Period: "week", Date: "2026-11-23"})
			return err
		}, "*", "daily/rollups/2026-W48.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)}
			h, err := Open(ctx, Options{Home: t.TempDir(), Config: config.Default(), Now: c.now})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			writePage(t, h, rel, vaultPage)
			writePage(t, h, "reference/glossary.md", "# Glossary\n")
			writePage(t, h, "projects/Project Alpha.md", "# Project Alpha\n\n## Design reviews\n")
			writePage(t, h, "daily/2026-11-23.md", "---\nmood: good\ntags: [daily]\n---\n# Daily Log — 2026-11-23\n\n## 08:00 — Early\nText [[Sarah Chen]].\n")
			writePage(t, h, "daily/rollups/2026-W48.md", "---\nreviewed: true\ntitle: My week\n---\n# Old body\n")
			old := map[string]string{rel: vaultPage, "daily/2026-11-23.md": readPage(t, h, "daily/2026-11-23.md"), "daily/rollups/2026-W48.md": readPage(t, h, "daily/rollups/2026-W48.md")}
			before := old[tt.page]
			if before == "" {
				before = vaultPage // moved
			}
			if err := tt.run(h); err != nil {
				t.Fatal(err)
			}
			after := readPage(t, h, tt.page)
			fb, _ := markdown.SplitFrontmatter(before)
			fa, _ := markdown.SplitFrontmatter(after)
			if fa != fb {
				t.Fatalf("frontmatter changed:\n%q\nwas\n%q", fa, fb)
			}
			if tt.edited == "*" {
				return
			}
			if tt.edited == "links" {
				if want := strings.ReplaceAll(before, "[[glossary]]", "[[terms]]"); after != want {
					t.Fatalf("page =\n%s\nwant\n%s", after, want)
				}
				return
			}
			sb, sa := h2Sections(before), h2Sections(after)
			if tt.edited == "new" {
				// A new section at the end: every old one as it was (the
				// last may gain the blank line before the new heading).
				if len(sa) != len(sb)+1 {
					t.Fatalf("%d sections, want %d:\n%s", len(sa), len(sb)+1, after)
				}
				for i := range sb {
					if strings.TrimRight(sa[i], "\n") != strings.TrimRight(sb[i], "\n") {
						t.Fatalf("section %d changed:\n%q\nwas\n%q", i, sa[i], sb[i])
					}
				}
				return
			}
			if len(sa) != len(sb) {
				t.Fatalf("%d sections, want %d:\n%s", len(sa), len(sb), after)
			}
			changed := 0
			for i := range sb {
				if sa[i] == sb[i] {
					continue
				}
				changed++
				if tt.edited == "" || !strings.HasPrefix(sb[i], tt.edited) {
					t.Fatalf("section %d changed:\n%q\nwas\n%q", i, sa[i], sb[i])
				}
			}
			if tt.edited != "" && changed != 1 {
				t.Fatalf("%d sections changed, want the edited one", changed)
			}
		})
	}
}

// treeSums hashes every file under dir, hidden ones included.
func treeSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			r, _ := filepath.Rel(dir, p)
			out[r] = sha256.Sum256(b)
		}
		return nil
	})
	return out
}

// TestObsidianVault: a real Obsidian vault (testdata/obsidian-vault:
// .obsidian settings and plugins, the .trash folder, attachments, a PDF,
// nested folders, a canvas) indexes without a problem; hidden folders are
// neither indexed nor touched; links resolve as Obsidian resolves them;
// recall filters by tag and folder.
func TestObsidianVault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	copyTree(t, filepath.Join("testdata", "obsidian-vault"), filepath.Join(home, "notebook"))
	h := openHost(t, home, nil)
	hidden := func() map[string][32]byte {
		all := treeSums(t, h.NotebookDir())
		for k := range all {
			if !strings.HasPrefix(k, ".") {
				delete(all, k)
			}
		}
		return all
	}
	hiddenBefore := hidden()
	if len(hiddenBefore) != 3 {
		t.Fatalf("the fixture's hidden files: %v", hiddenBefore)
	}
	res, err := h.Sync(ctx, memhost.SyncRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"daily/2026-11-20.md", "knowledge/glossary.md", "knowledge/people/Sarah Chen.md", "projects/alpha/Project Alpha.md"}
	got := append([]string(nil), res.Paths...)
	sortStrings(got)
	if len(res.Problems) > 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("sync indexed %v with problems %v; want %v and none", got, res.Problems, want)
	}
	if f := found(t, h, "zanzibar"); len(f) != 0 {
		t.Fatalf("hidden folders were indexed: %v", f)
	}
	// Frontmatter is no body text: "active" is only a frontmatter value.
	if f := found(t, h, "active"); len(f) != 0 {
		t.Fatalf("frontmatter was indexed as text: %v", f)
	}

	links, err := h.Links(ctx, memhost.LinksRequest{Path: "projects/alpha/Project Alpha.md"})
	if err != nil {
		t.Fatal(err)
	}
	type pair struct{ target, page string }
	var out, back []pair
	for _, l := range links.Out {
		out = append(out, pair{l.Target, l.Page})
	}
	for _, l := range links.Back {
		back = append(back, pair{l.Target, l.Page})
	}
	wantOut := []pair{{"Sarah Chen", "knowledge/people/Sarah Chen.md"}, {"contract.pdf", "attachments/contract.pdf"},
		{"board.canvas", "projects/alpha/board.canvas"}, {"S. Chen", "knowledge/people/Sarah Chen.md"}, {"Finance Team", ""}}
	wantBack := []pair{{"Alpha", "knowledge/glossary.md"}, {"Project Alpha", "knowledge/people/Sarah Chen.md"}, {"Project Alpha", "knowledge/people/Sarah Chen.md"}}
	if !reflect.DeepEqual(out, wantOut) || !reflect.DeepEqual(back, wantBack) {
		t.Fatalf("links:\nout  %v\nwant %v\nback %v\nwant %v", out, wantOut, back, wantBack)
	}
	if links.Title != "Project Alpha" || !reflect.DeepEqual(links.Aliases, []string{"Alpha"}) || !reflect.DeepEqual(links.Tags, []string{"project", "project/alpha"}) {
		t.Fatalf("page metadata: %q %v %v", links.Title, links.Aliases, links.Tags)
	}
	if byName, err := h.Links(ctx, memhost.LinksRequest{Path: "project alpha"}); err != nil || byName.Path != "projects/alpha/Project Alpha.md" {
		t.Fatalf("links of a page by name: %q, %v", byName.Path, err)
	}
	if _, err := h.Links(ctx, memhost.LinksRequest{Path: "whiteboard.png"}); fault.KindOf(err) != fault.BadInput {
		t.Fatalf("links of an attachment: %v", err)
	}
	if _, err := h.Links(ctx, memhost.LinksRequest{Path: "Nobody"}); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("links of no page: %v", err)
	}
	un, err := h.Links(ctx, memhost.LinksRequest{Unresolved: true})
	if err != nil || len(un.Unresolved) != 1 || un.Unresolved[0].Target != "Finance Team" || un.Unresolved[0].Line != 16 {
		t.Fatalf("unresolved: %+v, %v", un.Unresolved, err)
	}
	st, err := h.Status(ctx, memhost.StatusRequest{})
	if err != nil || st.UnresolvedLinks != 1 {
		t.Fatalf("status: %d unresolved, %v", st.UnresolvedLinks, err)
	}

	// Filters: tags from frontmatter and inline, nested, folder prefixes.
	recall := func(q string, tags []string, path string) []string {
		t.Helper()
		resp, err := h.Recall(ctx, memhost.RecallRequest{Query: q, Tags: tags, Path: path, MinScore: new(float64)})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range append(resp.Results.Notebook, resp.Results.Daily...) {
			out = append(out, r.Path)
		}
		sortStrings(out)
		return out
	}
	for _, tt := range []struct {
		q    string
		tags []string
		path string
		want []string
	}{
		{"tide", nil, "", []string{"daily/2026-11-20.md", "knowledge/glossary.md", "projects/alpha/Project Alpha.md"}},
		{"tide", []string{"project"}, "", []string{"projects/alpha/Project Alpha.md"}},
		{"tide", []string{"#Reference"}, "", []string{"knowledge/glossary.md"}}, // inline, any case
		{"tide", []string{"meeting"}, "", []string{"daily/2026-11-20.md"}},
		{"tide", nil, "knowledge/", []string{"knowledge/glossary.md"}},
		{"tide", nil, "./projects", []string{"projects/alpha/Project Alpha.md"}},
		{"tide", []string{"project"}, "knowledge", nil},
		{"designer", []string{"team"}, "", []string{"knowledge/people/Sarah Chen.md"}}, // nested: team/design
		{"designer", []string{"design"}, "", nil},
	} {
		if got := recall(tt.q, tt.tags, tt.path); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("recall %q --tag %v --path %q = %v, want %v", tt.q, tt.tags, tt.path, got, tt.want)
		}
	}
	for _, bad := range []memhost.RecallRequest{{Query: "x", Tags: []string{"two words"}}, {Query: "x", Tags: []string{"#"}}, {Query: "x", Path: "../up"}} {
		if _, err := h.Recall(ctx, bad); err == nil {
			t.Errorf("recall %+v: no error", bad)
		} else if k := fault.KindOf(err); k != fault.BadInput && k != fault.Outside {
			t.Errorf("recall %+v: %v (%s)", bad, err, k)
		}
	}

	// Writes and a rename leave the hidden folders as they were.
	if _, err := h.Move(ctx, memhost.MoveRequest{From: "knowledge/people/Sarah Chen.md", To: "people/Sarah.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/glossary.md", Text: "- more"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(hidden(), hiddenBefore) {
		t.Fatal("hidden files changed")
	}
	if _, err := exec.LookPath("git"); err == nil {
		// The fixture itself is unchanged by the test (it was copied).
		if out, err := exec.Command("git", "status", "--porcelain", "testdata/obsidian-vault").CombinedOutput(); err != nil || len(out) > 0 {
			t.Fatalf("fixture changed: %s %v", out, err)
		}
	}
}

func sortStrings(s []string) { slices.Sort(s) }

func TestMove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	writePage(t, h, "knowledge/people/Sarah Chen.md", "---\naliases: [S. Chen]\n---\n# Sarah\nSee [[Sarah Chen#Sarah]] (self).\n")
	writePage(t, h, "reference/a.md", "# A\n[[Sarah Chen]], [[people/Sarah Chen|her]], [[S. Chen]], [[knowledge/people/Sarah Chen.md#X]], `[[Sarah Chen]]`\n")
	writePage(t, h, "reference/b.md", "# B\nNo links to her. [[a]]\n")
	writePage(t, h, "other/Sarah.md", "# Another Sarah\n")
	bBefore := readPage(t, h, "reference/b.md")

	resp, err := h.Move(ctx, memhost.MoveRequest{From: "knowledge/people/Sarah Chen", To: "people/Sarah"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.From != "knowledge/people/Sarah Chen.md" || resp.To != "people/Sarah.md" {
		t.Fatalf("resp = %+v", resp)
	}
	// "Sarah" alone now names two pages; the shortest path wins, which is
	// not the moved one: the links are written with its path.
	a := readPage(t, h, "reference/a.md")
	wantA := "# A\n[[people/Sarah]], [[people/Sarah|her]], [[S. Chen]], [[people/Sarah.md#X]], `[[Sarah Chen]]`\n"
	if a != wantA {
		t.Fatalf("a.md =\n%q\nwant\n%q", a, wantA)
	}
	moved := readPage(t, h, "people/Sarah.md")
	if moved != "---\naliases: [S. Chen]\n---\n# Sarah\nSee [[Sarah#Sarah]] (self).\n" { // beside itself, its name finds it
		t.Fatalf("the moved page = %q", moved)
	}
	if readPage(t, h, "reference/b.md") != bBefore {
		t.Fatal("a page without links to it changed")
	}
	if _, err := os.Stat(filepath.Join(h.NotebookDir(), "knowledge/people/Sarah Chen.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the old page is still there: %v", err)
	}
	// The index follows: back links of the new name, none unresolved.
	links, err := h.Links(ctx, memhost.LinksRequest{Path: "people/Sarah.md"})
	if err != nil || len(links.Back) != 4 {
		t.Fatalf("back links after the move: %+v, %v", links.Back, err)
	}
	if un, _ := h.Links(ctx, memhost.LinksRequest{Unresolved: true}); len(un.Unresolved) != 0 {
		t.Fatalf("unresolved after the move: %+v", un.Unresolved)
	}
	if f := found(t, h, "Another"); len(f) != 1 || f[0] != "other/Sarah.md" {
		t.Fatalf("recall after the move: %v", f)
	}

	// Refusals, each leaving every file as it was.
	sums := treeSums(t, h.NotebookDir())
	for _, tt := range []struct {
		req  memhost.MoveRequest
		kind fault.Kind
	}{
		{memhost.MoveRequest{From: "people/Sarah.md", To: "other/Sarah.md"}, fault.Conflict},
		{memhost.MoveRequest{From: "missing.md", To: "x.md"}, fault.NotFound},
		{memhost.MoveRequest{From: "people/Sarah.md", To: "../outside.md"}, fault.Outside},
		{memhost.MoveRequest{From: "people/Sarah.md", To: ".obsidian/x.md"}, fault.BadInput},
		{memhost.MoveRequest{From: "people/Sarah.md", To: "x.png"}, fault.BadInput},
		{memhost.MoveRequest{From: "people/Sarah.md", To: "people/Sarah"}, fault.BadInput},
		{memhost.MoveRequest{From: "people", To: "x.md"}, fault.BadInput},
	} {
		_, err := h.Move(ctx, tt.req)
		if k := fault.KindOf(err); k != tt.kind {
			t.Errorf("Move(%+v) = %v (%s), want %s", tt.req, err, k, tt.kind)
		}
	}
	if !reflect.DeepEqual(treeSums(t, h.NotebookDir()), sums) {
		t.Fatal("a refused move changed files")
	}
}

func TestRollupAndPrune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	h, err := Open(ctx, Options{Home: t.TempDir(), Config: config.Default(), Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	writePage(t, h, "daily/2026-08-03.md", "# Daily Log — 2026-08-03\n\n## 09:15 — Started the spec\nDrafted the outline.\n")
	writePage(t, h, "daily/2026-08-05.md", "# Daily Log — 2026-08-05\n\n## Decisions\n- Ship on Friday\n")
	writePage(t, h, "daily/2026-08-11.md", "# Daily Log — 2026-08-11\n\n## 10:00 — Review\n")
	writePage(t, h, "daily/2026-11-20.md", "# Daily Log — 2026-11-20\n\n## 10:00 — Recent\n")

	// Prune first: refused, naming the rollups to write, nothing moved.
	sums := treeSums(t, h.NotebookDir())
	_, err = h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 90})
	if !errors.Is(err, memhost.ErrRollupsMissing) || fault.KindOf(err) != fault.Conflict ||
		!strings.Contains(err.Error(), "daily/rollups/2026-W32.md (missing), daily/rollups/2026-W33.md (missing)") {
		t.Fatalf("prune without rollups: %v", err)
	}
	if !reflect.DeepEqual(treeSums(t, h.NotebookDir()), sums) {
		t.Fatal("a refused prune changed files")
	}

	w, err := h.Rollup(ctx, memhost.RollupRequest{Period: "week", Date: "2026-W32"})
	if err != nil || !w.Created || !w.Changed || len(w.Logs) != 2 || w.Entries != 2 || w.Path != "daily/rollups/2026-W32.md" {
		t.Fatalf("rollup = %+v, %v", w, err)
	}
	first := readPage(t, h, w.Path)
	again, err := h.Rollup(ctx, memhost.RollupRequest{Period: "week", Date: "2026-08-09"})
	if err != nil || again.Changed || again.Created || readPage(t, h, w.Path) != first {
		t.Fatalf("a second rollup changed the page: %+v, %v", again, err)
	}
	if f := found(t, h, "outline"); len(f) != 2 {
		t.Fatalf("the rollup is not indexed: %v", f)
	}
	// A log edited after its rollup makes it out of date.
	writePage(t, h, "daily/2026-08-05.md", "# Daily Log — 2026-08-05\n\n## Decisions\n- Ship on Friday\n- And test\n")
	_, err = h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 90})
	if !errors.Is(err, memhost.ErrRollupsMissing) || !strings.Contains(err.Error(), "daily/rollups/2026-W32.md (out of date), daily/rollups/2026-W33.md (missing)") {
		t.Fatalf("prune with a stale rollup: %v", err)
	}
	// A month's rollup covers all of August.
	if m, err := h.Rollup(ctx, memhost.RollupRequest{Period: "month", Date: "2026-08"}); err != nil || len(m.Logs) != 3 || m.Path != "daily/rollups/2026-08.md" {
		t.Fatalf("month rollup = %+v, %v", m, err)
	}
	dry, err := h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 90, DryRun: true})
	if err != nil || len(dry.Archived) != 3 || !dry.DryRun || dry.Before != "2026-08-25" {
		t.Fatalf("dry run = %+v, %v", dry, err)
	}
	if _, err := os.Stat(filepath.Join(h.NotebookDir(), "daily/2026-08-03.md")); err != nil {
		t.Fatal("a dry run moved a log")
	}
	p, err := h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 90})
	if err != nil || len(p.Archived) != 3 || p.Archived[0] != (memhost.PrunedLog{From: "daily/2026-08-03.md", To: "daily/archive/2026-08-03.md"}) || len(p.Deleted) != 0 {
		t.Fatalf("prune = %+v, %v", p, err)
	}
	if readPage(t, h, "daily/archive/2026-08-05.md") != "# Daily Log — 2026-08-05\n\n## Decisions\n- Ship on Friday\n- And test\n" {
		t.Fatal("the archived log differs")
	}
	if _, err := os.Stat(filepath.Join(h.NotebookDir(), "daily/2026-11-20.md")); err != nil {
		t.Fatal("a recent log was pruned")
	}
	// Archived logs stay searchable, and a rollup written again reads them.
	if f := found(t, h, "outline"); !contains(f, "daily/archive/2026-08-03.md") || contains(f, "daily/2026-08-03.md") {
		t.Fatalf("recall after the prune: %v", f)
	}
	m := readPage(t, h, "daily/rollups/2026-08.md")
	if r, err := h.Rollup(ctx, memhost.RollupRequest{Period: "month", Date: "2026-08-15"}); err != nil || r.Changed || readPage(t, h, "daily/rollups/2026-08.md") != m {
		t.Fatalf("the month's rollup after the prune: %+v, %v", r, err)
	}
	// Links to the archived logs still resolve (by file name).
	if un, _ := h.Links(ctx, memhost.LinksRequest{Unresolved: true}); len(un.Unresolved) != 0 {
		t.Fatalf("unresolved after the prune: %+v", un.Unresolved)
	}
	// Nothing more to archive; --delete removes archived logs too.
	if p, err := h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 90}); err != nil || len(p.Archived) != 0 {
		t.Fatalf("a second prune = %+v, %v", p, err)
	}
	d, err := h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 90, Delete: true})
	if err != nil || len(d.Deleted) != 3 {
		t.Fatalf("prune --delete = %+v, %v", d, err)
	}
	if f := found(t, h, "outline"); contains(f, "daily/archive/2026-08-03.md") {
		t.Fatalf("a deleted log is still found: %v", f)
	}

	for _, bad := range []memhost.RollupRequest{{Period: "year"}, {Period: "week", Date: "2026-W60"}, {Period: "month", Date: "soon"}} {
		if _, err := h.Rollup(ctx, bad); fault.KindOf(err) != fault.BadInput {
			t.Errorf("Rollup(%+v) = %v", bad, err)
		}
	}
	if _, err := h.Rollup(ctx, memhost.RollupRequest{Period: "week", Date: "2020-01-01"}); fault.KindOf(err) != fault.NotFound {
		t.Errorf("a rollup of no logs: %v", err)
	}
	if _, err := h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 0}); fault.KindOf(err) != fault.BadInput {
		t.Errorf("prune of 0 days: %v", err)
	}
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }

// TestBackLinksByName: a page's back links are found whatever case, path
// or extension the links name it with, names with LIKE's wildcards and
// non-ASCII letters included, and no look-alike is taken for it.
func TestBackLinksByName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	writePage(t, h, "a/Ünïcode Notes.md", "# U\n")
	writePage(t, h, "b/under_score 100%.md", "---\naliases: [U-S]\n---\n# S\n")
	writePage(t, h, "b/underXscore 100x.md", "# look-alike\n")
	writePage(t, h, "c/x.md", "# X\n[[ünïcode notes]] [[UNDER_SCORE 100%]] [[b/under_score 100%.md#h]] [[underXscore 100x]] [[u-s]] [[../b/under_score 100%|rel]]\n")
	for _, tt := range []struct {
		page string
		back []string
	}{
		{"a/Ünïcode Notes.md", []string{"ünïcode notes"}},
		{"b/under_score 100%.md", []string{"UNDER_SCORE 100%", "b/under_score 100%.md", "u-s", "../b/under_score 100%"}},
		{"b/underXscore 100x.md", []string{"underXscore 100x"}},
	} {
		resp, err := h.Links(ctx, memhost.LinksRequest{Path: tt.page})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range resp.Back {
			got = append(got, l.Target)
		}
		if !reflect.DeepEqual(got, tt.back) {
			t.Errorf("back links of %s: %q, want %q", tt.page, got, tt.back)
		}
	}
}
