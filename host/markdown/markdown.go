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
	levels, _, _ := scan(lines)
	return levels
}

// Fenced returns, for each line, whether it is a fence or inside a fenced
// code block, as CommonMark reads them: a block opens at three or more
// backticks or tildes (a backtick fence's info string holds no backtick),
// and only a run of the same character at least as long, with nothing but
// blanks after it, closes it; either fence may be indented up to three
// spaces. A block never closed runs to the end of the lines. A line may
// keep its line ending.
func Fenced(lines []string) []bool {
	_, in, _ := scan(lines)
	return in
}

// OpenFence returns the fence that opens a code block lines leave open,
// its run of backticks or tildes ("```", "~~~~"), or "" when every fence
// is closed. A line of it closes the block: a heading added after lines
// that leave a fence open is code unless the fence is closed first.
func OpenFence(lines []string) string {
	_, _, open := scan(lines)
	return open
}

// scan returns each line's heading level, whether it is a fence or fenced
// code (as Fenced), and the fence left open at the end (as OpenFence).
func scan(lines []string) (levels []int, fenced []bool, open string) {
	levels, fenced = make([]int, len(lines)), make([]bool, len(lines))
	var f fence
	for i, l := range lines {
		if f.n > 0 {
			fenced[i] = true
			if f.closedBy(l) {
				f = fence{}
			}
			continue
		}
		if f = openingFence(l); f.n > 0 {
			fenced[i] = true
			continue
		}
		levels[i] = headingLevel(l)
	}
	if f.n > 0 {
		open = strings.Repeat(string(f.char), f.n)
	}
	return levels, fenced, open
}

// fence is the fence that opened a code block: its character and how many
// of it.
type fence struct {
	char byte // '`' or '~'
	n    int  // 0: no block is open
}

// openingFence returns the fence l opens a code block with, or the zero
// fence.
func openingFence(l string) fence {
	t, ok := fenceIndent(l)
	if !ok || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return fence{}
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return fence{}
	}
	return fence{char: t[0], n: n}
}

// closedBy reports whether l closes the code block f opened.
func (f fence) closedBy(l string) bool {
	t, ok := fenceIndent(l)
	if !ok {
		return false
	}
	rest := strings.TrimLeft(t, string(f.char))
	return len(t)-len(rest) >= f.n && strings.Trim(rest, " \t\r\n") == ""
}

// fenceIndent returns l without its indentation, and false when that is
// more than three spaces (indented code).
func fenceIndent(l string) (string, bool) {
	t := strings.TrimLeft(l, " ")
	return t, len(l)-len(t) <= 3
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
	atx, inFence, _ := scan(lines)
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
