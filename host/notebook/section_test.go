package notebook

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memhost/memhost/host/markdown"
)

const shopping = `# Shopping List

## Groceries
- Milk (oat)
- Eggs (dozen)

## Hardware Store
- WD-40
`

func TestAppend(t *testing.T) {
	tests := []struct {
		name, page, section, text string
		want                      string
		start, end                int
	}{
		{
			name: "list item into existing section", page: shopping, section: "Groceries", text: "- Salmon",
			want:  "# Shopping List\n\n## Groceries\n- Milk (oat)\n- Eggs (dozen)\n- Salmon\n\n## Hardware Store\n- WD-40\n",
			start: 6, end: 6,
		},
		{
			name: "section named with #s and other case", page: shopping, section: "## hardware store", text: "- Light bulbs",
			want:  "# Shopping List\n\n## Groceries\n- Milk (oat)\n- Eggs (dozen)\n\n## Hardware Store\n- WD-40\n- Light bulbs\n",
			start: 9, end: 9,
		},
		{
			name: "missing section is created at the end", page: shopping, section: "Pharmacy", text: "- Aspirin",
			want:  shopping + "\n## Pharmacy\n- Aspirin\n",
			start: 11, end: 11,
		},
		{
			name: "paragraph after a list gets a blank line", page: "# T\n- a\n", text: "Some prose.",
			want: "# T\n- a\n\nSome prose.\n", start: 4, end: 4,
		},
		{
			name: "empty page", page: "", text: "hello",
			want: "hello\n", start: 1, end: 1,
		},
		{
			name: "page without final newline", page: "# T\n- a", text: "- b",
			want: "# T\n- a\n- b\n", start: 3, end: 3,
		},
		{
			name: "heading inside a code fence is not a section", page: "# T\n```\n## Groceries\n```\n", section: "Groceries", text: "- x",
			want: "# T\n```\n## Groceries\n```\n\n## Groceries\n- x\n", start: 7, end: 7,
		},
		{
			name: "multi-line text", page: "# Log\n", text: "## 09:15 — Check-in\nAll good.",
			want: "# Log\n\n## 09:15 — Check-in\nAll good.\n", start: 3, end: 4,
		},
		{
			name: "a line break in the section name is a space", page: "# T\n", section: "Evil\n## Injected", text: "- x",
			want: "# T\n\n## Evil ## Injected\n- x\n", start: 4, end: 4,
		},
		{
			name: "a name ending in a # gets closing #s", page: "# T\n", section: "C # #", text: "- x",
			want: "# T\n\n## C # #\n- x\n", start: 4, end: 4,
		},
		{
			name: "H3 inside section stays in it", page: "## A\ntext\n### sub\nmore\n## B\n", section: "A", text: "added",
			want: "## A\ntext\n### sub\nmore\n\nadded\n\n## B\n", start: 6, end: 6,
		},
		// Text with no lines adds none (it panicked): an empty range after
		// the section's last line, as Replace gives.
		{
			name: "no text at the end of the page", page: "# T\n", text: "\n",
			want: "# T\n", start: 2, end: 1,
		},
		{
			name: "no text in a section", page: shopping, section: "Groceries", text: "",
			want: shopping, start: 6, end: 5,
		},
		{
			name: "no text in a new section", page: "# T\n", section: "New", text: "\n\n",
			want: "# T\n\n## New\n", start: 4, end: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Append(tt.page, tt.section, tt.text)
			if got.Page != tt.want || got.StartLine != tt.start || got.EndLine != tt.end {
				t.Errorf("Append = %q lines %d-%d\nwant      %q lines %d-%d", got.Page, got.StartLine, got.EndLine, tt.want, tt.start, tt.end)
			}
		})
	}
}

func TestReplace(t *testing.T) {
	tests := []struct {
		name, page, section, text string
		want                      string
		start, end                int
	}{
		{
			name: "replace a middle section", page: shopping, section: "Groceries", text: "- Bread\n- Butter",
			want:  "# Shopping List\n\n## Groceries\n- Bread\n- Butter\n\n## Hardware Store\n- WD-40\n",
			start: 4, end: 5,
		},
		{
			name: "replace the last section", page: shopping, section: "Hardware Store", text: "- Nails",
			want:  "# Shopping List\n\n## Groceries\n- Milk (oat)\n- Eggs (dozen)\n\n## Hardware Store\n- Nails\n",
			start: 8, end: 8,
		},
		{
			name: "replace a missing section creates it", page: "# T\n", section: "New", text: "body",
			want: "# T\n\n## New\nbody\n", start: 4, end: 4,
		},
		// Frontmatter is not searched for the section, nor edited.
		{
			name: "a YAML comment in frontmatter is not a section", page: "---\n## GroCeries\n---\n", section: "GroCeries", text: "0",
			want: "---\n## GroCeries\n---\n\n## GroCeries\n0\n", start: 6, end: 6,
		},
		{
			name: "a fence in frontmatter opens no code block", page: "---\ndescription: |\n  ```\n---\n\n## Groceries\n- Milk\n", section: "groceries", text: "- Eggs",
			want: "---\ndescription: |\n  ```\n---\n\n## Groceries\n- Eggs\n", start: 7, end: 7,
		},
		{
			name: "replace the whole page", page: shopping, text: "# Fresh\n",
			want: "# Fresh\n", start: 1, end: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Replace(tt.page, tt.section, tt.text)
			if got.Page != tt.want || got.StartLine != tt.start || got.EndLine != tt.end {
				t.Errorf("Replace = %q lines %d-%d\nwant       %q lines %d-%d", got.Page, got.StartLine, got.EndLine, tt.want, tt.start, tt.end)
			}
		})
	}
}

func TestPersonSection(t *testing.T) {
	page := "# Contacts\n\n## Sarah Chen\n- Phone: 1\n\n## Bob Smith\n\n## Bob Jones\n"
	tests := []struct{ name, want string }{
		{"Sarah", "Sarah Chen"},
		{"sarah chen", "Sarah Chen"},
		{"Bob", "Bob"}, // two Bobs: do not guess
		{"Ann", "Ann"},
	}
	for _, tt := range tests {
		if got := PersonSection(page, tt.name); got != tt.want {
			t.Errorf("PersonSection(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCheckSection(t *testing.T) {
	tests := []struct {
		in   string
		want bool // accepted
	}{
		{"", true},
		{"Groceries", true},
		{"## Sarah Chen", true},
		{"Café crème", true},
		{"Evil\n## Injected", false},
		{"Evil\r\n## Injected", false},
		{strings.Repeat("long ", 100), true},
		{strings.Repeat("long ", 101), false}, // past MaxSection
		{"tab\there", false},
		{"line\u2028separator", false},
		{"##", false},
		{"   ", false},
		// The name must read back as itself from its heading: "0 # #"
		// names "0 #", whose heading "## 0 #" reads as "0".
		{"0 # #", false},
		{"## # #", false},
		{"C#", true},
		{"## C# ##", true},
		{"a # b", true},
	}
	for _, tt := range tests {
		err := CheckSection(tt.in)
		if got := err == nil; got != tt.want {
			t.Fatalf("CheckSection(%q) accepted = %v, want %v", tt.in, got, tt.want)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.in)) {
			t.Fatalf("CheckSection(%q) = %v, not naming the section", tt.in, err)
		}
	}
}

// TestEditsKeepLineEndings: a page written with CRLF line endings (by a
// Windows editor) keeps them through section edits; the new text takes
// them too.
func TestEditsKeepLineEndings(t *testing.T) {
	crlf := "# Shopping List\r\n\r\n## Groceries\r\n- Milk\r\n\r\n## Hardware\r\n- WD-40\r\n"
	tests := []struct {
		name string
		edit func() Edit
		want string
	}{
		{"append to section", func() Edit { return Append(crlf, "Groceries", "- Eggs") },
			"# Shopping List\r\n\r\n## Groceries\r\n- Milk\r\n- Eggs\r\n\r\n## Hardware\r\n- WD-40\r\n"},
		{"append to page", func() Edit { return Append(crlf, "", "- Bolts\n- Nuts") },
			"# Shopping List\r\n\r\n## Groceries\r\n- Milk\r\n\r\n## Hardware\r\n- WD-40\r\n- Bolts\r\n- Nuts\r\n"},
		{"new section", func() Edit { return Append(crlf, "Pharmacy", "- Aspirin") },
			crlf + "\r\n## Pharmacy\r\n- Aspirin\r\n"},
		{"replace section", func() Edit { return Replace(crlf, "Groceries", "- Bread") },
			"# Shopping List\r\n\r\n## Groceries\r\n- Bread\r\n\r\n## Hardware\r\n- WD-40\r\n"},
		{"replace page", func() Edit { return Replace(crlf, "", "# New\nbody") }, "# New\r\nbody\r\n"},
		{"LF page stays LF", func() Edit { return Append("# T\n- a\n", "", "- b") }, "# T\n- a\n- b\n"},
		{"mostly CRLF", func() Edit { return Append("# T\r\n- a\n- b\r\n", "", "- c") }, "# T\r\n- a\r\n- b\r\n- c\r\n"},
		// A CR left at the end of a line of an LF page would end the line
		// as CRLF, to be read back without it: it is dropped at once, not
		// one CR on each write.
		{"stray CRs on an LF page", func() Edit { return Replace("0\r\r", "x", "t") }, "0\n\n## x\nt\n"},
		{"stray CR before LF", func() Edit { return Append("# T\n- a\r\r\n- b\n\n", "", "- c") }, "# T\n- a\n- b\n- c\n"},
		{"stray CR on a CRLF page", func() Edit { return Append("# T\r\n- a\r\r\n", "", "- b") }, "# T\r\n- a\r\r\n- b\r\n"},
		{"text ending in CR", func() Edit { return Append("# T\n", "", "- a\r\n- b\r") }, "# T\n\n- a\n- b\n"},
	}
	for _, tt := range tests {
		got := tt.edit().Page
		if got != tt.want {
			t.Fatalf("%s: page = %q, want %q", tt.name, got, tt.want)
		}
		if again := Append(got, "", "\n").Page; again != got {
			t.Fatalf("%s: page %q is %q after the next edit", tt.name, got, again)
		}
	}
}

// TestEditFindsItsSectionAgain: a section an edit writes is found by the
// next edit of the same section, which adds to it rather than making
// another.
func TestEditFindsItsSectionAgain(t *testing.T) {
	tests := []struct{ name, page, section string }{
		{"plain", shopping, "Pharmacy"},
		{"after an unclosed fence", "# Log\n```\nunclosed fence\n", "Groceries"},
		{"after an unclosed longer fence", "# Log\n  ````go\n```\nstill code\n\n\n", "Groceries"},
		{"after an unclosed tilde fence", "~~~\n## Groceries\n", "Groceries"},
		{"after frontmatter with a heading-like line", "---\n## GroCeries\n---\n", "GroCeries"},
		{"after frontmatter with a fence", "---\ndescription: |\n  ```\n---\n", "Groceries"},
		// Names CheckSection refuses, which the editor writes so that they
		// read back.
		{"a name ending in what reads as closing #s", shopping, "0 # #"},
		{"a name that is a #", shopping, "## # #"},
		{"a name with a line break", shopping, "Evil\n## Injected"},
		{"a name with a CRLF", shopping, "Evil\r\n## Injected"},
	}
	for _, tt := range tests {
		for _, replace := range []bool{false, true} {
			edit := Append
			if replace {
				edit = Replace
			}
			once := edit(tt.page, tt.section, "- x")
			twice := edit(once.Page, tt.section, "- x")
			lines := markdown.Lines(twice.Page)
			lines = lines[frontmatter(lines):]
			n := 0
			for i, l := range markdown.HeadingLevels(lines) {
				if l == 2 && markdown.HeadingText(lines[i]) == SectionName(tt.section) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%s (replace %v): %d sections %q after two edits:\n%s", tt.name, replace, n, SectionName(tt.section), twice.Page)
			}
			if replace && twice.Page != once.Page {
				t.Fatalf("%s: Replace is not idempotent:\nonce  %q\ntwice %q", tt.name, once.Page, twice.Page)
			}
		}
	}
}
