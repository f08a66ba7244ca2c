// Package route decides where remember writes a text that names no page:
// fixed rules (a phone number or a person's name goes to the contacts, a
// to-do to the lists, ...; README.md, "Where `remember` writes") over the
// pages a notebook holds. It imports host/notebook.
package route

import (
	"path"
	"regexp"
	"strings"
	"unicode"

	"github.com/memhost/memhost/host/notebook"
)

// Routed is where Route sends a text.
type Routed struct {
	Path    string // page, relative to the notebook
	Section string // H2 section; "" lets Place choose one on the page
	Entry   string // the text to write; "" means the text as given
	Person  bool   // Section is a person's name from the text
}

// Pages is what Route needs to know of the notebook.
type Pages interface {
	Exists(rel string) bool
	// Sections returns the page's H2 headings; none when it is missing.
	Sections(rel string) []string
}

// ContactsPage holds a section per person; Route sends a text there only
// when it is about a contact.
const ContactsPage = "reference/contacts.md"

// Route decides where remember puts text. With a category, the page is
// file in it (or the category's usual page); without one, the first of
// rules that matches the text decides.
//
// With a file but no category, an existing page of that name in lists/,
// reference/ or knowledge/ is used; otherwise the page is created in the
// category the rules choose.
func Route(text, category, file string, nb Pages) Routed {
	if category == "" && file != "" {
		for _, c := range []string{notebook.Lists, notebook.Reference, notebook.Knowledge} {
			if nb.Exists(c + "/" + file + ".md") {
				return Routed{Path: c + "/" + file + ".md"}
			}
		}
	}
	r := route(text, nb)
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
	notebook.Lists:     "todos.md",
	notebook.Reference: "notes.md",
	notebook.Knowledge: "facts.md",
}

// text is what the rules look at: the first line and the whole text, list
// markers dropped (unless the marker is a checkbox, which makes a list
// item), and the notebook.
type text struct {
	first, all string
	nb         Pages
}

// rule is one line of remember's routing: when match accepts a text, to
// says where it goes.
type rule struct {
	name  string
	match func(t text) bool
	to    func(t text) Routed
}

// rules are remember's routing without a category, tried in order. The
// contacts page takes a text only when it is about a person: a contact
// detail (a phone number, an email address), a contact word (address,
// birthday, lives in...) whose subject is a person and not a thing's
// place ("The VPN config lives in vault/vpn" is a fact), or a text that
// starts with the name of a person the page already has, in full or as a
// first name that reads as a person's (knownPerson).
var rules = []rule{
	{"list item", func(t text) bool { return reListIntent.MatchString(t.first) }, toList},
	{"standing order", func(t text) bool { return reOrder.MatchString(t.first) }, to("reference/standing-orders.md")},
	{"contact detail", func(t text) bool { return hasPhone(t.all) || reEmail.MatchString(t.all) }, toContact},
	{"preference", func(t text) bool { return rePreference.MatchString(t.first) }, to("reference/preferences.md")},
	{"known person", func(t text) bool { return knownPerson(t, false) != "" }, toKnownPerson},
	{"person's detail", func(t text) bool {
		return reContact.MatchString(t.first) && aboutPerson(t) && !rePathLike.MatchString(t.first)
	}, toContact},
	{"fact", func(text) bool { return true }, to("knowledge/facts.md")},
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
	// reRelative is a person named by their relation to the user.
	reRelative = regexp.MustCompile(`(?i)^\s*(?:(?:my|our)\s+)?(?:mum|mom|mother|dad|father|sister|brother|wife|husband|partner|son|daughter|aunt|uncle|grandma|grandmother|grandpa|grandfather|cousin|niece|nephew|boss|manager|dentist|doctor|landlord|landlady|neighbou?r|friend|colleague|plumber|electrician|accountant|lawyer)\b`)
	// rePathLike is a path or an address on a network: what a thing, not a
	// person, lives in.
	rePathLike = regexp.MustCompile("(?:^|\\s)(?:~|\\.{0,2})/\\S|\\b[A-Za-z]:\\\\|://|`|\\b[\\w.-]*[A-Za-z][\\w.-]*/[\\w./-]*[A-Za-z]")
	// reNotPhone are numbers a phone number's pattern also matches: dates
	// and IPv4 addresses.
	reNotPhone = regexp.MustCompile(`^(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{1,3}(?:\.\d{1,3}){3})$`)
	skipNames  = map[string]bool{"The": true, "My": true, "Our": true, "User": true, "I": true, "Call": true, "Email": true, "Phone": true}
)

func route(s string, nb Pages) Routed {
	t := text{first: strings.SplitN(s, "\n", 2)[0], all: s, nb: nb}
	if !reListIntent.MatchString(t.first) {
		t.first = notebook.StripListMarker(t.first) // "- Sarah Chen: ..." routes like "Sarah Chen: ..."
		t.all = notebook.StripListMarker(t.all)
	}
	for _, r := range rules {
		if r.match(t) {
			return r.to(t)
		}
	}
	panic("notebook: no routing rule matched") // the last rule matches every text
}

func to(page string) func(text) Routed {
	return func(text) Routed { return Routed{Path: page} }
}

// toList names the list: lists/<name>.md for "<name> list",
// lists/shopping.md for buying, else lists/todos.md.
func toList(t text) Routed {
	name := "todos"
	if m := reNamedList.FindStringSubmatch(t.first); m != nil && !strings.EqualFold(m[1], "the") && !strings.EqualFold(m[1], "my") {
		name = strings.ToLower(m[1])
		if name == "grocery" || name == "groceries" {
			name = "shopping"
		}
		if name == "todo" || name == "to-do" {
			name = "todos"
		}
	} else if reShopping.MatchString(t.first) {
		name = "shopping"
	}
	return Routed{Path: "lists/" + name + ".md"}
}

// hasPhone reports whether s holds a phone number: seven digits or more,
// not a date or an IP address.
func hasPhone(s string) bool {
	for _, m := range rePhone.FindAllString(s, -1) {
		digits := 0
		for _, r := range m {
			if r >= '0' && r <= '9' {
				digits++
			}
		}
		if digits >= 7 && !reNotPhone.MatchString(strings.TrimSpace(m)) {
			return true
		}
	}
	return false
}

// personName returns the name of the person text starts with ("Sarah
// Chen - Phone: ...", "Bob's email ...", "Tom lives in ..."), or "".
func personName(s string) (name string, m []int) {
	m = rePerson.FindStringSubmatchIndex(s)
	if m == nil {
		return "", nil
	}
	name = strings.TrimSpace(s[m[2]:m[3]])
	if skipNames[strings.Fields(name)[0]] {
		return "", nil
	}
	return name, m
}

// aboutPerson reports whether the text's subject is a person: a name, a
// relation ("my sister's ..."), or a person of the contacts page however
// it is written ("sarah's birthday ...").
func aboutPerson(t text) bool {
	name, _ := personName(t.first)
	return name != "" || reRelative.MatchString(t.first) || knownPerson(t, true) != ""
}

// toContact routes to the contacts page, under a section named after the
// person the text starts with. "Sarah Chen - Phone: 555-1234" becomes
// "Phone: 555-1234" under "## Sarah Chen"; a sentence ("Sarah's birthday
// is ...") is kept whole.
func toContact(t text) Routed {
	r := Routed{Path: ContactsPage, Entry: t.all}
	name, m := personName(t.all)
	if name == "" {
		if known := knownPerson(t, true); known != "" {
			r.Section, r.Person = known, true
		}
		return r
	}
	r.Section, r.Person = name, true
	if sep := strings.TrimSpace(t.all[m[3]:m[1]]); sep != "" && strings.ContainsAny(sep, "—–:,-") {
		if rest := strings.TrimSpace(t.all[m[1]:]); rest != "" {
			r.Entry = rest
		}
	}
	return r
}

// reLeadingName is up to three capitalised words at the start of a text;
// reLeadingWords up to three words; reWord one word of them.
var (
	reLeadingName  = regexp.MustCompile(`^\s*\p{Lu}[\p{L}.'-]*(?:\s+\p{Lu}[\p{L}.'-]*){0,2}`)
	reLeadingWords = regexp.MustCompile(`^\s*[\p{L}.'-]+(?:\s+[\p{L}.'-]+){0,2}`)
	reWord         = regexp.MustCompile(`\S+`)
)

// rePersonNext is what follows a first name when the text is about the
// person: a possessive, a colon or a dash ("Mark's birthday ...", "May:
// nut allergy", "Bill - Team: finance"), or a verb of what people do, in
// the third person or the past, maybe after is/was/has/had ("Will moved
// to Berlin", "Mark is moving to Leeds"). The verbs are never base forms:
// a name that is also a word ("Will", "May", "Mark", "Bill") is followed
// by one where it is the word ("Will the build pass", "Mark the
// invoice"). is, was and has alone are not enough: "May is our busiest
// month".
var rePersonNext = regexp.MustCompile(`^(?:['’]s\b|\s*:|\s+-\s|\s*[—–]|\s+(?:(?:is|was|has|had|has been)\s+)?(?:` +
	`moved|moves|moving|lives|lived|living|works|worked|working|prefers|preferred|likes|liked|loves|loved|hates|hated|` +
	`wants|wanted|needs|needed|said|says|called|calls|phoned|emailed|texted|asked|asks|told|tells|got|gets|` +
	`joined|joins|joining|left|leaves|leaving|started|starting|retired|married|met|visited|visiting)\b)`)

// knownPerson returns the contacts page's section that the text's leading
// name refers to (PersonSection: the whole heading, or a first name that
// only one heading has), or "". A name must be capitalised unless anyCase:
// "will you ..." is not about Will Smith, but "sarah's birthday is ..."
// is about Sarah Chen, a contact word having said that it is about a
// person. A one-word name must be followed by rePersonNext, for a
// sentence's first word is capitalised whether or not it is a name:
// "Will moved to Berlin" is about Will Smith, "Will the build pass?" is
// not; "Will Smith ..." is about him whatever follows.
func knownPerson(t text, anyCase bool) string {
	if t.nb == nil {
		return ""
	}
	lead := reLeadingName
	if anyCase {
		lead = reLeadingWords
	}
	words := regexp.MustCompile(`\S+`).FindAllStringIndex(lead.FindString(t.first), -1)
	if len(words) == 0 || skipNames[upperFirst(t.first[words[0][0]:words[0][1]])] {
		return ""
	}
	sections := t.nb.Sections(ContactsPage)
	if len(sections) == 0 {
		return ""
	}
	for n := len(words); n > 0; n-- {
		end := words[n-1][1]
		if w := t.first[words[n-1][0]:end]; strings.HasSuffix(w, "'s") || strings.HasSuffix(w, "'S") {
			end -= len("'s")
		}
		name := strings.Join(strings.Fields(t.first[:end]), " ")
		if s, ok := notebook.PersonIn(sections, name); ok && (n > 1 || rePersonNext.MatchString(t.first[end:])) {
			return s
		}
	}
	return ""
}

func toKnownPerson(t text) Routed {
	r := toContact(t) // "Sarah Chen - Team: platform" writes "Team: platform"
	r.Section, r.Person = knownPerson(t, false), true
	return r
}

func upperFirst(w string) string {
	r := []rune(w)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}
