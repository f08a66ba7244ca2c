package secrets

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/memhost/memhost/host/markdown"
	"go.yaml.in/yaml/v3"
)

// frontmatter returns the byte span of the YAML between a page's
// frontmatter lines, as host/markdown reads it (markdown.FrontmatterLines).
// ok is false when the page has none.
func frontmatter(text string) (start, end int, ok bool) {
	start, end, _, ok = markdown.FrontmatterSpan(text)
	return start, end, ok
}

// quoteFrontmatter rewrites the edits that fall in an unquoted (plain)
// scalar of the page's YAML frontmatter into one edit that double-quotes
// the whole scalar: a marker dropped into a plain scalar would turn the
// value into a flow sequence (when it is all of the value) or break the
// YAML (its ": " cannot stand in a plain scalar). Edits elsewhere are
// kept as they are. edits are sorted and do not overlap; so is the
// result.
func quoteFrontmatter(text string, edits []edit) []edit {
	fmStart, fmEnd, ok := frontmatter(text)
	if !ok {
		return edits
	}
	touched := false
	for _, e := range edits {
		if e.start < fmEnd && e.end > fmStart {
			touched = true
			break
		}
	}
	if !touched {
		return edits
	}
	src := text[fmStart:fmEnd]
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return edits
	}
	lines := yamlLineStarts(src)
	var spans [][2]int
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && n.Style&(yaml.TaggedStyle|yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
			if a, b, ok := plainSpan(src, lines, n); ok {
				spans = append(spans, [2]int{fmStart + a, fmStart + b})
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })

	var out []edit
	i := 0
	for _, sp := range spans {
		for i < len(edits) && edits[i].end <= sp[0] {
			out = append(out, edits[i])
			i++
		}
		j := i
		for j < len(edits) && edits[j].start >= sp[0] && edits[j].end <= sp[1] {
			j++
		}
		// Quote only when the scalar holds edits and no edit straddles
		// its ends.
		if j == i || (j < len(edits) && edits[j].start < sp[1]) {
			continue
		}
		inner := make([]edit, j-i)
		for k, e := range edits[i:j] {
			inner[k] = edit{e.start - sp[0], e.end - sp[0], e.repl}
		}
		value := apply(text[sp[0]:sp[1]], inner)
		out = append(out, edit{sp[0], sp[1], `"` + doubleQuoteEscaper.Replace(value) + `"`})
		i = j
	}
	return append(out, edits[i:]...)
}

var doubleQuoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// plainSpan returns the byte span in src of the plain scalar n: it starts
// at n's line and column (yaml.v3 counts columns in characters) and ends
// after the last of its words. ok is false when src does not hold n's
// value there (a tag or anchor before the value, say).
func plainSpan(src string, lines []int, n *yaml.Node) (start, end int, ok bool) {
	if n.Line < 1 || n.Line > len(lines) || n.Column < 1 || n.Value == "" {
		return 0, 0, false
	}
	at := lines[n.Line-1]
	for c := 1; c < n.Column; c++ {
		if at >= len(src) {
			return 0, 0, false
		}
		_, size := utf8.DecodeRuneInString(src[at:])
		at += size
	}
	start, end = at, at
	// A plain scalar's value is its words, each line's blanks trimmed and
	// line breaks folded: match the words and skip the blanks between.
	words := strings.FieldsFunc(n.Value, isYAMLSpace)
	for k, w := range words {
		if k > 0 {
			for end < len(src) && isYAMLSpace(rune(src[end])) {
				end++
			}
		}
		if !strings.HasPrefix(src[end:], w) {
			return 0, 0, false
		}
		end += len(w)
	}
	return start, end, len(words) > 0
}

func isYAMLSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r'
}

// yamlLineStarts returns the byte offset of each line of src as yaml.v3
// counts lines: "\r\n", "\r", "\n", NEL, LS and PS each end one.
func yamlLineStarts(src string) []int {
	starts := []int{0}
	for i := 0; i < len(src); {
		switch {
		case src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
		case src[i] == '\r' || src[i] == '\n':
			i++
		case strings.HasPrefix(src[i:], "\u0085"), strings.HasPrefix(src[i:], "\u2028"), strings.HasPrefix(src[i:], "\u2029"):
			_, size := utf8.DecodeRuneInString(src[i:])
			i += size
		default:
			i++
			continue
		}
		starts = append(starts, i)
	}
	return starts
}
