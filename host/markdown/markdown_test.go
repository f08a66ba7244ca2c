package markdown

import "testing"

func TestHeadingText(t *testing.T) {
	tests := []struct{ line, want string }{
		{"## Sarah Chen", "Sarah Chen"},
		{"## Sarah Chen ##", "Sarah Chen"},
		{"# Title ###   ", "Title"},
		{"  Groceries  ", "Groceries"},
		{"## C#", "C#"},
		{"### F# notes", "F# notes"},
		{"# foo#", "foo#"},
		{"## a# #", "a#"},
		{"## ## x", "## x"},
		{"###", ""},
		{"### ###", ""},
		{"##\tx\t#", "x"},
	}
	for _, tt := range tests {
		if got := HeadingText(tt.line); got != tt.want {
			t.Errorf("HeadingText(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestOpenFence(t *testing.T) {
	tests := []struct{ text, want string }{
		{"", ""},
		{"# T\n```\ncode\n```\n", ""},
		{"# T\n```\nunclosed\n", "```"},
		{"  ````go\n```\n", "````"}, // a shorter fence does not close it
		{"  ````go\n```\n `````\n", ""},
		{"```\n~~~\n``` x\n", "```"}, // nor does one with an info string
		{"  ````go\n", "````"},
		{"~~~\n## x\n", "~~~"},
		{"    ```\nindented code, not a fence\n", ""},
		{"```\n~~~\n", "```"},
	}
	for _, tt := range tests {
		lines := Lines(tt.text)
		got := OpenFence(lines)
		if got != tt.want {
			t.Errorf("OpenFence(%q) = %q, want %q", tt.text, got, tt.want)
		}
		// Closed with what it returns, the block ends: a heading after it
		// is a heading.
		probe := append(append(lines, got), "## probe")
		if got == "" {
			probe = append(lines, "## probe")
		}
		if l := HeadingLevels(probe)[len(probe)-1]; l != 2 {
			t.Errorf("%q closed with %q: the heading after it is level %d", tt.text, got, l)
		}
	}
}

func TestHeading(t *testing.T) {
	tests := []struct{ text, want string }{
		{"Groceries", "## Groceries"},
		{"C#", "## C#"},
		{"C #", "## C # #"},
		{"#", "## # #"},
		{"##", "## ## #"},
		{"a\t#", "## a\t# #"},
	}
	for _, tt := range tests {
		got := Heading(2, tt.text)
		if got != tt.want || HeadingText(got) != tt.text {
			t.Errorf("Heading(2, %q) = %q, reading back as %q; want %q", tt.text, got, HeadingText(got), tt.want)
		}
	}
}
