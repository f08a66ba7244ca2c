package host

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost/host/config"
)

func TestContext(t *testing.T) {
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

	resp, err := h.Context(ctx, ContextRequest{})
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
	again, _ := h.Context(ctx, ContextRequest{})
	if again.Text != text {
		t.Error("context is not stable")
	}
}
