package chunk

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost/host/markdown"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden chunks each page in testdata/ and compares with its
// .golden.json. Run with -update to rewrite them after a deliberate change,
// then read the diff.
func TestGolden(t *testing.T) {
	pages, err := filepath.Glob("testdata/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in testdata: %v", err)
	}
	for _, p := range pages {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(Split(string(src), DefaultOptions()), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(p, ".md") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if string(got)+"\n" != string(want) {
				t.Errorf("chunks of %s differ from %s:\n%s", p, golden, got)
			}
		})
	}
}

// TestInvariants checks what must hold for any page and any sizes.
func TestInvariants(t *testing.T) {
	pages, _ := filepath.Glob("testdata/*.md")
	for _, p := range pages {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, opt := range []Options{DefaultOptions(), {MaxTokens: 40, OverlapTokens: 10}, {MaxTokens: 100, OverlapTokens: 0}} {
			checkInvariants(t, p, string(src), opt)
		}
	}
}

func checkInvariants(t *testing.T, name, src string, opt Options) {
	t.Helper()
	lines := markdown.Lines(src)
	levels := markdown.HeadingLevels(lines)
	chunks := Split(src, opt)
	covered := make([]bool, len(lines)+1)
	prevStart := 0
	for i, c := range chunks {
		if c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > len(lines) {
			t.Fatalf("%s %+v: chunk %d has bad lines %d-%d", name, opt, i, c.StartLine, c.EndLine)
		}
		if c.StartLine < prevStart {
			t.Errorf("%s %+v: chunk %d starts before chunk %d", name, opt, i, i-1)
		}
		prevStart = c.StartLine
		for l := c.StartLine + 1; l <= c.EndLine; l++ {
			if levels[l-1] == 1 || levels[l-1] == 2 {
				t.Errorf("%s %+v: chunk %d (lines %d-%d) crosses the heading on line %d", name, opt, i, c.StartLine, c.EndLine, l)
			}
		}
		// Every word of the chunk comes from its lines.
		span := strings.Join(lines[c.StartLine-1:c.EndLine], " ")
		for _, w := range strings.Fields(c.Text) {
			if !strings.Contains(span, w) {
				t.Errorf("%s %+v: chunk %d has %q, which is not on its lines %d-%d", name, opt, i, w, c.StartLine, c.EndLine)
				break
			}
		}
		if tok := EstimateTokens(c.Text); tok > opt.MaxTokens+opt.MaxTokens/10 {
			t.Errorf("%s %+v: chunk %d has ~%d tokens, over %d", name, opt, i, tok, opt.MaxTokens)
		}
		if c.Heading == "" && c.StartLine > 1 && levels[0] > 0 {
			t.Errorf("%s %+v: chunk %d has no heading", name, opt, i)
		}
		for l := c.StartLine; l <= c.EndLine; l++ {
			covered[l] = true
		}
	}
	for l := 1; l <= len(lines); l++ {
		if strings.TrimSpace(lines[l-1]) != "" && !covered[l] {
			t.Errorf("%s %+v: line %d is in no chunk", name, opt, l)
		}
	}
}

func TestOverlap(t *testing.T) {
	var b strings.Builder
	b.WriteString("## Notes\n")
	for i := 0; i < 60; i++ {
		b.WriteString("This is a line of notes that is about forty characters.\n")
	}
	chunks := Split(b.String(), Options{MaxTokens: 100, OverlapTokens: 30})
	if len(chunks) < 3 {
		t.Fatalf("got %d chunks, want several", len(chunks))
	}
	for i := 1; i < len(chunks); i++ {
		prev, cur := chunks[i-1], chunks[i]
		if cur.StartLine > prev.EndLine {
			t.Errorf("chunk %d (lines %d-%d) does not overlap chunk %d (lines %d-%d)", i, cur.StartLine, cur.EndLine, i-1, prev.StartLine, prev.EndLine)
		}
		if cur.StartLine <= prev.StartLine {
			t.Errorf("chunk %d does not move forward", i)
		}
		if cur.Heading != "## Notes" {
			t.Errorf("chunk %d heading = %q", i, cur.Heading)
		}
	}
}

func TestEdgeCases(t *testing.T) {
	for _, src := range []string{"", "\n\n\n", "#", "# \n", "```\nunclosed fence\n## not a heading", "\r\n## CRLF\r\nline\r\n", strings.Repeat("字", 3000)} {
		checkInvariants(t, "edge", src, DefaultOptions())
	}
	if got := Split("", DefaultOptions()); len(got) != 0 {
		t.Errorf("Split(\"\") = %v, want none", got)
	}
	got := Split("```\n## inside\n```\n## outside\ntext\n", DefaultOptions())
	if len(got) != 2 || got[1].Heading != "## outside" || got[0].Heading != "" {
		t.Errorf("fenced heading split the page: %+v", got)
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abcd", 1},
		{"abcde", 2},
		{"会议", 2},
		{strings.Repeat("x", 1600), 400},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.in); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// BenchmarkSplitLongLine: a page (or a transcript turn) of one 4 MB line.
// Cutting it measured what was left of the line before every piece: 6.1 s
// (quadratic); now one walk, 94 ms.
func BenchmarkSplitLongLine(b *testing.B) {
	text := strings.Repeat("word ", 4<<20/5)
	for b.Loop() {
		Split(text, Options{MaxTokens: 400, OverlapTokens: 80})
	}
}
