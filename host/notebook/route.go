package notebook

import (
	"path"
	"regexp"
	"strings"
	"unicode"
)

// Categories of the notebook that remember writes to.
const (
	Lists     = "lists"
	Reference = "reference"
	Knowledge = "knowledge"
)

// StripListMarker drops a leading list marker ("- ", "1. ", "- [ ] ").
func StripListMarker(s string) string { return listMarker.ReplaceAllString(s, "") }

// Title makes a page title from its file name: "standing-orders.md" gives
// "Standing Orders".
func Title(rel string) string {
	name := strings.TrimSuffix(path.Base(rel), path.Ext(rel))
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == ' ' })
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	if len(words) == 0 {
		return name
	}
	return strings.Join(words, " ")
}

// normEntry normalises text for duplicate detection: list markers and
// checkboxes dropped, whitespace collapsed, lowercased.
func normEntry(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		l = listMarker.ReplaceAllString(l, "")
		if l != "" {
			lines = append(lines, l)
		}
	}
	return strings.ToLower(strings.Join(strings.Fields(strings.Join(lines, " ")), " "))
}

var listMarker = regexp.MustCompile(`^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?`)

// FindEntry looks for entry on the page as one line or one paragraph and
// returns its lines.
func FindEntry(page, entry string) (start, end int, ok bool) {
	want := normEntry(entry)
	if want == "" {
		return 0, 0, false
	}
	lines := strings.Split(page, "\n")
	paraStart := -1
	for i := 0; i <= len(lines); i++ {
		if i < len(lines) {
			if normEntry(lines[i]) == want {
				return i + 1, i + 1, true
			}
		}
		blank := i == len(lines) || strings.TrimSpace(lines[i]) == ""
		if blank {
			if paraStart >= 0 && normEntry(strings.Join(lines[paraStart:i], "\n")) == want {
				return paraStart + 1, i, true
			}
			paraStart = -1
		} else if paraStart < 0 {
			paraStart = i
		}
	}
	return 0, 0, false
}

// Routed is where Route sends a text.
type Routed struct {
	Path    string // page, relative to the notebook
	Section string // H2 section; "" for the end of the page
	Entry   string // the text to write; "" means the text as given
	Person  bool   // Section is a person's name from the text
}

// Route decides where remember puts text. With a category, the page is
// --file in it (or the category's usual page); without one, the rules are,
// in order:
//
//  1. list items — text that starts with a checkbox, or talks of a list ("add milk to the shopping list", "todo: ...", "buy
//     eggs") — go to lists/: lists/<name>.md for "<name> list",
//     lists/shopping.md for buying, else lists/todos.md;
//  2. standing orders — instructions such as "always ...", "never ...",
//     "don't ...", "from now on ...", "whenever ..." — go to
//     reference/standing-orders.md;
//  3. contacts — a phone number, an email address, or words such as phone,
//     email, address, birthday — go to reference/contacts.md, under a
//     section named after the person when the text starts with a name
//     ("Sarah Chen - Phone: 555-1234" goes under "## Sarah Chen");
//  4. preferences — prefers, likes, loves, hates, favorite, allergic,
//     vegetarian... — go to reference/preferences.md;
//  5. everything else goes to knowledge/facts.md.
//
// With --file but no category, an existing page of that name in lists/,
// reference/ or knowledge/ is used; otherwise the page is created in the
// category the rules choose. exists reports whether a page exists.
func Route(text, category, file string, exists func(rel string) bool) Routed {
	if category == "" && file != "" {
		for _, c := range []string{Lists, Reference, Knowledge} {
			if exists(c + "/" + file + ".md") {
				return Routed{Path: c + "/" + file + ".md"}
			}
		}
	}
	r := route(text)
	if category != "" && !strings.HasPrefix(r.Path, category+"/") {
		r = Routed{Path: category + "/" + defaultPage[category]}
	}
	if file != "" {
		if r.Path != path.Dir(r.Path)+"/"+file+".md" {
			r.Section, r.Entry, r.Person = "", "", false // the name-based section belongs to contacts
		}
		r.Path = path.Dir(r.Path) + "/" + file + ".md"
	}
	return r
}

var defaultPage = map[string]string{
	Lists:     "todos.md",
	Reference: "notes.md",
	Knowledge: "facts.md",
}

var (
	reNamedList  = regexp.MustCompile(`(?i)\b([\p{L}\d-]+)\s+list\b`)
	reListIntent = regexp.MustCompile(`(?i)^(?:\s*(?:[-*+]\s+)?\[[ xX]\]|\s*(?:todo|to-do|to do)\b|\s*(?:buy|pick up|get more)\b)|\b(?:add|put)\b.+\b(?:to|on)\b.+\blist\b`)
	reShopping   = regexp.MustCompile(`(?i)\b(?:buy|shopping|groceries|grocery|pick up|get more)\b`)
	reOrder      = regexp.MustCompile(`(?i)^\s*(?:always|never|don't|do not|dont|please|from now on|whenever|every time|each time|make sure|remember to)\b|\bstanding orders?\b`)
	rePhone      = regexp.MustCompile(`\+?\d[\d\s().-]{5,}\d`)
	reEmail      = regexp.MustCompile(`[\w.+-]+@[\w-]+\.[\w.-]+`)
	reContact    = regexp.MustCompile(`(?i)\b(?:phone|mobile|cell|email|e-mail|address|birthday|contact|lives in|works at)\b`)
	rePreference = regexp.MustCompile(`(?i)\b(?:prefers?|preferences?|likes|dislikes|loves|hates|favou?rite|allergic|vegetarian|vegan|enjoys|can't stand)\b`)
	rePerson     = regexp.MustCompile(`^\s*(\p{Lu}[\p{L}.]*(?:[ '-]\p{Lu}[\p{L}.]*){0,2})(?:\s*[—–:,]\s*|\s+-\s+|'s\s|\s+(?:is|has|works|lives|moved|prefers|phone|mobile|email)\b)`)
	skipNames    = map[string]bool{"The": true, "My": true, "Our": true, "User": true, "I": true, "Call": true, "Email": true, "Phone": true}
)

func route(text string) Routed {
	first := strings.SplitN(text, "\n", 2)[0]
	if !reListIntent.MatchString(first) {
		first = listMarker.ReplaceAllString(first, "") // "- Sarah Chen: ..." routes like "Sarah Chen: ..."
		text = listMarker.ReplaceAllString(text, "")
	}
	switch {
	case reListIntent.MatchString(first):
		name := "todos"
		if m := reNamedList.FindStringSubmatch(first); m != nil && !strings.EqualFold(m[1], "the") && !strings.EqualFold(m[1], "my") {
			name = strings.ToLower(m[1])
			if name == "grocery" || name == "groceries" {
				name = "shopping"
			}
			if name == "todo" || name == "to-do" {
				name = "todos"
			}
		} else if reShopping.MatchString(first) {
			name = "shopping"
		}
		return Routed{Path: "lists/" + name + ".md"}
	case reOrder.MatchString(first):
		return Routed{Path: "reference/standing-orders.md"}
	case rePhone.MatchString(text) || reEmail.MatchString(text):
		return contact(text)
	case rePreference.MatchString(first):
		return Routed{Path: "reference/preferences.md"}
	case reContact.MatchString(first):
		return contact(text)
	}
	return Routed{Path: "knowledge/facts.md"}
}

// contact routes to reference/contacts.md, under a section named after the
// person the text starts with. "Sarah Chen - Phone: 555-1234" becomes
// "Phone: 555-1234" under "## Sarah Chen"; a sentence ("Sarah's birthday is
// ...") is kept whole.
func contact(text string) Routed {
	r := Routed{Path: "reference/contacts.md", Entry: text}
	m := rePerson.FindStringSubmatchIndex(text)
	if m == nil {
		return r
	}
	name := strings.TrimSpace(text[m[2]:m[3]])
	if skipNames[strings.Fields(name)[0]] {
		return r
	}
	r.Section, r.Person = name, true
	if sep := strings.TrimSpace(text[m[3]:m[1]]); sep != "" && strings.ContainsAny(sep, "—–:,-") {
		if rest := strings.TrimSpace(text[m[1]:]); rest != "" {
			r.Entry = rest
		}
	}
	return r
}
