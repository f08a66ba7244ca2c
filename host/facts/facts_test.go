package facts

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/memhost/memhost/knowledge"
)

// randomEntity makes an entity as Add would leave it: facts with ids,
// dates, sources, confidences, supersessions and forgettings.
func randomEntity(r *rand.Rand) Entity {
	words := []string{"Sarah", "Acme", "works", "at", "[[acme-corp]]", "tea", "Go 1.26", "naïve", "会议", "o'clock", "#tag", "50%", "a/b", "email@x.example"}
	phrase := func(n int) string {
		var w []string
		for range 1 + r.IntN(n) {
			w = append(w, words[r.IntN(len(words))])
		}
		return strings.Join(w, " ")
	}
	slug := Slug(phrase(2))
	if slug == "" {
		slug = "x"
	}
	p := New(slug, phrase(3), "2026-01-01")
	if r.IntN(2) == 0 {
		m := p.Meta
		m.Aliases = []string{phrase(2), "2026", "yes", " spaced "}[:1+r.IntN(4)]
		m.Tags = append(m.Tags, "person")
		p.SetMeta(m)
	}
	attrs := []string{"works at", "email", "likes", "role", "lives in"}
	for i := range 1 + r.IntN(12) {
		day := fmt.Sprintf("2026-%02d-%02d", 1+i/28, 1+i%28)
		switch r.IntN(5) {
		case 0:
			cur := []knowledge.Fact{}
			for _, f := range p.Facts {
				if f.Status == Current {
					cur = append(cur, f)
				}
			}
			if len(cur) > 0 {
				if _, err := p.Forget(cur[r.IntN(len(cur))].ID, day); err != nil {
					panic(err)
				}
				continue
			}
		}
		a := Addition{Attribute: attrs[r.IntN(len(attrs))], Value: phrase(4), Keep: r.IntN(4) == 0}
		if r.IntN(2) == 0 {
			a.Source = fmt.Sprintf("chat-%d turn %012x", r.IntN(3), r.Uint64()>>16)
		}
		if r.IntN(3) == 0 {
			a.Confidence = float64(r.IntN(100)) / 100
		}
		if _, err := p.Add(a, day); err != nil {
			panic(err)
		}
	}
	return p.Entity
}

func TestRenderParseRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		e := randomEntity(r)
		page := Render(e)
		p := Parse(e.Slug, page)
		if len(p.Problems) > 0 {
			t.Fatalf("case %d: problems %v in\n%s", i, p.Problems, page)
		}
		if !reflect.DeepEqual(p.Entity, e) {
			t.Fatalf("case %d: parse(render(e)) differs:\n got %+v\nwant %+v\n%s", i, p.Entity, e, page)
		}
		if got := Render(p.Entity); !bytes.Equal(got, page) {
			t.Fatalf("case %d: render(parse(page)) differs:\n%s\n---\n%s", i, got, page)
		}
	}
}

func TestSupersedeKeepsHistory(t *testing.T) {
	p := New("sarah-chen", "Sarah Chen", "2026-11-20")
	first, err := p.Add(Addition{Attribute: "works at", Value: "[[techflow]]", Source: "chat-1 turn aaa"}, "2026-11-20")
	if err != nil {
		t.Fatal(err)
	}
	again, err := p.Add(Addition{Attribute: "Works  at", Value: "[[TechFlow]]."}, "2026-11-21")
	if err != nil || !again.Confirmed || again.Fact.ID != first.Fact.ID || again.Fact.Confirmed != "2026-11-21" {
		t.Fatalf("re-adding the same value: %+v, %v; want it confirmed on 2026-11-21", again, err)
	}
	second, err := p.Add(Addition{Attribute: "works at", Value: "[[acme-corp]]", Source: "chat-1 turn bbb"}, "2026-11-23")
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Superseded) != 1 || second.Superseded[0].ID != first.Fact.ID || second.Fact.Supersedes != first.Fact.ID {
		t.Fatalf("second: %+v; want it to supersede %s", second, first.Fact.ID)
	}
	old, _ := p.Find(first.Fact.ID)
	if old.Status != Superseded || old.Until != "2026-11-23" || old.SupersededBy != second.Fact.ID || !old.Struck {
		t.Fatalf("old fact: %+v", old)
	}
	page := string(p.Bytes())
	if !strings.Contains(page, "- ~~[[techflow]]~~ [seen:: 2026-11-20] [confirmed:: 2026-11-21] [until:: 2026-11-23]") {
		t.Fatalf("the old value is not struck through with its dates:\n%s", page)
	}
	if rel := p.Relations(); len(rel) != 1 || rel[0].To != "acme-corp" || rel[0].Relation != "works at" {
		t.Fatalf("relations %+v, want works at acme-corp only", rel)
	}
	kept, _ := p.Add(Addition{Attribute: "works at", Value: "[[side-project]]", Keep: true}, "2026-11-24")
	if len(kept.Superseded) != 0 || len(p.Relations()) != 2 {
		t.Fatalf("--keep superseded %+v; relations %+v", kept.Superseded, p.Relations())
	}
	f, err := p.Forget(second.Fact.ID, "2026-11-25")
	if err != nil || f.Status != Forgotten {
		t.Fatalf("forget: %+v, %v", f, err)
	}
	if _, err := p.Forget(second.Fact.ID, "2026-11-25"); err == nil {
		t.Fatal("forgetting a forgotten fact succeeded")
	}
	if _, err := p.Forget("fnope", "2026-11-25"); err == nil {
		t.Fatal("forgetting an unknown id succeeded")
	}
}

// A person's page: prose, other sections, a code block, CRLF line endings,
// extra frontmatter keys. memhost's edits touch only the fact lines and
// the updated date.
func TestEditsKeepWhatAPersonWrote(t *testing.T) {
	page := strings.ReplaceAll(`---
title: Sarah Chen
cssclass: person
updated: 2026-01-01
---
# Sarah Chen

Met at the 2025 conference. She prefers email.

## works at
- works at TechFlow
  - a nested note, not a fact
- [ ] call her about the move

## Notes
`+"```"+`
## not a heading
- not a fact
`+"```"+`
Free text.
`, "\n", "\r\n")
	p := Parse("sarah-chen", []byte(page))
	if !bytes.Equal(p.Bytes(), []byte(page)) {
		t.Fatal("parse changed the page")
	}
	if len(p.Facts) != 1 || p.Facts[0].Value != "works at TechFlow" || p.Facts[0].HasID {
		t.Fatalf("facts %+v, want the one list item of works at", p.Facts)
	}
	if _, err := p.Add(Addition{Attribute: "works at", Value: "works at [[acme-corp]]"}, "2026-11-23"); err != nil {
		t.Fatal(err)
	}
	id := p.Facts[0].ID
	want := strings.ReplaceAll(`---
title: Sarah Chen
created: 2026-11-23
cssclass: person
updated: 2026-11-23
---
# Sarah Chen

Met at the 2025 conference. She prefers email.

## works at
- ~~works at TechFlow~~ [until:: 2026-11-23] ^`+id+`
  - a nested note, not a fact
- works at [[acme-corp]] [seen:: 2026-11-23] [supersedes:: `+id+`] ^`+p.Facts[1].ID+`
- [ ] call her about the move

## Notes
`+"```"+`
## not a heading
- not a fact
`+"```"+`
Free text.
`, "\n", "\r\n")
	if got := string(p.Bytes()); got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

func TestCheckValue(t *testing.T) {
	for _, v := range []string{"", "  ", "a\nb", "~~old~~", "x [k:: v]", "ends ^f123"} {
		if CheckValue(v) == nil {
			t.Errorf("CheckValue(%q) accepted it", v)
		}
	}
	for _, v := range []string{"works at [[acme-corp]]", "costs $5 [approx]", "a^b"} {
		if err := CheckValue(v); err != nil {
			t.Errorf("CheckValue(%q): %v", v, err)
		}
	}
}

func TestSlugAndSource(t *testing.T) {
	for in, want := range map[string]string{"Sarah Chen": "sarah-chen", "project:claude-cli": "project-claude-cli", "  Ünïcode  Name ": "ünïcode-name", "---": "", "会议 室": "会议-室"} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
	if s, tu, _, _ := ParseSource("chat-1 turn 8f3a"); s != "chat-1" || tu != "8f3a" {
		t.Errorf("ParseSource turn: %q %q", s, tu)
	}
	if _, _, p, l := ParseSource("daily/2026-11-23.md line 4"); p != "daily/2026-11-23.md" || l != 4 {
		t.Errorf("ParseSource line: %q %d", p, l)
	}
}

// FuzzParse: any page parses without panicking, reads back as the same
// bytes, and the entity it gives renders to a page that parses back to it.
func FuzzParse(f *testing.F) {
	f.Add([]byte("---\ntitle: X\n---\n# X\n\n## a\n- v [seen:: 2026-01-01] ^f1\n- ~~w~~ [forgotten:: 2026-01-02]\n"))
	f.Add([]byte("## a\r\n* [[x|y]] [confidence:: 2] [weird:: k]\r\n```\n## b\n```\n- z"))
	f.Add([]byte("---\n[a\n---\n## b\n- c ^^ [x::]"))
	f.Add([]byte("---\n- a\n---\n## b\n- c [supersedes:: f1, f2] ^f3\n- ~~d~~ ^f1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := Parse("e", data)
		if !bytes.Equal(p.Bytes(), data) {
			t.Fatalf("Bytes() differs from the input")
		}
		again := Parse("e", Render(p.Entity))
		for i := range p.Facts {
			p.Facts[i].Line, p.Facts[i].HasID = 0, true
		}
		for i := range again.Facts {
			again.Facts[i].Line = 0
		}
		if len(p.Facts) != len(again.Facts) {
			t.Fatalf("rendered page has %d facts, want %d:\n%s", len(again.Facts), len(p.Facts), Render(p.Entity))
		}
		for i := range p.Facts {
			a, b := p.Facts[i], again.Facts[i]
			if AttrKey(a.Attribute) != AttrKey(b.Attribute) || a.Value != b.Value || a.Status != b.Status || a.ID != b.ID ||
				a.Source != b.Source || a.Seen != b.Seen || a.Supersedes != b.Supersedes {
				t.Fatalf("fact %d read back as\n%+v\nwant\n%+v\nfrom\n%s", i, b, a, Render(p.Entity))
			}
		}
	})
}
