package notebook

import (
	"strings"
	"unicode/utf8"

	"github.com/memhost/memhost/fault"
)

// ErrEmptyText means a text to write holds nothing but white space.
var ErrEmptyText error = &fault.Error{Kind: fault.BadInput, Field: "text", Message: "the text is empty"}

// CleanText refuses empty text and normalises line endings.
func CleanText(s string) (string, error) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if strings.TrimSpace(s) == "" {
		return "", ErrEmptyText
	}
	if !utf8.ValidString(s) {
		return "", fault.BadInputf("text", "text is not valid UTF-8")
	}
	if strings.ContainsRune(s, 0) {
		return "", fault.BadInputf("text", "text contains a NUL byte")
	}
	return strings.TrimLeft(strings.TrimRight(s, " \t\n"), "\n"), nil
}

// Shorten cuts s to n characters with an ellipsis, for a heading or a
// message that quotes a text.
func Shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
