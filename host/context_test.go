package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
)

func TestContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 2, 24, 12, 0, 0, 0, time.UTC)}
	cfg := config.Default()
	cfg.Timezone = "UTC"
	cfg.Memory.Prompt.MaxPerFileChars = 100
	cfg.Memory.Prompt.MaxTotalReferenceChars = 225
	h, err := Open(ctx, Options{Home: t.TempDir(), Config: cfg, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	writePage(t, h, "reference/b-contacts.md", "# Contacts\nSarah 555-1234\n")
	writePage(t, h, "reference/a-long.md", "# Long\n"+strings.Repeat("long line of text\n", 20))
	writePage(t, h, "reference/c-third.md", "# Third\n"+strings.Repeat("third page text\n", 20))
	writePage(t, h, "reference/d-fourth.md", "# Fourth\nnever shown\n")
	writePage(t, h, "daily/2026-02-24.md", "# Daily Log — 2026-02-24\n"+strings.Repeat("early entry\n", 20)+"## 11:00 — latest\n")
	writePage(t, h, "daily/2026-02-23.md", "# Daily Log — 2026-02-23\nyesterday entry\n")
	writePage(t, h, "daily/2026-02-22.md", "# Daily Log — 2026-02-22\ntwo days ago\n")

	resp, err := h.Context(ctx, memhost.ContextRequest{})
	if err != nil {
		t.Fatal(err)
	}
	text := resp.Text
	order := []string{"### reference/a-long.md", "### reference/b-contacts.md", "### reference/c-third.md", "### daily/2026-02-24.md (today)", "### daily/2026-02-23.md (yesterday)"}
	last := -1
	for _, s := range order {
		i := strings.Index(text, s)
		if i < 0 || i < last {
			t.Fatalf("%q missing or out of order in:\n%s", s, text)
		}
		last = i
	}
	for _, absent := range []string{"never shown", "two days ago", "early entry\nearly entry\nearly entry\nearly entry\nearly entry\nearly entry\nearly entry\nearly entry\nearly entry"} {
		if strings.Contains(text, absent) {
			t.Errorf("context holds %q", absent)
		}
	}
	for _, want := range []string{"Sarah 555-1234", "[… truncated: reference/a-long.md", "1 more reference pages left out", "## 11:00 — latest", "yesterday entry", "[… earlier entries truncated"} {
		if !strings.Contains(text, want) {
			t.Errorf("context lacks %q:\n%s", want, text)
		}
	}
	total := 0
	for _, f := range resp.Files {
		if strings.HasPrefix(f.Path, "reference/") {
			total += f.Chars
			if f.Chars > 100 {
				t.Errorf("%s: %d chars, over the per-file limit", f.Path, f.Chars)
			}
		}
	}
	if total > 225 {
		t.Errorf("reference total %d, over 225", total)
	}
	again, _ := h.Context(ctx, memhost.ContextRequest{})
	if again.Text != text {
		t.Error("context is not stable")
	}
}

// TestContextStaysInsideNotebook: context reads what the indexer would
// index and nothing else: a reference folder or a page that is a symlink
// out of the notebook is not read, one that stays inside is.
func TestContextStaysInsideNotebook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 2, 24, 12, 0, 0, 0, time.UTC)}
	cfg := config.Default()
	cfg.Timezone = "UTC"
	outside := t.TempDir()
	for name, text := range map[string]string{"secret.md": "outside secret\n", "2026-02-24.md": "outside daily\n"} {
		if err := os.WriteFile(filepath.Join(outside, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		setup   func(t *testing.T, nb string)
		want    []string // in the text
		notWant []string
	}{
		{"reference folder links outside", func(t *testing.T, nb string) {
			os.RemoveAll(filepath.Join(nb, "reference"))
			symlink(t, outside, filepath.Join(nb, "reference"))
		}, []string{"(reference/ leads outside the notebook; not read)"}, []string{"outside secret"}},
		{"reference page links outside", func(t *testing.T, nb string) {
			symlink(t, filepath.Join(outside, "secret.md"), filepath.Join(nb, "reference", "secret.md"))
		}, nil, []string{"outside secret", "reference/secret.md"}},
		{"reference page links inside", func(t *testing.T, nb string) {
			os.WriteFile(filepath.Join(nb, "knowledge", "facts.md"), []byte("inside fact\n"), 0o644)
			symlink(t, filepath.Join(nb, "knowledge", "facts.md"), filepath.Join(nb, "reference", "facts.md"))
		}, []string{"### reference/facts.md", "inside fact"}, nil},
		{"reference folder links inside", func(t *testing.T, nb string) {
			os.RemoveAll(filepath.Join(nb, "reference"))
			os.WriteFile(filepath.Join(nb, "knowledge", "facts.md"), []byte("inside fact\n"), 0o644)
			symlink(t, filepath.Join(nb, "knowledge"), filepath.Join(nb, "reference"))
		}, []string{"### reference/facts.md", "inside fact"}, nil},
		{"daily folder links outside", func(t *testing.T, nb string) {
			os.RemoveAll(filepath.Join(nb, "daily"))
			symlink(t, outside, filepath.Join(nb, "daily"))
		}, nil, []string{"outside daily"}},
		{"daily page links outside", func(t *testing.T, nb string) {
			symlink(t, filepath.Join(outside, "2026-02-24.md"), filepath.Join(nb, "daily", "2026-02-24.md"))
		}, nil, []string{"outside daily"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Open(ctx, Options{Home: t.TempDir(), Config: cfg, Now: clk.now})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			tt.setup(t, h.NotebookDir())
			got, err := h.Context(ctx, memhost.ContextRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.want {
				if !strings.Contains(got.Text, s) {
					t.Errorf("context lacks %q:\n%s", s, got.Text)
				}
			}
			for _, s := range tt.notWant {
				if strings.Contains(got.Text, s) {
					t.Errorf("context holds %q:\n%s", s, got.Text)
				}
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
