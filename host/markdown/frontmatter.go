package markdown

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Frontmatter is a page's leading YAML block, as Obsidian reads it: the
// page's first line is "---" and the block ends at the next "---" line
// (FrontmatterLines). Its lines are metadata, never body text: not
// chunked, not headings, not searched as words.
type Frontmatter struct {
	// Lines is how many lines the block takes, both "---" lines included:
	// the body starts at line Lines+1. 0 means the page has none.
	Lines int `json:"lines"`
	// Title is the "title" key ("" when missing).
	Title string `json:"title,omitempty"`
	// Aliases are the "aliases" (or "alias") key: a list, or one string
	// whose commas separate names.
	Aliases []string `json:"aliases,omitempty"`
	// Tags are the "tags" (or "tag") key, without a leading '#',
	// lowercased as Obsidian compares them: a list, or one string whose
	// commas or spaces separate tags.
	Tags []string `json:"tags,omitempty"`
	// Dates are the keys whose values are YAML timestamps (date: 2026-11-20,
	// created: 2026-11-20T10:00:00Z), as written: YYYY-MM-DD for a date
	// alone, RFC 3339 otherwise.
	Dates map[string]string `json:"dates,omitempty"`
	// Fields holds every key with its decoded value; Keys their order in
	// the block.
	Fields map[string]any `json:"fields,omitempty"`
	Keys   []string       `json:"keys,omitempty"`
}

// FrontmatterLines returns how many of lines the page's frontmatter takes
// (see Frontmatter.Lines): from a "---" first line through the next "---"
// line, or 0 when there is none or it is never closed. Trailing blanks
// after a "---" are allowed, and lines may keep their line endings. A
// "..." line, which ends a YAML document and closes frontmatter for Jekyll
// and Pandoc, does not close it here: Obsidian, goldmark-meta and Hugo read
// on to the next "---", and the notebook is read as Obsidian reads it.
// Every reader of frontmatter in memhost goes by this function or by
// FrontmatterSpan, which reads bytes by the same rule.
func FrontmatterLines(lines []string) int {
	if len(lines) == 0 || !frontmatterDelimiter(lines[0]) {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		if frontmatterDelimiter(lines[i]) {
			return i + 1
		}
	}
	return 0
}

func frontmatterDelimiter(line string) bool {
	return strings.TrimRight(line, " \t\r\n") == "---"
}

// FrontmatterSpan returns where a page's frontmatter is in its bytes, as
// FrontmatterLines reads it: the YAML between the "---" lines is
// page[yamlStart:yamlEnd], and the body starts at bodyStart, after the
// closing line's line ending. ok is false, and the offsets 0, when the
// page has none. It reads no further than the closing line.
func FrontmatterSpan(page string) (yamlStart, yamlEnd, bodyStart int, ok bool) {
	for at, i := 0, 0; at < len(page); i++ {
		line, next := page[at:], len(page)
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line, next = line[:j], at+j+1
		}
		switch {
		case !frontmatterDelimiter(line):
			if i == 0 {
				return 0, 0, 0, false
			}
		case i == 0:
			yamlStart = next
		default:
			return yamlStart, at, next, true
		}
		at = next
	}
	return 0, 0, 0, false
}

// SplitFrontmatter splits a page into its frontmatter block (with both
// "---" lines and the line ending after the second, exactly as written) and
// the rest. A page without frontmatter gives "" and the page.
func SplitFrontmatter(page string) (front, body string) {
	_, _, at, _ := FrontmatterSpan(page)
	return page[:at], page[at:]
}

// ParseFrontmatter reads the frontmatter of a page. A page without one
// gives the zero Frontmatter and no error. YAML that does not parse, or is
// not a mapping, gives an error naming the problem; Lines is set all the
// same, since the block is still no body text.
func ParseFrontmatter(page string) (Frontmatter, error) {
	lines := Lines(page)
	fm := Frontmatter{Lines: FrontmatterLines(lines)}
	if fm.Lines == 0 {
		return fm, nil
	}
	src := strings.Join(lines[1:fm.Lines-1], "\n")
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return fm, fmt.Errorf("frontmatter: %w", err)
	}
	if len(doc.Content) == 0 {
		return fm, nil // an empty block
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fm, fmt.Errorf("frontmatter (line 2): not a mapping of keys to values")
	}
	fm.Fields = map[string]any{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		var val any
		if err := v.Decode(&val); err != nil {
			return fm, fmt.Errorf("frontmatter (line %d): key %q: %w", v.Line+1, k.Value, err)
		}
		if _, dup := fm.Fields[k.Value]; !dup {
			fm.Keys = append(fm.Keys, k.Value)
		}
		fm.Fields[k.Value] = val
		switch strings.ToLower(k.Value) {
		case "title":
			if s, ok := val.(string); ok {
				fm.Title = strings.TrimSpace(s)
			}
		case "aliases", "alias":
			fm.Aliases = appendUnique(fm.Aliases, stringList(val, ",")...)
		case "tags", "tag":
			for _, t := range stringList(val, ", ") {
				if t = NormalizeTag(t); t != "" {
					fm.Tags = appendUnique(fm.Tags, t)
				}
			}
		}
		if t, ok := val.(time.Time); ok {
			if fm.Dates == nil {
				fm.Dates = map[string]string{}
			}
			if t.Equal(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)) {
				fm.Dates[k.Value] = t.Format(time.DateOnly)
			} else {
				fm.Dates[k.Value] = t.Format(time.RFC3339)
			}
		}
	}
	return fm, nil
}

// NormalizeTag returns a tag as memhost stores and compares it: without
// its leading '#', trimmed, lowercased (Obsidian's tags are
// case-insensitive). "" when nothing is left.
func NormalizeTag(t string) string {
	return strings.ToLower(strings.Trim(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "#")), "/"))
}

// stringList reads a YAML value that is a list of strings or one string
// of items separated by any of seps.
func stringList(v any, seps string) []string {
	var out []string
	switch v := v.(type) {
	case string:
		for _, s := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	case []any:
		for _, e := range v {
			if e == nil {
				continue
			}
			if s := strings.TrimSpace(fmt.Sprint(e)); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func appendUnique(list []string, items ...string) []string {
	for _, s := range items {
		dup := false
		for _, have := range list {
			if have == s {
				dup = true
				break
			}
		}
		if !dup {
			list = append(list, s)
		}
	}
	return list
}
