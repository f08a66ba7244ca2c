package facts

import (
	"strings"
	"testing"

	"github.com/memhost/memhost/host/markdown/markdowntest"
)

// TestFrontmatterCases: an entity page's frontmatter ends where
// host/markdown's does, and its YAML is what the page reads.
func TestFrontmatterCases(t *testing.T) {
	for _, c := range markdowntest.FrontmatterCases {
		p := Parse("p", []byte(c.Page))
		if p.fmEnd != c.Lines {
			t.Errorf("%s: Parse(%q) reads %d lines of frontmatter, want %d", c.Name, c.Page, p.fmEnd, c.Lines)
		}
		if got := string(p.Bytes()); got != c.Page {
			t.Errorf("%s: Parse(%q).Bytes() = %q", c.Name, c.Page, got)
		}
	}
}

// TestFencedCode: a section heading or list item inside a fenced code
// block is code, whatever shorter fence or other fence character it
// holds, when the page is read and when a fact is added.
func TestFencedCode(t *testing.T) {
	code := "````md\n```\n## email\n- a@old.example\n~~~\n## email\n- a@older.example\n````\n"
	page := "# P\n\n## notes\n" + code + "\n## email\n- b@x.example\n"
	p := Parse("p", []byte(page))
	if len(p.Facts) != 1 || p.Facts[0].Value != "b@x.example" {
		t.Fatalf("facts %+v, want b@x.example alone", p.Facts)
	}
	if _, err := p.Add(Addition{Attribute: "email", Value: "c@x.example"}, "2026-11-23"); err != nil {
		t.Fatal(err)
	}
	got := string(p.Bytes())
	at, added := strings.Index(got, code+"\n## email\n- "), strings.Index(got, "c@x.example")
	if at < 0 || added < at+len(code) {
		t.Fatalf("the fact went into the code block:\n%s", got)
	}
}
