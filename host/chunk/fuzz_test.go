package chunk

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memhost/memhost/host/markdown"
)

// addPages seeds f with pages that exercise what the chunker treats
// specially: headings of every level, fences (closed, unclosed, indented,
// with headings inside), CRLF, frontmatter, CJK, blank runs, and lines too
// long for one chunk. args follow each page.
func addPages(f *testing.F, args ...any) {
	pages := []string{
		"",
		"\n",
		"\n\n\n",
		"#",
		"# \n",
		"#hashtag\n##nospace\n",
		"# Title\n\nIntro paragraph.\n\n## Section A\n- one\n- two\n\n### Sub\ntext\n\n## Section B\nmore text\n",
		"# Build notes\n\n```sh\n# not a heading\n## also not\nmake build\n```\n\n## Testing\nTests need the model.\n",
		"```\nunclosed fence\n## not a heading\n",
		"~~~\n## inside tilde fence\n~~~\n## outside\ntext\n",
		"    ## indented code, not a heading\n   ## three spaces is a heading\n",
		"\r\n## CRLF\r\nline one\r\nline two\r\n\r\n## Next\r\nmore\r\n",
		"no final newline\n## H2",
		"---\ntitle: Groceries\ntags: [food, weekly]\n# a YAML comment\n---\n\n# Shopping\n\n## Groceries\n- Milk\n",
		"## 会议记录\n今天的会议讨论了项目进度和下一步计划。\n## 다음\n한국어 텍스트\n",
		"# Émigré café\n\nnaïve résumé — “quotes” … 🙂🙃\n",
		"## Long\n" + strings.Repeat("word ", 2000) + "\n",
		"## NoSpaces\n" + strings.Repeat("x", 5000) + "\n",
		strings.Repeat("字", 3000),
		strings.Repeat("para line one\npara line two\n\n", 200),
		"## A\n\n\n\n## B\n\n\n",
		"\xff\xfe invalid utf-8 \xc3\x28\n## h\n",
		"# Title ###\n## Closing hashes ##\n",
	}
	for _, p := range pages {
		f.Add(append([]any{p}, args...)...)
	}
}

// FuzzSplit checks the chunker's promises on any page and any sizes a
// config may give (maxTokens at least 16, overlap below it).
func FuzzSplit(f *testing.F) {
	addPages(f, uint16(400), uint16(80))
	f.Add("## A\nshort\n"+strings.Repeat("tiny line\n", 50), uint16(16), uint16(15))
	f.Add("## Zero overlap\n"+strings.Repeat("a b c d e f g h\n", 40), uint16(20), uint16(0))
	f.Add(strings.Repeat("long sentence here. ", 300), uint16(17), uint16(16))
	f.Fuzz(func(t *testing.T, page string, maxTok, overlap uint16) {
		opt := Options{MaxTokens: 16 + int(maxTok)%1000}
		opt.OverlapTokens = int(overlap) % opt.MaxTokens
		if len(page) > 64<<10 {
			t.Skip("pages this long are covered by the seeds; fuzzing them is slow")
		}
		checkFuzzInvariants(t, page, opt)
	})
}

// FuzzSplitOptions feeds the options as given, as a caller that skipped
// config validation would: Split normalises them and must not panic or
// loop.
func FuzzSplitOptions(f *testing.F) {
	addPages(f, 0, 0)
	f.Add("## A\nsome text here\n", -5, -1)
	f.Add("## A\n"+strings.Repeat("abc ", 100), 1, 0)
	f.Add("## A\n"+strings.Repeat("abc ", 100), 2, 5)
	f.Add("## A\n"+strings.Repeat("字", 100), 3, 2)
	f.Fuzz(func(t *testing.T, page string, maxTok, overlap int) {
		// Huge limits only make one chunk; keep the tail of the range.
		opt := Options{MaxTokens: maxTok % 5000, OverlapTokens: overlap % 5000}
		chunks := Split(page, opt)
		lines := markdown.Lines(page)
		for i, c := range chunks {
			if c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > len(lines) {
				t.Fatalf("%+v: chunk %d has lines %d-%d of %d", opt, i, c.StartLine, c.EndLine, len(lines))
			}
		}
	})
}

// checkFuzzInvariants is checkInvariants made linear in the page's size
// (a fuzzed page may have thousands of one-word chunks) and stricter: lines
// are not only covered but kept whole, chunks are in order, and a chunk's
// heading is the real heading above it.
func checkFuzzInvariants(t *testing.T, page string, opt Options) {
	t.Helper()
	lines := markdown.Lines(page)
	fm := markdown.FrontmatterLines(lines)
	levels := append(make([]int, fm), markdown.HeadingLevels(lines[fm:])...)
	chunks := Split(page, opt)
	covered := make([]bool, len(lines)+1)
	whole := make([]bool, len(lines)+1) // the line is some covering chunk's line, as is
	for i, c := range chunks {
		if c.StartLine <= fm {
			t.Fatalf("%+v: chunk %d (lines %d-%d) holds frontmatter (lines 1-%d)", opt, i, c.StartLine, c.EndLine, fm)
		}
		if c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > len(lines) {
			t.Fatalf("%+v: chunk %d has lines %d-%d of %d", opt, i, c.StartLine, c.EndLine, len(lines))
		}
		if i > 0 {
			p := chunks[i-1]
			if c.StartLine < p.StartLine || c.EndLine < p.EndLine {
				t.Fatalf("%+v: chunk %d (lines %d-%d) is before chunk %d (lines %d-%d)", opt, i, c.StartLine, c.EndLine, i-1, p.StartLine, p.EndLine)
			}
		}
		for l := c.StartLine + 1; l <= c.EndLine; l++ {
			if levels[l-1] == 1 || levels[l-1] == 2 {
				t.Fatalf("%+v: chunk %d (lines %d-%d) crosses the heading on line %d", opt, i, c.StartLine, c.EndLine, l)
			}
		}
		want := ""
		for l := c.StartLine; l > fm; l-- {
			if levels[l-1] > 0 {
				want = strings.TrimSpace(lines[l-1])
				break
			}
		}
		if c.Heading != want {
			t.Fatalf("%+v: chunk %d (lines %d-%d) has heading %q, want %q", opt, i, c.StartLine, c.EndLine, c.Heading, want)
		}
		if strings.TrimSpace(c.Text) == "" {
			t.Fatalf("%+v: chunk %d (lines %d-%d) is blank: %q", opt, i, c.StartLine, c.EndLine, c.Text)
		}
		if utf8.ValidString(page) && !utf8.ValidString(c.Text) {
			t.Fatalf("%+v: chunk %d of a valid UTF-8 page is not valid UTF-8: %q", opt, i, c.Text)
		}
		if tok := EstimateTokens(c.Text); tok > opt.MaxTokens+opt.MaxTokens/10 {
			t.Fatalf("%+v: chunk %d has ~%d tokens, over %d", opt, i, tok, opt.MaxTokens)
		}
		// Every word of the chunk comes from its lines (a piece of a cut
		// line is a substring of it). Only for valid UTF-8: the indexer
		// makes a page valid before it chunks it, and the overlap's tail
		// turns each invalid byte into U+FFFD.
		if span := strings.Join(lines[c.StartLine-1:c.EndLine], " "); len(span) <= 4<<10 && utf8.ValidString(page) {
			for _, w := range strings.Fields(c.Text) {
				if !strings.Contains(span, w) {
					t.Fatalf("%+v: chunk %d has %q, which is not on its lines %d-%d", opt, i, w, c.StartLine, c.EndLine)
				}
			}
		}
		for _, tl := range strings.Split(c.Text, "\n") {
			for l := c.StartLine; l <= c.EndLine; l++ {
				if !whole[l] && lines[l-1] == tl {
					whole[l] = true
					break
				}
			}
		}
		for l := c.StartLine; l <= c.EndLine; l++ {
			covered[l] = true
		}
	}
	for n, l := range lines {
		if strings.TrimSpace(l) == "" || n < fm {
			continue // blank, or frontmatter: metadata, never chunked
		}
		if !covered[n+1] {
			t.Fatalf("%+v: line %d %q is in no chunk", opt, n+1, l)
		}
		// A line short enough to be one unit is never cut or altered.
		if EstimateTokens(l) <= opt.MaxTokens && !whole[n+1] {
			t.Fatalf("%+v: line %d %q is in no chunk whole", opt, n+1, l)
		}
	}
}

// FuzzEstimateTokens checks the estimate's bounds: between a quarter of
// the runes and one a rune, and additive up to rounding, so estimating a
// chunk piece by piece never drifts far from estimating it whole.
func FuzzEstimateTokens(f *testing.F) {
	for _, s := range []string{"", "a", "abcd", "abcde", "会议", "会议 notes", "🙂", "\xff\xfe", "한국어", strings.Repeat("x", 1601)} {
		f.Add(s, "tail")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		n, runes := EstimateTokens(a), utf8.RuneCountInString(a)
		if n < (runes+3)/4 || n > runes {
			t.Fatalf("EstimateTokens(%q) = %d, outside [%d, %d]", a, n, (runes+3)/4, runes)
		}
		ab, sum := EstimateTokens(a+b), n+EstimateTokens(b)
		// Concatenation can join two broken UTF-8 halves into one rune,
		// which changes the rune count; the bound holds for valid text.
		if utf8.ValidString(a) && utf8.ValidString(b) && (ab > sum || ab < sum-1) {
			t.Fatalf("EstimateTokens(a+b) = %d, a and b apart %d: a=%q b=%q", ab, sum, a, b)
		}
	})
}
