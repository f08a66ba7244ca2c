package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
)

// A move, a prune and an episode log publish exactly the paths they changed, and
// federation commits exactly those, with a message saying what happened:
// an unrelated file left dirty in the repository stays out of their
// commits (a move and a prune used to commit everything with a bare "mv"
// or "prune").
func TestWritesCommitExactlyTheirPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	c := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	h, err := Open(ctx, Options{Home: home, Config: config.Default(), Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.GitInit(ctx, memhost.GitInitRequest{}); err != nil {
		t.Fatal(err)
	}
	var changes []memhost.Change
	cancel := h.Subscribe(func(c memhost.Change) { changes = append(changes, c) })
	defer cancel()
	for _, p := range []struct{ path, text string }{
		{"people/Sarah.md", "# Sarah\n"},
		{"notes/a.md", "Met [[Sarah]] today.\n"},
		{"daily/2026-08-03.md", "# Daily Log — 2026-08-03\n\n## 09:15 — Started the spec\n"},
	} {
		if _, err := h.Write(ctx, memhost.WriteRequest{Path: p.path, Text: p.text}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Rollup(ctx, memhost.RollupRequest{Period: "week", Date: "2026-W32"}); err != nil {
		t.Fatal(err)
	}
	flush := func() {
		t.Helper()
		if err := h.impl.FlushCommits(ctx); err != nil {
			t.Fatal(err)
		}
	}
	flush()
	// A file changed behind memhost's back, not synced yet.
	if err := os.WriteFile(filepath.Join(home, "notebook", "scratch.md"), []byte("draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lastCommit := func() (msg string, files []string) {
		out := gitOut(t, home, "show", "--no-renames", "--name-only", "--format=%s", "HEAD")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		for _, l := range lines[1:] {
			if l != "" {
				files = append(files, l)
			}
		}
		slices.Sort(files)
		return lines[0], files
	}

	changes = nil
	if _, err := h.Move(ctx, memhost.MoveRequest{From: "people/Sarah.md", To: "people/Sarah Chen.md"}); err != nil {
		t.Fatal(err)
	}
	flush()
	if len(changes) != 1 || !slices.Equal(changes[0].Paths, []string{"people/Sarah Chen.md", "notes/a.md"}) ||
		!slices.Equal(changes[0].Removed, []string{"people/Sarah.md"}) {
		t.Errorf("mv published %+v", changes)
	}
	msg, files := lastCommit()
	if want := []string{"notebook/notes/a.md", "notebook/people/Sarah Chen.md", "notebook/people/Sarah.md"}; msg != "mv: people/Sarah.md -> people/Sarah Chen.md" || !slices.Equal(files, want) {
		t.Errorf("mv committed %q %q, want %q", msg, files, want)
	}

	changes = nil
	if _, err := h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 90}); err != nil {
		t.Fatal(err)
	}
	flush()
	if len(changes) != 1 || !slices.Equal(changes[0].Paths, []string{"daily/archive/2026-08-03.md"}) ||
		!slices.Equal(changes[0].Removed, []string{"daily/2026-08-03.md"}) {
		t.Errorf("prune published %+v", changes)
	}
	msg, files = lastCommit()
	if want := []string{"notebook/daily/2026-08-03.md", "notebook/daily/archive/2026-08-03.md"}; msg != "prune: 1 archived, 0 deleted (before 2026-08-25)" || !slices.Equal(files, want) {
		t.Errorf("prune committed %q %q, want %q", msg, files, want)
	}
	// An episode log: its page alone, its transcript committed before.
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "wa-ada", Role: "user", Text: "Running late.", Channel: "whatsapp", SourceID: "919876543210"}); err != nil {
		t.Fatal(err)
	}
	flush()
	changes = nil
	if _, err := h.Episodes(ctx, memhost.EpisodesRequest{}); err != nil {
		t.Fatal(err)
	}
	flush()
	page := "episodes/" + h.Now().Format(time.DateOnly) + ".md"
	if len(changes) != 1 || !slices.Equal(changes[0].Paths, []string{page}) {
		t.Errorf("episodes published %+v", changes)
	}
	msg, files = lastCommit()
	if want := []string{"notebook/" + page}; msg != "episodes: "+page || !slices.Equal(files, want) {
		t.Errorf("episodes committed %q %q, want %q", msg, files, want)
	}
	if st := strings.TrimSpace(gitOut(t, home, "status", "--porcelain")); st != "?? notebook/scratch.md" {
		t.Errorf("git status after the writes:\n%s", st)
	}
}
