package route

import (
	"reflect"
	"testing"

	"github.com/memhost/memhost/host/notebook"
)

func TestRoute(t *testing.T) {
	tests := []struct {
		text, category, file string
		want                 Routed
	}{
		{"add oat milk to the shopping list", "", "", Routed{Path: "lists/shopping.md"}},
		{"- [ ] call the dentist", "", "", Routed{Path: "lists/todos.md"}},
		{"- Sarah Chen: mobile 555-1234", "", "", Routed{Path: "reference/contacts.md", Section: "Sarah Chen", Entry: "mobile 555-1234", Person: true}},
		{"- The sky is blue", "", "", Routed{Path: "knowledge/facts.md"}},
		{"todo: renew passport", "", "", Routed{Path: "lists/todos.md"}},
		{"buy eggs", "", "", Routed{Path: "lists/shopping.md"}},
		{"add Dune to my reading list", "", "", Routed{Path: "lists/reading.md"}},
		{"Never ping me before 9am", "", "", Routed{Path: "reference/standing-orders.md"}},
		{"Always reply in English", "", "", Routed{Path: "reference/standing-orders.md"}},
		{"Sarah Chen - Phone: 555-1234", "", "", Routed{Path: "reference/contacts.md", Section: "Sarah Chen", Entry: "Phone: 555-1234", Person: true}},
		{"Bob's email is bob@example.com", "", "", Routed{Path: "reference/contacts.md", Section: "Bob", Entry: "Bob's email is bob@example.com", Person: true}},
		{"call the plumber at +1 (555) 010-9999", "", "", Routed{Path: "reference/contacts.md", Entry: "call the plumber at +1 (555) 010-9999"}},
		{"User prefers email over phone", "", "", Routed{Path: "reference/preferences.md"}},
		{"Favorite coffee: flat white", "", "", Routed{Path: "reference/preferences.md"}},
		{"The frontend uses React 19", "", "", Routed{Path: "knowledge/facts.md"}},
		{"The frontend uses React 19", "knowledge", "stack", Routed{Path: "knowledge/stack.md"}},
		{"Milk", "lists", "", Routed{Path: "lists/todos.md"}},
		{"Milk", "lists", "groceries", Routed{Path: "lists/groceries.md"}},
		{"Sarah Chen - Phone: 555-1234", "reference", "", Routed{Path: "reference/contacts.md", Section: "Sarah Chen", Entry: "Phone: 555-1234", Person: true}},
		{"some note", "reference", "", Routed{Path: "reference/notes.md"}},
		// A contact word is about a contact only when a person is its subject.
		{"The VPN config lives in vault/vpn", "", "", Routed{Path: "knowledge/facts.md"}},
		{"Postgres lives in /var/lib/postgresql/16", "", "", Routed{Path: "knowledge/facts.md"}},
		{"The office address is 1 High Street", "", "", Routed{Path: "knowledge/facts.md"}},
		{"Bob lives in Austin", "", "", Routed{Path: "reference/contacts.md", Section: "Bob", Entry: "Bob lives in Austin", Person: true}},
		{"My sister's birthday is 3 May", "", "", Routed{Path: "reference/contacts.md", Entry: "My sister's birthday is 3 May"}},
		// Numbers that are no phone numbers.
		{"The staging server's address is 10.0.0.12", "", "", Routed{Path: "knowledge/facts.md"}},
		{"The release is due 2026-03-15", "", "", Routed{Path: "knowledge/facts.md"}},
		{"call Tom on 555.123.4567", "", "", Routed{Path: "reference/contacts.md", Entry: "call Tom on 555.123.4567"}},
	}
	none := pages{}
	for _, tt := range tests {
		if got := Route(tt.text, tt.category, tt.file, none); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Route(%q, %q, %q) = %+v, want %+v", tt.text, tt.category, tt.file, got, tt.want)
		}
	}
	// --file finds an existing page in any category.
	family := pages{"reference/family.md": ""}
	if got := Route("Mum's birthday is 3 May", "", "family", family); got.Path != "reference/family.md" {
		t.Errorf("Route with existing --file = %+v", got)
	}
	// A text that starts with the name of a person of the contacts page is
	// about them when it names them in full or reads as being about a
	// person. A first name alone at the start of a sentence is capitalised
	// whether or not it is a name: "Will", "Mark", "May" and "Bill" are
	// also words.
	known := pages{"reference/contacts.md": contactsPage + wordNames}
	facts := Routed{Path: "knowledge/facts.md"}
	prefs := Routed{Path: "reference/preferences.md"}
	for _, tt := range []struct {
		text string
		want Routed
	}{
		{"Tom moved to Berlin in June", Routed{Path: "reference/contacts.md", Section: "Tom Baker", Entry: "Tom moved to Berlin in June", Person: true}},
		{"Sarah Chen joined the board", Routed{Path: "reference/contacts.md", Section: "Sarah Chen", Entry: "Sarah Chen joined the board", Person: true}},
		{"Sarah Chen - Team: platform", Routed{Path: "reference/contacts.md", Section: "Sarah Chen", Entry: "Team: platform", Person: true}},
		{"Tomatoes need full sun", facts},
		{"Sarah prefers email over phone calls", prefs},
		// a first name that is also a word, where it is the word
		{"Will the build pass on Friday?", facts},
		{"Mark the invoice as paid", facts},
		{"May is our busiest month", facts},
		{"Bill the client for March", facts},
		{"Will the new email address work?", facts},
		// the same first names where they are the person
		{"Will moved to Berlin", Routed{Path: "reference/contacts.md", Section: "Will Smith", Entry: "Will moved to Berlin", Person: true}},
		{"Mark's birthday is 3 May", Routed{Path: "reference/contacts.md", Section: "Mark Lee", Entry: "Mark's birthday is 3 May", Person: true}},
		{"May: nut allergy, carries an EpiPen", Routed{Path: "reference/contacts.md", Section: "May Chen", Entry: "nut allergy, carries an EpiPen", Person: true}},
		{"Bill - Team: finance", Routed{Path: "reference/contacts.md", Section: "Bill Jones", Entry: "Team: finance", Person: true}},
		{"Bill called about the quote", Routed{Path: "reference/contacts.md", Section: "Bill Jones", Entry: "Bill called about the quote", Person: true}},
		{"Mark is moving to Leeds", Routed{Path: "reference/contacts.md", Section: "Mark Lee", Entry: "Mark is moving to Leeds", Person: true}},
		{"Will Smith owes me 20 euros", Routed{Path: "reference/contacts.md", Section: "Will Smith", Entry: "Will Smith owes me 20 euros", Person: true}},
		// a preference stays a preference, whoever it is of (the rule
		// before the known person's)
		{"May: allergic to nuts", prefs},
		{"Will Smith prefers email", prefs},
	} {
		if got := Route(tt.text, "", "", known); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Route(%q) with contacts = %+v, want %+v", tt.text, got, tt.want)
		}
	}
}

const contactsPage = `# Contacts

## Sarah Chen
- Phone: 555-1234

## Tom Baker
- Email: tom@example.com
`

// wordNames are contacts whose first names are also words.
const wordNames = `
## Will Smith
## Mark Lee
## May Chen
## Bill Jones
`

// pages is a notebook of page contents by path.
type pages map[string]string

func (p pages) Exists(rel string) bool { _, ok := p[rel]; return ok }

func (p pages) Sections(rel string) []string { return notebook.Sections(p[rel]) }
