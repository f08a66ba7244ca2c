package notebook

import (
	"path"
	"regexp"
	"strings"
	"unicode"
)

// Categories of the notebook that remember writes to.
const (
	Lists     = "lists"
	Reference = "reference"
	Knowledge = "knowledge"
)

// StripListMarker drops a leading list marker ("- ", "1. ", "- [ ] ").
func StripListMarker(s string) string { return listMarker.ReplaceAllString(s, "") }

// Title makes a page title from its file name: "standing-orders.md" gives
// "Standing Orders".
func Title(rel string) string {
	name := strings.TrimSuffix(path.Base(rel), path.Ext(rel))
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == ' ' })
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	if len(words) == 0 {
		return name
	}
	return strings.Join(words, " ")
}

// normEntry normalises text for duplicate detection: list markers and
// checkboxes dropped, whitespace collapsed, lowercased.
func normEntry(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		l = listMarker.ReplaceAllString(l, "")
		if l != "" {
			lines = append(lines, l)
		}
	}
	return strings.ToLower(strings.Join(strings.Fields(strings.Join(lines, " ")), " "))
}

var listMarker = regexp.MustCompile(`^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?`)

// FindEntry looks for entry on the page as one line or one paragraph and
// returns its lines.
func FindEntry(page, entry string) (start, end int, ok bool) {
	want := normEntry(entry)
	if want == "" {
		return 0, 0, false
	}
	lines := strings.Split(page, "\n")
	paraStart := -1
	for i := 0; i <= len(lines); i++ {
		if i < len(lines) {
			if normEntry(lines[i]) == want {
				return i + 1, i + 1, true
			}
		}
		blank := i == len(lines) || strings.TrimSpace(lines[i]) == ""
		if blank {
			if paraStart >= 0 && normEntry(strings.Join(lines[paraStart:i], "\n")) == want {
				return paraStart + 1, i, true
			}
			paraStart = -1
		} else if paraStart < 0 {
			paraStart = i
		}
	}
	return 0, 0, false
}
