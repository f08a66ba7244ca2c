package notebook

import (
	"reflect"
	"testing"
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
	}
	none := func(string) bool { return false }
	for _, tt := range tests {
		if got := Route(tt.text, tt.category, tt.file, none); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Route(%q, %q, %q) = %+v, want %+v", tt.text, tt.category, tt.file, got, tt.want)
		}
	}
	// --file finds an existing page in any category.
	exists := func(rel string) bool { return rel == "reference/family.md" }
	if got := Route("Mum's birthday is 3 May", "", "family", exists); got.Path != "reference/family.md" {
		t.Errorf("Route with existing --file = %+v", got)
	}
}
