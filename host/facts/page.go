package facts

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/knowledge"
)

// Meta is an entity page's frontmatter.
type Meta struct {
	Title   string   `json:"title"`
	Aliases []string `json:"aliases,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	Created string   `json:"created,omitempty"`
	Updated string   `json:"updated,omitempty"`
}

// Entity is what a page says: its frontmatter and its facts in page order.
type Entity struct {
	Slug  string           `json:"slug"`
	Meta  Meta             `json:"meta"`
	Facts []knowledge.Fact `json:"facts"`
}

// Relations are the current facts' wikilinks: (attribute, target slug)
// pairs with the fact they come from.
func (e Entity) Relations() []Relation {
	var out []Relation
	for _, f := range e.Facts {
		if f.Status != Current {
			continue
		}
		for _, to := range Links(f.Value) {
			out = append(out, Relation{From: e.Slug, Relation: f.Attribute, To: to, FactID: f.ID, Source: f.Source, Since: f.Seen, Weight: f.Confidence})
		}
	}
	return out
}

// Relation is an edge of the entity graph.
type Relation struct {
	From     string  `json:"from"`
	Relation string  `json:"relation"`
	To       string  `json:"to"`
	FactID   string  `json:"factId"`
	Source   string  `json:"source,omitempty"`
	Since    string  `json:"since,omitempty"`
	Weight   float64 `json:"weight"`
}

// Page is a parsed entity page. Its lines are kept as they are (with their
// own line endings), so an unchanged page renders to the same bytes, and
// an edit changes only the lines it is about.
type Page struct {
	Entity
	// Problems are what could not be read as meant (bad frontmatter YAML,
	// a bad confidence); the rest of the page is read.
	Problems []string

	lines  []string   // with their line endings
	eol    string     // the page's line ending, for new lines
	fm     *yaml.Node // the frontmatter mapping; nil when there is none or it is not a mapping
	fmEnd  int        // lines[:fmEnd] are the frontmatter with its --- lines; 0 when none
	fmBad  bool       // a frontmatter block that is not a YAML mapping: left alone
	marker []byte     // per fact: its list marker
}

// Bytes is the page's content.
func (p *Page) Bytes() []byte {
	var b bytes.Buffer
	for _, l := range p.lines {
		b.WriteString(l)
	}
	return b.Bytes()
}

var (
	blockID  = regexp.MustCompile(`(?:^|\s)\^([A-Za-z0-9-]+)\s*$`)
	listItem = regexp.MustCompile(`^([-*+])[ \t]+(.*)$`)
)

// isSpace is \s of a regular expression: what separates a block id.
func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r' }

// isID reports whether s is an Obsidian block id: letters, digits, hyphens.
func isID(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return s != ""
}

// isKey reports whether s is an inline field's key: a letter, then
// letters, digits, _ and -.
func isKey(s string) bool {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '_' || r == '-')) {
			return false
		}
	}
	return s != ""
}

// Parse reads an entity page. It never fails: what it cannot read as a
// fact or as frontmatter stays on the page as text, and Problems says why
// when that may not be what the writer meant.
func Parse(slug string, data []byte) *Page {
	p := &Page{Entity: Entity{Slug: slug}, eol: "\n"}
	s := string(data)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			p.lines = append(p.lines, s)
			break
		}
		p.lines = append(p.lines, s[:i+1])
		s = s[i+1:]
	}
	if len(p.lines) > 0 && strings.HasSuffix(p.lines[0], "\r\n") {
		p.eol = "\r\n"
	}
	p.parse()
	return p
}

func text(l string) string { return strings.TrimRight(l, "\r\n") }

// fenced is, for each of p's lines, whether it is a code fence or fenced
// code, as host/markdown reads the body below the frontmatter.
func (p *Page) fenced() []bool {
	return append(make([]bool, p.fmEnd), markdown.Fenced(p.lines[p.fmEnd:])...)
}

func (p *Page) parse() {
	p.Meta, p.Facts, p.Problems, p.fm, p.fmEnd, p.fmBad, p.marker = Meta{}, nil, nil, nil, 0, false, nil
	p.parseFrontmatter()
	attr := ""
	fenced := p.fenced()
	for i := p.fmEnd; i < len(p.lines); i++ {
		if fenced[i] {
			continue
		}
		l := text(p.lines[i])
		if h, ok := strings.CutPrefix(l, "## "); ok {
			attr = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "#"))
			continue
		}
		if strings.HasPrefix(l, "# ") || l == "#" || l == "##" {
			attr = ""
			continue
		}
		if attr == "" {
			continue
		}
		m := listItem.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		f, ok := p.parseItem(m[2])
		if !ok {
			continue
		}
		f.Entity, f.Attribute, f.Line = p.Slug, attr, i+1
		p.Facts = append(p.Facts, f)
		p.marker = append(p.marker, m[1][0])
	}
	p.settle()
}

// settle derives ids for facts without one and every fact's status.
func (p *Page) settle() {
	ids := map[string]bool{}
	for _, f := range p.Facts {
		if f.HasID {
			ids[f.ID] = true
		}
	}
	by := map[string]string{}
	for i := range p.Facts {
		f := &p.Facts[i]
		if !f.HasID {
			f.ID = NewID(f.Entity, f.Attribute, f.Value, func(id string) bool { return ids[id] })
			ids[f.ID] = true
		}
		for _, old := range splitIDs(f.Supersedes) {
			if _, ok := by[old]; !ok {
				by[old] = f.ID
			}
		}
	}
	for i := range p.Facts {
		f := &p.Facts[i]
		f.SupersededBy = ""
		switch {
		case !f.Struck:
			f.Status = Current
		case f.ForgotOn != "":
			f.Status = Forgotten
		case by[f.ID] != "":
			f.Status, f.SupersededBy = Superseded, by[f.ID]
		default:
			f.Status = Retired
		}
	}
}

func splitIDs(s string) []string {
	var out []string
	for _, id := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		out = append(out, strings.TrimPrefix(id, "^"))
	}
	return out
}

// parseItem reads a list item's text as a fact.
func (p *Page) parseItem(body string) (knowledge.Fact, bool) {
	f := knowledge.Fact{Confidence: 1}
	body = strings.TrimRightFunc(body, isSpace)
	if i := strings.LastIndexByte(body, '^'); i >= 0 && (i == 0 || isSpace(rune(body[i-1]))) && isID(body[i+1:]) {
		f.ID, f.HasID = body[i+1:], true
		body = body[:i]
	}
	// Inline fields, from the end: [key:: value]. (By hand, not with a
	// regular expression anchored at the end, which Go's engine tries from
	// every position of the line: 4x the cost of a sync of entity pages.)
	var fields []knowledge.Field
	for {
		b := strings.TrimRightFunc(body, isSpace)
		if !strings.HasSuffix(b, "]") {
			break
		}
		open := strings.LastIndexByte(b, '[')
		if open < 0 {
			break
		}
		k, v, ok := strings.Cut(b[open+1:len(b)-1], "::")
		if !ok || !isKey(k) || strings.ContainsRune(v, ']') {
			break
		}
		fields = append(fields, knowledge.Field{Key: k, Value: strings.Trim(v, " \t")})
		body = strings.TrimRightFunc(b[:open], isSpace)
	}
	v := strings.TrimSpace(body)
	if inner, ok := strings.CutPrefix(v, "~~"); ok && len(inner) > 2 && strings.HasSuffix(inner, "~~") {
		v, f.Struck = strings.TrimSpace(inner[:len(inner)-2]), true
	}
	if v == "" || strings.HasPrefix(v, "[ ]") || strings.HasPrefix(strings.ToLower(v), "[x]") {
		return knowledge.Fact{}, false
	}
	f.Value = v
	slices.Reverse(fields)
	for _, fd := range fields {
		switch fd.Key {
		case "confidence":
			c, err := strconv.ParseFloat(fd.Value, 64)
			if err != nil || c < 0 || c > 1 {
				p.Problems = append(p.Problems, fmt.Sprintf("confidence %q of %q is not a number between 0 and 1; read as 1", fd.Value, v))
				f.Extra = append(f.Extra, fd)
				continue
			}
			f.Confidence = c
		case "seen":
			f.Seen = fd.Value
		case "confirmed":
			f.Confirmed = fd.Value
		case "until":
			f.Until = fd.Value
		case "forgotten":
			f.ForgotOn = fd.Value
		case "supersedes":
			f.Supersedes = fd.Value
		case "source":
			f.Source = fd.Value
		default:
			f.Extra = append(f.Extra, fd)
		}
	}
	return f, true
}

// parseFrontmatter reads a leading --- block, where host/markdown reads it.
func (p *Page) parseFrontmatter() {
	p.fmEnd = markdown.FrontmatterLines(p.lines)
	if p.fmEnd == 0 {
		return
	}
	end := p.fmEnd - 1
	var doc yaml.Node
	raw := strings.Join(p.lines[1:end], "")
	if err := yaml.Unmarshal([]byte(raw), &doc); err != nil {
		p.fmBad = true
		p.Problems = append(p.Problems, "frontmatter is not valid YAML ("+firstLine(err.Error())+"); title, aliases and tags not read")
		return
	}
	if len(doc.Content) == 0 {
		p.fm = &yaml.Node{Kind: yaml.MappingNode}
		return
	}
	if doc.Content[0].Kind != yaml.MappingNode {
		p.fmBad = true
		p.Problems = append(p.Problems, "frontmatter is not a YAML mapping; title, aliases and tags not read")
		return
	}
	p.fm = doc.Content[0]
	for i := 0; i+1 < len(p.fm.Content); i += 2 {
		k, v := p.fm.Content[i].Value, p.fm.Content[i+1]
		switch k {
		case "title":
			p.Meta.Title = scalar(v)
		case "aliases", "alias":
			p.Meta.Aliases = list(v)
		case "tags", "tag":
			p.Meta.Tags = list(v)
		case "created":
			p.Meta.Created = scalar(v)
		case "updated":
			p.Meta.Updated = scalar(v)
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func scalar(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// list reads a YAML list, or one string (Obsidian accepts both; tags may
// also be one string of comma- or space-separated tags).
func list(n *yaml.Node) []string {
	var out []string
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode && c.Value != "" {
				out = append(out, c.Value)
			}
		}
	case yaml.ScalarNode:
		if n.Value != "" {
			out = append(out, n.Value)
		}
	}
	return out
}

// FormatLine is a fact's list item as memhost writes it (without a line
// ending).
func FormatLine(f knowledge.Fact, marker byte) string {
	var b strings.Builder
	b.WriteByte(marker)
	b.WriteByte(' ')
	if f.Struck {
		b.WriteString("~~" + f.Value + "~~")
	} else {
		b.WriteString(f.Value)
	}
	field := func(k, v string) {
		if v != "" {
			b.WriteString(" [" + k + ":: " + v + "]")
		}
	}
	if f.Confidence != 1 {
		field("confidence", FormatConfidence(f.Confidence))
	}
	field("seen", f.Seen)
	if f.Confirmed != f.Seen {
		field("confirmed", f.Confirmed)
	}
	field("until", f.Until)
	field("forgotten", f.ForgotOn)
	field("supersedes", f.Supersedes)
	field("source", f.Source)
	for _, x := range f.Extra {
		b.WriteString(" [" + x.Key + ":: " + x.Value + "]")
	}
	if f.ID != "" {
		b.WriteString(" ^" + f.ID)
	}
	return b.String()
}

// Render writes the page memhost makes of e: frontmatter, the title as H1,
// then a section per attribute in the order of the attributes' first
// facts. Parse(Render(e)).Entity is e for an e that Parse gave.
func Render(e Entity) []byte {
	var b strings.Builder
	b.WriteString(renderFrontmatter(e.Meta))
	title := e.Meta.Title
	if title == "" {
		title = e.Slug
	}
	b.WriteString("# " + title + "\n")
	var order []string
	groups := map[string][]knowledge.Fact{}
	heading := map[string]string{}
	for _, f := range e.Facts {
		k := AttrKey(f.Attribute)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
			heading[k] = f.Attribute
		}
		groups[k] = append(groups[k], f)
	}
	for _, k := range order {
		b.WriteString("\n## " + heading[k] + "\n")
		for _, f := range groups[k] {
			b.WriteString(FormatLine(f, '-') + "\n")
		}
	}
	return []byte(b.String())
}

func renderFrontmatter(m Meta) string {
	n := &yaml.Node{Kind: yaml.MappingNode}
	setMeta(n, m)
	return "---\n" + encodeYAML(n) + "---\n"
}

// setMeta writes m's fields into a frontmatter mapping, keeping its other
// keys and their order; empty fields are removed.
func setMeta(n *yaml.Node, m Meta) {
	set := func(key string, v *yaml.Node) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				if v == nil {
					n.Content = slices.Delete(n.Content, i, i+2)
				} else {
					n.Content[i+1] = v
				}
				return
			}
		}
		if v == nil {
			return
		}
		// A key added goes after the last of the keys before it in
		// memhost's order, so that a page memhost made stays in its form.
		at := 0
		for _, before := range metaOrder[:slices.Index(metaOrder, key)] {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == before {
					at = max(at, i+2)
				}
			}
		}
		n.Content = slices.Insert(n.Content, at, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	}
	str := func(s string) *yaml.Node {
		if s == "" {
			return nil
		}
		v := &yaml.Node{Kind: yaml.ScalarNode, Value: s}
		if s != strings.TrimSpace(s) || needsQuote(s) {
			v.Style = yaml.DoubleQuotedStyle
		}
		return v
	}
	seq := func(ss []string) *yaml.Node {
		if len(ss) == 0 {
			return nil
		}
		v := &yaml.Node{Kind: yaml.SequenceNode}
		for _, s := range ss {
			v.Content = append(v.Content, str(s))
		}
		return v
	}
	set("title", str(m.Title))
	if hasKey(n, "alias") {
		set("alias", seq(m.Aliases))
	} else {
		set("aliases", seq(m.Aliases))
	}
	if hasKey(n, "tag") {
		set("tag", seq(m.Tags))
	} else {
		set("tags", seq(m.Tags))
	}
	set("created", str(m.Created))
	set("updated", str(m.Updated))
}

// metaOrder is the order of the frontmatter keys memhost writes.
var metaOrder = []string{"title", "aliases", "alias", "tags", "tag", "created", "updated"}

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// needsQuote: a plain scalar that YAML would read as something other than
// this string (a number, a bool, null) is quoted; dates stay plain, as
// Obsidian writes them.
func needsQuote(s string) bool {
	var v any
	if err := yaml.Unmarshal([]byte("x: "+s), &v); err != nil {
		return true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return true
	}
	switch x := m["x"].(type) {
	case string:
		return x != s
	case interface{ Format(string) string }: // a timestamp: plain YYYY-MM-DD
		return x.Format(Date) != s
	}
	return true
}

func encodeYAML(n *yaml.Node) string {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		panic(err) // a mapping of strings always encodes
	}
	enc.Close()
	s := b.String()
	if s == "{}\n" {
		return ""
	}
	return s
}
