package dashboard

import (
	"html/template"
	"regexp"
	"strings"
)

// A snippet is a page's text flattened to a line, so the page view's
// markdown does not run on it; what Obsidian draws as metadata is drawn
// here the way the page view draws it (pagehtml's fields.go).
var (
	// snippetField is a Dataview inline field, [key:: value] or
	// (key:: value) (groups 1-2 and 3-4), or the line form key:: value
	// after white space (group 5 the white space, 6 the key), whose key
	// is one word here: a flattened snippet has no line starts to tell
	// "team lead:: yes" from prose.
	snippetField = regexp.MustCompile(`\[([\p{L}\p{N}][\p{L}\p{N} _-]*?)::[ \t]*([^\[\]]*?)\]|\(([\p{L}\p{N}][\p{L}\p{N} _-]*?)::[ \t]*([^()]*?)\)|(^|\s)([\p{L}\p{N}][\p{L}\p{N}_-]*)::[ \t]+`)
	// snippetBlockID is an Obsidian block id (^f7e1b22) after white space,
	// which the page view hides; a snippet cut inside one ends in "…".
	snippetBlockID = regexp.MustCompile(`(^|\s)\^[A-Za-z0-9-]+(…|\s|$)`)
)

// snippetHTML is a result's snippet as HTML: escaped, the words of terms
// marked (mark), Dataview fields as key labels and values, block ids
// left out.
func snippetHTML(snippet string, terms []string) template.HTML {
	snippet = snippetBlockID.ReplaceAllStringFunc(snippet, func(m string) string {
		sub := snippetBlockID.FindStringSubmatch(m)
		lead, trail := sub[1], sub[2]
		switch {
		case trail == "…":
			return lead + "…"
		case lead != "":
			return lead
		}
		return trail
	})
	var b strings.Builder
	at := 0
	for _, m := range snippetField.FindAllStringSubmatchIndex(snippet, -1) {
		b.WriteString(string(mark(snippet[at:m[0]], terms)))
		at = m[1]
		group := func(i int) string { return snippet[m[2*i]:m[2*i+1]] }
		switch {
		case m[2] >= 0:
			writeField(&b, group(1), group(2), terms)
		case m[6] >= 0:
			writeField(&b, group(3), group(4), terms)
		default:
			b.WriteString(group(5))
			b.WriteString(`<span class="field-key">` + template.HTMLEscapeString(group(6)) + `</span> `)
		}
	}
	b.WriteString(string(mark(snippet[at:], terms)))
	return template.HTML(b.String())
}

// writeField writes an inline field as the page view draws it.
func writeField(b *strings.Builder, key, value string, terms []string) {
	b.WriteString(`<span class="field"><span class="field-key">` + template.HTMLEscapeString(strings.TrimSpace(key)) +
		`</span> <span class="field-value">` + string(mark(strings.TrimSpace(value), terms)) + `</span></span>`)
}
