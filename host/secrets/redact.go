package secrets

import (
	"strings"
)

// edit replaces text[start:end] by repl.
type edit struct {
	start, end int
	repl       string
}

// Redact returns text with each secret replaced by its Marker, and the
// findings, whose offsets point into text (not into the result).
//
// It is idempotent and retry-safe: redacting the result finds nothing
// and changes nothing, and redacting the same text twice gives the same
// bytes. It keeps the text's structure:
//   - a secret that spans lines (a PEM private key) becomes one marker
//     on one line, so the result may have fewer lines than text;
//   - headings, [[wikilinks]] and other markup around a secret are left
//     as they are;
//   - when text is the content of a JSON or YAML double-quoted string,
//     the result is too: the marker needs no escaping, and a replaced
//     span never splits a backslash escape (it grows to take the whole
//     escape);
//   - in YAML frontmatter (a first line "---" through the next "---"
//     line, as host/markdown reads it) a secret in an unquoted scalar
//     turns that scalar into a double-quoted one, since the marker's
//     "[" and ": " would otherwise make it a list or a syntax error.
//     When the frontmatter did not parse before, it is redacted as
//     plain text.
func (s *Scanner) Redact(text string) (string, []Finding) {
	fs := s.Scan(text)
	if len(fs) == 0 {
		return text, nil
	}
	edits := make([]edit, len(fs))
	for i, f := range fs {
		start, end := wholeEscapes(text, f.Start, f.End)
		edits[i] = edit{start, end, Marker(f)}
	}
	edits = nonOverlapping(edits)
	edits = quoteFrontmatter(text, edits)
	return apply(text, edits), fs
}

// apply applies sorted, non-overlapping edits to text.
func apply(text string, edits []edit) string {
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, e := range edits {
		b.WriteString(text[at:e.start])
		b.WriteString(e.repl)
		at = e.end
	}
	b.WriteString(text[at:])
	return b.String()
}

// nonOverlapping joins edits that grew into each other (two secrets one
// escape apart), keeping both markers.
func nonOverlapping(edits []edit) []edit {
	out := edits[:1]
	for _, e := range edits[1:] {
		last := &out[len(out)-1]
		if e.start < last.end {
			last.end = max(last.end, e.end)
			last.repl += " " + e.repl
			continue
		}
		out = append(out, e)
	}
	return out
}

// wholeEscapes widens the span [start, end) of text so that it never
// splits a backslash escape: when the byte before start is an escaping
// backslash, it is taken in; when the span ends on an escaping
// backslash, the escaped byte (and the four hex digits of a \u escape)
// are taken in. Removing the span then leaves every escape of a JSON or
// YAML double-quoted string whole. Outside such strings the widening
// only ever takes a backslash or one byte more.
func wholeEscapes(text string, start, end int) (int, int) {
	if start > 0 && oddBackslashesBefore(text, start) {
		start--
	}
	if end < len(text) && oddBackslashesBefore(text, end) {
		end++
		if text[end-1] == 'u' {
			for n := 0; n < 4 && end < len(text) && isHex(text[end]); n++ {
				end++
			}
		}
	}
	return start, end
}

// oddBackslashesBefore reports whether the run of backslashes that ends
// just before i is odd, so that text[i] is escaped.
func oddBackslashesBefore(text string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && text[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
