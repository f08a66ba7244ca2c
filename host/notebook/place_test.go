package notebook

import "testing"

func TestPlace(t *testing.T) {
	tests := []struct {
		name, page, text, want string
	}{
		{"page without sections: the end of the page", "# Facts\n\n- The sky is blue\n", "- Water is wet", ""},
		{"new page", "# Facts\n", "- Water is wet", ""},
		{"never the last person's section", contactsPage, "- call the plumber at 555 0199 22", GeneralSection},
		{"a heading the text names", contactsPage, "- sarah chen -   PHONE: 555-1234", "Sarah Chen"},
		{"the heading naming the most words", contactsPage + "\n## Sarah\n- x\n", "- sarah chen's bike is red", "Sarah Chen"},
		{"a heading's every word must be named", contactsPage, "- Tom Hanks was in Big", GeneralSection},
		{"an existing general section", contactsPage + "\n## Misc\n- x\n\n## Zed\n- y\n", "- something else", "Misc"},
		{"the general section, whatever its case", "# Facts\n\n## notes\n- a\n\n## Zed\n- y\n", "- b", "notes"},
		{"a heading inside code is no section", "# Facts\n\n```\n## Sarah Chen\n```\n", "- Sarah Chen is here", ""},
		{"frontmatter is no section", "---\n## Sarah Chen\n---\n# Facts\n", "- Sarah Chen is here", ""},
		{"text before the first section stays unsectioned", "# Facts\n\nintro\n\n## Sarah Chen\n- Met at the 2019 conference\n", "- Kettle descaling: every second Sunday", GeneralSection},
	}
	for _, tt := range tests {
		if got := Place(tt.page, tt.text); got != tt.want {
			t.Errorf("%s: Place(%q) = %q, want %q", tt.name, tt.text, got, tt.want)
		}
	}
}

func TestSectionAt(t *testing.T) {
	page := "# Contacts\n\nintro\n\n## Sarah Chen\n- Phone: 555-1234\n\n## Tom Baker\n- Email: tom@example.com\n"
	for line, want := range map[int]string{1: "", 3: "", 5: "Sarah Chen", 6: "Sarah Chen", 7: "Sarah Chen", 9: "Tom Baker", 99: "Tom Baker"} {
		if got := SectionAt(page, line); got != want {
			t.Errorf("SectionAt(line %d) = %q, want %q", line, got, want)
		}
	}
}

func TestFindSection(t *testing.T) {
	if got, ok := FindSection(contactsPage, "tom baker"); !ok || got != "Tom Baker" {
		t.Errorf("FindSection(tom baker) = %q, %v; want the heading as the page spells it", got, ok)
	}
	if got, ok := FindSection(contactsPage, "Bob"); ok {
		t.Errorf("FindSection(Bob) = %q, found", got)
	}
}

const contactsPage = `# Contacts

## Sarah Chen
- Phone: 555-1234

## Tom Baker
- Email: tom@example.com
`
