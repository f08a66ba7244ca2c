package search

import (
	"strings"
	"testing"
)

// TestSnippetAroundTerm: the snippet is cut around the first place a
// query term appears, counted in the text's own characters, also when
// lower-casing changes a character's length in bytes (İ, 2 bytes, lowers
// to i̇, 3; the Kelvin sign, 3 bytes, to k, 1).
func TestSnippetAroundTerm(t *testing.T) {
	for _, lead := range []string{"a", "İ", "K"} {
		text := strings.Repeat(lead, 300) + " the meeting notes " + strings.Repeat("x ", 200)
		got := Snippet(text, []string{"meeting"}, 200)
		if !strings.Contains(got, "meeting") || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") {
			t.Errorf("%q: snippet %q does not show the term, cut at both ends", lead, got)
		}
	}
	// Text without spaces (Chinese) begins near the term, not at its start.
	cjk := strings.Repeat("中", 300) + "会议记录" + strings.Repeat("文", 300)
	if got := Snippet(cjk, []string{"会议"}, 100); !strings.Contains(got, "会议记录") {
		t.Errorf("Chinese: snippet %q does not show the term", got)
	}
	if got := Snippet("Short text about Meetings.", []string{"meetings"}, 200); got != "Short text about Meetings." {
		t.Errorf("short text: %q", got)
	}
}
