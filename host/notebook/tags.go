package notebook

import (
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Tags are a page's tags: the "tags" list of its YAML frontmatter, as
// Obsidian reads them.

var tagName = regexp.MustCompile(`^[\p{Ll}\p{Lo}\d][\p{Ll}\p{Lo}\d_/-]*$`)

// CleanTag turns a tag into the form pages keep: lower case, words joined
// by "-", no leading "#"; "" when nothing is left or it is not a tag.
func CleanTag(t string) string {
	t = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "#")))
	t = strings.Join(strings.Fields(t), "-")
	if len(t) > 40 || !tagName.MatchString(t) {
		return ""
	}
	return t
}

// PageTags returns the tags in a page's frontmatter (flow or block
// list, or one string), nil when it has none or its frontmatter is not
// YAML.
func PageTags(page string) []string {
	lines := strings.Split(page, "\n")
	n := frontmatterCR(lines)
	if n == 0 {
		return nil
	}
	var fm struct {
		Tags any `yaml:"tags"`
	}
	if yaml.Unmarshal([]byte(strings.ReplaceAll(strings.Join(lines[1:n-1], "\n"), "\r", "")), &fm) != nil {
		return nil
	}
	var out []string
	switch v := fm.Tags.(type) {
	case string:
		for _, t := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
			out = append(out, t)
		}
	case []any:
		for _, t := range v {
			if s, ok := t.(string); ok {
				out = append(out, s)
			}
		}
	}
	var clean []string
	for _, t := range out {
		if c := CleanTag(t); c != "" && !slices.Contains(clean, c) {
			clean = append(clean, c)
		}
	}
	return clean
}

// AddTags returns page with tags added to its frontmatter's tags, and
// whether it changed: a "tags: [...]" line is rewritten, a missing one
// added at the end of the frontmatter, and a page without frontmatter
// gets one. Tags in another form (a block list) are left alone, and
// nothing is added then: the page's own way of writing them wins.
func AddTags(page string, tags []string) (string, bool) {
	var add []string
	for _, t := range tags {
		if c := CleanTag(t); c != "" && !slices.Contains(add, c) {
			add = append(add, c)
		}
	}
	have := PageTags(page)
	var missing []string
	for _, t := range add {
		if !slices.Contains(have, t) {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return page, false
	}
	eol := lineEnding(page)
	lines := strings.Split(page, "\n")
	n := frontmatterCR(lines)
	if n == 0 {
		return "---" + eol + "tags: [" + strings.Join(missing, ", ") + "]" + eol + "---" + eol + page, true
	}
	all := strings.Join(append(have, missing...), ", ")
	for i := 1; i < n-1; i++ {
		l := strings.TrimRight(lines[i], "\r")
		if !strings.HasPrefix(l, "tags:") {
			continue
		}
		rest := strings.TrimSpace(strings.TrimPrefix(l, "tags:"))
		if rest != "" && !strings.HasPrefix(rest, "[") {
			if strings.Contains(rest, ",") || !strings.ContainsAny(rest, "\"'") {
				lines[i] = "tags: [" + all + "]" + strings.TrimPrefix(lines[i], l)
				return strings.Join(lines, "\n"), true
			}
			return page, false
		}
		if rest == "" {
			return page, false // a block list below: left as the page writes it
		}
		lines[i] = "tags: [" + all + "]" + strings.TrimPrefix(lines[i], l)
		return strings.Join(lines, "\n"), true
	}
	cr := ""
	if strings.HasSuffix(lines[n-1], "\r") {
		cr = "\r"
	}
	lines = slices.Insert(lines, n-1, "tags: ["+strings.Join(missing, ", ")+"]"+cr)
	return strings.Join(lines, "\n"), true
}

// frontmatterCR is frontmatter for lines that may end in "\r".
func frontmatterCR(lines []string) int {
	trimmed := make([]string, len(lines))
	for i, l := range lines {
		trimmed[i] = strings.TrimSuffix(l, "\r")
	}
	return frontmatter(trimmed)
}
