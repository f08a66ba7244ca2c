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
