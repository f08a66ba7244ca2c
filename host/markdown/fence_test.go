package markdown

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// goldmarkHeadings lists the ATX headings goldmark's CommonMark parser
// finds in src, as "line:level text" (line 0 for an empty heading, which
// has no text to place it by).
func goldmarkHeadings(src string) []string {
	b := []byte(src)
	doc := goldmark.New().Parser().Parse(text.NewReader(b))
	var out []string
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !ok || !entering {
			return ast.WalkContinue, nil
		}
		line, txt := 0, ""
		if h.Lines().Len() > 0 {
			seg := h.Lines().At(0)
			lineStart := strings.LastIndexByte(src[:seg.Start], '\n') + 1
			if !strings.HasPrefix(strings.TrimLeft(src[lineStart:seg.Start], " "), "#") {
				return ast.WalkContinue, nil // a setext heading
			}
			line, txt = 1+strings.Count(src[:seg.Start], "\n"), string(seg.Value(b))
		}
		out = append(out, fmt.Sprintf("%d:h%d %s", line, h.Level, txt))
		return ast.WalkContinue, nil
	})
	return out
}

// ourHeadings lists the headings HeadingLevels finds in src, as
// goldmarkHeadings does.
func ourHeadings(src string) []string {
	lines := Lines(src)
	var out []string
	for i, level := range HeadingLevels(lines) {
		if level == 0 {
			continue
		}
		line, txt := i+1, HeadingText(lines[i])
		if txt == "" {
			line = 0
		}
		out = append(out, fmt.Sprintf("%d:h%d %s", line, level, txt))
	}
	return out
}

// TestHeadingsAsGoldmark: the headings HeadingLevels sees are those
// goldmark sees, fenced code blocks being CommonMark's: closed only by a
// fence of the same character at least as long, with nothing after it.
// Lists and quotes, which this package does not read, are left out.
func TestHeadingsAsGoldmark(t *testing.T) {
	for _, doc := range []string{
		"````\n```\n## inside\n```\n````\n## after",
		"```\n## in\n~~~\n## still in\n```\n## out",
		"~~~~\n~~~\n## in\n~~~~~\n## out",
		"`````\n````\n## in\n`````\n## out",
		"```\n## in\n``` x\n## still in\n```\n## out",
		"```\n## in\n```   \n## out",
		"   ```\n## in\n   ```\n## out",
		"  ````\n## in\n ```\n## still in\n````\n## out",
		"    ```\n## indented code is no fence",
		"```\n## in\n    ```\n## still in",
		"``` `x`\n## a backtick in the info string: no fence",
		"~~~ `x`\n## in",
		"``\n## two backticks are no fence",
		"```\n## never closed\n# to the end",
		"para\n```\n## in\n```\n## out",
		"```go\n```\n## out",
		"#\n## \n### ###\n#no\n####### seven\n## b ##\n   ### c",
	} {
		got, want := ourHeadings(doc), goldmarkHeadings(doc)
		if !slices.Equal(got, want) {
			t.Errorf("%q: headings %q, goldmark's %q", doc, got, want)
		}
	}
}

// fenceVocabulary are the lines FuzzHeadingsAsGoldmark builds pages
// of: fences of both kinds and several lengths, indented (by spaces or a
// tab) or not, with and without info strings, headings, text and blank
// lines. None starts a
// list, quote, HTML block or setext underline, which this package does
// not read.
var fenceVocabulary = []string{
	"```", "````", "`````", "```go", "```` md", "``` `x`", "```  ", "   ```", "    ```",
	"~~~", "~~~~", "~~~ ```", " ~~~~~", "~~~ x", "``", "~~",
	"# a", "## b", "   ### c", "    # d", "#e", "## f ##", "#", "###### g", "####### h",
	"text", "", "\t```", "```\t", " \t~~~", "##\tb",
}

// FuzzHeadingsAsGoldmark compares HeadingLevels with goldmark on pages
// made of fenceVocabulary's lines, one byte of the input choosing each.
func FuzzHeadingsAsGoldmark(f *testing.F) {
	for _, seed := range [][]byte{
		{1, 0, 17, 0, 1, 17},
		{0, 9, 16, 0, 17},
		{10, 9, 16, 13, 17},
		{3, 16, 5, 17, 7, 18, 8, 19},
		{12, 16, 11, 17, 14, 18},
		{25, 0, 16, 0, 17},
		{2, 1, 0, 16, 2, 17},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, choice []byte) {
		if len(choice) > 64 {
			return
		}
		lines := make([]string, len(choice))
		for i, c := range choice {
			lines[i] = fenceVocabulary[int(c)%len(fenceVocabulary)]
		}
		doc := strings.Join(lines, "\n")
		if got, want := ourHeadings(doc), goldmarkHeadings(doc); !slices.Equal(got, want) {
			t.Fatalf("%q: headings %q, goldmark's %q", doc, got, want)
		}
	})
}
