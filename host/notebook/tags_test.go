package notebook

import (
	"slices"
	"testing"
)

func TestAddTags(t *testing.T) {
	tests := []struct {
		name, page string
		tags       []string
		want       string
		changed    bool
	}{
		{"no frontmatter", "# Contacts\n", []string{"People", "#work"}, "---\ntags: [people, work]\n---\n# Contacts\n", true},
		{"flow list", "---\ntitle: X\ntags: [people]\n---\n# X\n", []string{"people", "family"}, "---\ntitle: X\ntags: [people, family]\n---\n# X\n", true},
		{"no tags line", "---\ntitle: X\n---\n# X\n", []string{"a"}, "---\ntitle: X\ntags: [a]\n---\n# X\n", true},
		{"already there", "---\ntags: [a, b]\n---\n", []string{"B"}, "---\ntags: [a, b]\n---\n", false},
		{"block list left alone", "---\ntags:\n  - a\n---\n", []string{"b"}, "---\ntags:\n  - a\n---\n", false},
		{"not tags", "# X\n", []string{"two words!", ""}, "# X\n", false},
		{"crlf", "---\r\ntitle: X\r\n---\r\n# X\r\n", []string{"a"}, "---\r\ntitle: X\r\ntags: [a]\r\n---\r\n# X\r\n", true},
	}
	for _, tt := range tests {
		got, changed := AddTags(tt.page, tt.tags)
		if got != tt.want || changed != tt.changed {
			t.Errorf("%s: AddTags = %q, %v; want %q, %v", tt.name, got, changed, tt.want, tt.changed)
		}
	}
	if got := PageTags("---\ntags:\n  - People\n  - work\n---\n"); !slices.Equal(got, []string{"people", "work"}) {
		t.Errorf("PageTags(block) = %v", got)
	}
	if got := PageTags("---\ntags: [a, b\n---\n"); got != nil {
		t.Errorf("PageTags(broken YAML) = %v", got)
	}
}
