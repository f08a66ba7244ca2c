package markdown

import (
	"strings"
	"testing"
)

// FuzzHeadingText checks that a heading's text survives being written back
// as a heading: the section editor names a new section
// Heading(2, HeadingText(s)) and must find it by that name next time.
func FuzzHeadingText(f *testing.F) {
	for _, s := range []string{
		"Groceries", "## Groceries", "## Groceries ##", " groceries ", "# Title ###", "##",
		"## C#", "F#", "## ## x", "#hashtag", "Café ☕", "会议", "a \\#", "\t## x\t#\t",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsAny(s, "\r\n") {
			return // a heading is one line
		}
		name := HeadingText(s)
		if name != strings.TrimSpace(name) {
			t.Fatalf("HeadingText(%q) = %q, with white space around it", s, name)
		}
		// Heading adds a closing # to a name that is #s or ends in " #"
		// (from "## # #" or "## a # #"), which would read as closing #s.
		line := Heading(2, name)
		if got := HeadingLevels([]string{line})[0]; got != 2 {
			t.Fatalf("%q is a level %d heading, want 2", line, got)
		}
		if got := HeadingText(line); got != name {
			t.Fatalf("HeadingText(%q) = %q, but HeadingText(%q) = %q", s, name, line, got)
		}
	})
}
