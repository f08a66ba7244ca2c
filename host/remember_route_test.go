package host

import (
	"context"
	"reflect"
	"testing"

	"github.com/memhost/memhost"
)

// TestRememberRoutes: where realistic sentences land, page and section,
// in a notebook that already has people on its contacts page and sections
// on its shopping list. A fact never lands in a section it has nothing to
// do with ("The VPN config lives in vault/vpn" once landed in the last
// person's section of contacts.md).
func TestRememberRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	writePage(t, h, "reference/contacts.md", "# Contacts\n\n## Sarah Chen\n- Phone: 555-1234\n\n## Tom Baker\n- Email: tom@example.com\n\n"+
		"## Will Smith\n- Mobile: 555-0101\n\n## Mark Lee\n- Mobile: 555-0102\n\n## May Chen\n- Mobile: 555-0103\n\n## Bill Jones\n- Mobile: 555-0104\n")
	writePage(t, h, "lists/shopping.md", "# Shopping\n\n## Groceries\n- Milk\n\n## Hardware\n- WD-40\n")
	writePage(t, h, "knowledge/facts.md", "# Facts\n\n- The boiler was serviced in May\n")
	tests := []struct {
		text, path, section string
	}{
		// contacts: a detail of a person, under their section
		{"Sarah Chen - Mobile: 555-9876", "reference/contacts.md", "Sarah Chen"},
		{"Sarah's birthday is 12 March", "reference/contacts.md", "Sarah Chen"},
		{"Tom Baker works at Acme Corp", "reference/contacts.md", "Tom Baker"},
		{"Tom moved to Berlin in June", "reference/contacts.md", "Tom Baker"},
		{"sarah chen - home phone: 555 0100 22", "reference/contacts.md", "Sarah Chen"},
		{"Priya Patel - Email: priya@example.com", "reference/contacts.md", "Priya Patel"},
		{"Bob's email is bob@example.com", "reference/contacts.md", "Bob"},
		// a first name that is also a word: the person when the text
		// reads as being about a person or names them in full
		{"Will moved to Berlin", "reference/contacts.md", "Will Smith"},
		{"Mark's birthday is 3 May", "reference/contacts.md", "Mark Lee"},
		{"May: nut allergy", "reference/contacts.md", "May Chen"},
		{"Will Smith owes me 20 euros", "reference/contacts.md", "Will Smith"},
		// contacts, but no one's section
		{"call the plumber at +1 (555) 010-9999", "reference/contacts.md", "Notes"},
		{"My sister's birthday is 3 May", "reference/contacts.md", "Notes"},
		// where things are: facts, not contacts
		{"The VPN config lives in vault/vpn", "knowledge/facts.md", ""},
		{"Postgres lives in /var/lib/postgresql/16", "knowledge/facts.md", ""},
		{"The staging server's address is 10.0.0.12", "knowledge/facts.md", ""},
		{"The spare key is under the blue flowerpot", "knowledge/facts.md", ""},
		{"The office address is 1 High Street", "knowledge/facts.md", ""},
		// a first name that is also a word, at the start of a sentence
		{"Will the build pass on Friday?", "knowledge/facts.md", ""},
		{"Mark the invoice as paid", "knowledge/facts.md", ""},
		{"May is our busiest month", "knowledge/facts.md", ""},
		{"Bill the client for March", "knowledge/facts.md", ""},
		// projects and decisions
		{"Project Falcon ships in Q3", "knowledge/facts.md", ""},
		{"We decided to use SQLite for the index", "knowledge/facts.md", ""},
		{"The release is due 2026-03-15", "knowledge/facts.md", ""},
		// preferences and standing orders
		{"Sarah prefers email over phone calls", "reference/preferences.md", ""},
		{"Will Smith prefers email", "reference/preferences.md", ""},
		{"May: allergic to nuts", "reference/preferences.md", ""},
		{"Favourite coffee: flat white", "reference/preferences.md", ""},
		{"I'm allergic to penicillin", "reference/preferences.md", ""},
		{"Always answer in British English", "reference/standing-orders.md", ""},
		{"Never schedule meetings before 10am", "reference/standing-orders.md", ""},
		// lists and to-dos
		{"todo: renew passport", "lists/todos.md", ""},
		{"- [ ] call the dentist", "lists/todos.md", ""},
		{"add Dune to my reading list", "lists/reading.md", ""},
		{"buy light bulbs at the hardware store", "lists/shopping.md", "Hardware"},
		{"add oat milk to the shopping list", "lists/shopping.md", "Notes"},
	}
	for _, tt := range tests {
		got, err := h.Remember(ctx, memhost.RememberRequest{Text: tt.text})
		if err != nil {
			t.Fatalf("Remember(%q): %v", tt.text, err)
		}
		if got.Path != tt.path || got.Section != tt.section {
			t.Errorf("Remember(%q) went to %s § %q, want %s § %q", tt.text, got.Path, got.Section, tt.path, tt.section)
		}
	}
	want := "# Contacts\n\n## Sarah Chen\n- Phone: 555-1234\n- Mobile: 555-9876\n- Sarah's birthday is 12 March\n- sarah chen - home phone: 555 0100 22\n\n" +
		"## Tom Baker\n- Email: tom@example.com\n- Tom Baker works at Acme Corp\n- Tom moved to Berlin in June\n\n" +
		"## Will Smith\n- Mobile: 555-0101\n- Will moved to Berlin\n- Will Smith owes me 20 euros\n\n" +
		"## Mark Lee\n- Mobile: 555-0102\n- Mark's birthday is 3 May\n\n## May Chen\n- Mobile: 555-0103\n- nut allergy\n\n" +
		"## Bill Jones\n- Mobile: 555-0104\n\n" +
		"## Priya Patel\n- Email: priya@example.com\n\n## Bob\n- Bob's email is bob@example.com\n\n" +
		"## Notes\n- call the plumber at +1 (555) 010-9999\n- My sister's birthday is 3 May\n"
	if got := readPage(t, h, "reference/contacts.md"); got != want {
		t.Errorf("contacts.md =\n%s\nwant\n%s", got, want)
	}
}

// TestRememberSaysWhere: the response names the section every time there
// is one, says when it was created, and Where reads it out.
func TestRememberSaysWhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	steps := []struct {
		req   memhost.RememberRequest
		want  memhost.RememberResponse
		where string
	}{
		{memhost.RememberRequest{Text: "The boiler was serviced in May"},
			memhost.RememberResponse{Path: "knowledge/facts.md", Lines: memhost.Lines{Start: 3, End: 3}, Created: true},
			"knowledge/facts.md, no section (line 3)"},
		{memhost.RememberRequest{Text: "Met at the 2019 conference", Section: "sarah chen"},
			memhost.RememberResponse{Path: "knowledge/facts.md", Section: "sarah chen", NewSection: true, Lines: memhost.Lines{Start: 6, End: 6}},
			"knowledge/facts.md § sarah chen (new section, line 6)"},
		{memhost.RememberRequest{Text: "Line one of a note\nline two", Category: "knowledge"},
			memhost.RememberResponse{Path: "knowledge/facts.md", Section: "Notes", NewSection: true, Lines: memhost.Lines{Start: 9, End: 10}},
			"knowledge/facts.md § Notes (new section, lines 9-10)"},
		{memhost.RememberRequest{Text: "Kettle descaling: every second Sunday", Category: "knowledge"},
			memhost.RememberResponse{Path: "knowledge/facts.md", Section: "Notes", Lines: memhost.Lines{Start: 12, End: 12}},
			"knowledge/facts.md § Notes (line 12)"},
		{memhost.RememberRequest{Text: "Gave a talk on Go", Section: "Sarah Chen"},
			memhost.RememberResponse{Path: "knowledge/facts.md", Section: "sarah chen", Lines: memhost.Lines{Start: 7, End: 7}},
			"knowledge/facts.md § sarah chen (line 7)"},
		{memhost.RememberRequest{Text: "kettle descaling: every second sunday"},
			memhost.RememberResponse{Path: "knowledge/facts.md", Section: "Notes", Lines: memhost.Lines{Start: 13, End: 13}, Duplicate: true},
			"knowledge/facts.md § Notes (line 13)"},
		{memhost.RememberRequest{Text: "the boiler was serviced in may"},
			memhost.RememberResponse{Path: "knowledge/facts.md", Lines: memhost.Lines{Start: 3, End: 3}, Duplicate: true},
			"knowledge/facts.md, no section (line 3)"},
	}
	for _, s := range steps {
		got, err := h.Remember(ctx, s.req)
		if err != nil {
			t.Fatalf("Remember(%q): %v", s.req.Text, err)
		}
		if !reflect.DeepEqual(got, s.want) {
			t.Errorf("Remember(%q) = %+v, want %+v", s.req.Text, got, s.want)
		}
		if w := got.Where(); w != s.where {
			t.Errorf("Remember(%q).Where() = %q, want %q", s.req.Text, w, s.where)
		}
	}
	want := "# Facts\n\n- The boiler was serviced in May\n\n## sarah chen\n- Met at the 2019 conference\n- Gave a talk on Go\n\n" +
		"## Notes\nLine one of a note\nline two\n\n- Kettle descaling: every second Sunday\n"
	if got := readPage(t, h, "knowledge/facts.md"); got != want {
		t.Errorf("facts.md =\n%s\nwant\n%s", got, want)
	}
}
