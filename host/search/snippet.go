package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Snippet returns about n characters of text around the first place a query
// term appears (the start of the text when none does), on one line, with
// "…" where it was cut.
func Snippet(text string, terms []string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	lower := strings.ToLower(text)
	at := -1
	for _, t := range terms {
		// Match a stem-like prefix so "meetings" finds "meeting".
		if r := []rune(t); len(r) > 5 {
			t = string(r[:max(5, len(r)-3)])
		}
		if i := strings.Index(lower, t); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	runes := []rune(text)
	start := 0
	if at > 0 {
		start = max(0, utf8.RuneCountInString(text[:min(at, len(text))])-n/4)
		// Start at a word boundary.
		for start > 0 && start < len(runes) && !unicode.IsSpace(runes[start-1]) {
			start--
		}
	}
	end := min(len(runes), start+n)
	if end == len(runes) {
		start = max(0, end-n)
	}
	out := strings.TrimSpace(string(runes[start:end]))
	if start > 0 {
		out = "…" + out
	}
	if end < len(runes) {
		out += "…"
	}
	return out
}
