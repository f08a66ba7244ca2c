// Package markdown holds the little markdown reading that the chunker and the
// section editor share: lines, and which lines are ATX headings outside
// fenced code blocks.
package markdown

import "strings"

// Lines splits text on \n, dropping a \r before it and the empty string
// after a final newline.
func Lines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// HeadingLevels returns, for each line, its ATX heading level (1-6) or 0.
// Lines inside fenced code blocks are never headings.
func HeadingLevels(lines []string) []int {
	levels, _ := scan(lines)
	return levels
}

// OpenFence returns the fence that opens a code block lines leave open,
// as it was written ("```", "~~~~"), or "" when every fence is closed. A
// line of it closes the block: a heading added after lines that leave a
// fence open is code unless the fence is closed first.
func OpenFence(lines []string) string {
	_, open := scan(lines)
	return open
}

// scan returns each line's heading level and the fence left open at the
// end, as OpenFence returns it.
func scan(lines []string) (levels []int, open string) {
	levels = make([]int, len(lines))
	fence := ""
	for i, l := range lines {
		if fence != "" {
			if strings.HasPrefix(strings.TrimLeft(l, " "), fence) {
				fence, open = "", ""
			}
			continue
		}
		if f := fenceMarker(l); f != "" {
			fence = f
			t := strings.TrimLeft(l, " ")
			open = t[:len(t)-len(strings.TrimLeft(t, f[:1]))]
			continue
		}
		levels[i] = headingLevel(l)
	}
	return levels, open
}

// HeadingText returns a heading line's text without its #s: "## Sarah Chen"
// gives "Sarah Chen", and so does "## Sarah Chen ##".
func HeadingText(line string) string {
	t := strings.TrimSpace(line)
	t = strings.TrimLeft(t, "#")
	t = strings.TrimSpace(t)
	// Closing #s are optional, and are closing #s only after white space
	// (CommonMark): "## C#" is about C#, and a section the editor names
	// "## C#" must be found again as "C#".
	if u := strings.TrimRight(t, "#"); u == "" || strings.HasSuffix(u, " ") || strings.HasSuffix(u, "\t") {
		t = strings.TrimSpace(u)
	}
	return t
}

// Heading returns a heading line of the given level (1-6) whose
// HeadingText is text, a heading's text as HeadingText gives it (trimmed,
// one line). Text that ends in what reads as closing #s ("C #", "#") gets
// a closing # of its own: "## C # #" reads back as "C #".
func Heading(level int, text string) string {
	line := strings.Repeat("#", level) + " " + text
	if HeadingText(line) != text {
		line += " #"
	}
	return line
}

// SetextLevels returns, for each line, the level (1 or 2) of the setext
// heading it is the text of, or 0: a paragraph's line followed by a line
// of only = (an H1) or only - (an H2), outside fenced code, as CommonMark
// and every renderer read it. The section editor and the chunker go by
// ATX headings only; this is for refusing text that other readers of a
// page would see as a heading.
func SetextLevels(lines []string) []int {
	levels := make([]int, len(lines))
	atx, _ := scan(lines)
	inFence := fenced(lines)
	for i := 1; i < len(lines); i++ {
		if inFence[i] || inFence[i-1] || atx[i-1] != 0 || !paragraphLine(lines[i-1]) {
			continue
		}
		u := strings.TrimLeft(lines[i], " ")
		if len(lines[i])-len(u) > 3 {
			continue
		}
		u = strings.TrimRight(u, " \t")
		switch {
		case u != "" && strings.Trim(u, "=") == "":
			levels[i-1] = 1
		case u != "" && strings.Trim(u, "-") == "":
			levels[i-1] = 2
		}
	}
	return levels
}

// fenced is, for each line, whether it is a fence or inside a fenced block.
func fenced(lines []string) []bool {
	in := make([]bool, len(lines))
	fence := ""
	for i, l := range lines {
		if fence != "" {
			in[i] = true
			if strings.HasPrefix(strings.TrimLeft(l, " "), fence) {
				fence = ""
			}
			continue
		}
		if f := fenceMarker(l); f != "" {
			fence, in[i] = f, true
		}
	}
	return in
}

// paragraphLine is whether l can be a paragraph's line: not blank, not
// indented code, not a list item, quote, table row or thematic break.
func paragraphLine(l string) bool {
	t := strings.TrimLeft(l, " ")
	if strings.TrimSpace(t) == "" || len(l)-len(t) > 3 {
		return false
	}
	if strings.HasPrefix(t, ">") || strings.HasPrefix(t, "|") {
		return false
	}
	if len(t) > 1 && strings.ContainsRune("-*+", rune(t[0])) && (t[1] == ' ' || t[1] == '\t') {
		return false
	}
	if d := strings.TrimLeft(t, "0123456789"); len(d) < len(t) && len(t)-len(d) <= 9 && len(d) > 1 && (d[0] == '.' || d[0] == ')') && (d[1] == ' ' || d[1] == '\t') {
		return false
	}
	if r := strings.ReplaceAll(strings.ReplaceAll(t, " ", ""), "\t", ""); len(r) >= 3 && (strings.Trim(r, "-") == "" || strings.Trim(r, "*") == "" || strings.Trim(r, "_") == "") {
		return false
	}
	return true
}

func headingLevel(l string) int {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return 0 // indented code
	}
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 {
		return 0
	}
	if n < len(t) && t[n] != ' ' && t[n] != '\t' {
		return 0 // "#hashtag"
	}
	return n
}

func fenceMarker(l string) string {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return ""
	}
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, f) {
			return f
		}
	}
	return ""
}
