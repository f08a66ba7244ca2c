package search

import (
	"slices"
	"strings"
	"unicode"
)

// snippetWordBack is how far back (in characters) Snippet looks for the
// start of a word to begin at; past it, in text without spaces (Chinese,
// Japanese, a long URL), it begins mid-word instead of at the text's start.
const snippetWordBack = 20

// Snippet returns about n characters of text around the first place a query
// term appears (the start of the text when none does), on one line, with
// "…" where it was cut.
func Snippet(text string, terms []string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	runes := []rune(text)
	if len(runes) <= n {
		return text
	}
	// Lower-cased a character at a time, so that a place in it is the same
	// place in runes (strings.ToLower may change a character's length).
	lower := make([]rune, len(runes))
	for i, r := range runes {
		lower[i] = unicode.ToLower(r)
	}
	at := -1
	for _, t := range terms {
		term := []rune(t)
		for i, r := range term {
			term[i] = unicode.ToLower(r)
		}
		// Match a stem-like prefix so "meetings" finds "meeting".
		if len(term) > 5 {
			term = term[:max(5, len(term)-3)]
		}
		if i := runeIndex(lower, term); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	start := 0
	if at > 0 {
		start = max(0, at-n/4)
		// Start at a word boundary, if one is near.
		for back := start; back > 0 && start-back < snippetWordBack; back-- {
			if unicode.IsSpace(runes[back-1]) {
				start = back
				break
			}
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

// runeIndex is the index of the first sub in s, -1 when there is none.
func runeIndex(s, sub []rune) int {
	if len(sub) == 0 {
		return -1
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i] == sub[0] && slices.Equal(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}
