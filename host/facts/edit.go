package facts

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/memhost/memhost/knowledge"
)

// New is the page of a new entity called name (its title), made on day.
func New(slug, name, day string) *Page {
	return Parse(slug, Render(Entity{Slug: slug, Meta: Meta{Title: name, Tags: []string{"entity"}, Created: day, Updated: day}}))
}

// Addition is a fact to add to a page.
type Addition struct {
	Attribute  string
	Value      string
	Source     string
	Confidence float64 // 0 means 1
	// Keep adds the value beside the attribute's current values instead of
	// superseding them (an attribute with several values).
	Keep bool
	// Replace names current facts (of any attribute) the new one
	// supersedes as well: near-duplicates found by the caller.
	Replace []string
	// OnlyIfNewer leaves the page alone (Outcome.Stale) when a fact the
	// new one would supersede was last confirmed after the day given: an
	// old conversation consolidated late must not undo what is known now.
	OnlyIfNewer bool
}

// Outcome says what Add did.
type Outcome struct {
	Fact knowledge.Fact `json:"fact"`
	// Confirmed: the value was already current; its last-confirmed date
	// (and confidence, when higher) were updated and nothing was added.
	Confirmed  bool             `json:"confirmed"`
	Superseded []knowledge.Fact `json:"superseded,omitempty"`
	// Stale: nothing was written, Fact is the newer current fact (see
	// Addition.OnlyIfNewer).
	Stale bool `json:"stale,omitempty"`
}

// ErrNoFact means no fact on the page has the id given.
var ErrNoFact = errors.New("no such fact")

// ErrNotCurrent means the fact named is already struck through.
var ErrNotCurrent = errors.New("the fact is not current")

// Add applies a to the page on day (YYYY-MM-DD): an equal current value
// of the attribute is confirmed; otherwise the attribute's current values
// (unless Keep) and the facts named in Replace are struck through, until
// day, and the new fact, naming them in supersedes, is added at the end
// of its section (made at the end of the page when missing).
func (p *Page) Add(a Addition, day string) (Outcome, error) {
	if err := CheckAttribute(a.Attribute); err != nil {
		return Outcome{}, err
	}
	if err := CheckValue(a.Value); err != nil {
		return Outcome{}, err
	}
	if err := CheckSource(a.Source); err != nil {
		return Outcome{}, err
	}
	conf := a.Confidence
	if conf == 0 {
		conf = 1
	}
	if conf < 0 || conf > 1 {
		return Outcome{}, fmt.Errorf("confidence %g is not between 0 and 1", conf)
	}
	value := strings.TrimSpace(a.Value)
	key, vkey := AttrKey(a.Attribute), ValueKey(value)
	var out Outcome
	for i, f := range p.Facts {
		if f.Status == Current && AttrKey(f.Attribute) == key && ValueKey(f.Value) == vkey {
			if day > f.LastConfirmed() {
				f.Confirmed = day
			}
			f.Confidence = max(f.Confidence, conf)
			if f.Source == "" {
				f.Source = a.Source
			}
			p.setFact(i, f)
			p.touch(day)
			p.parse()
			out.Fact, out.Confirmed = p.Facts[i], true
			return out, nil
		}
	}
	var old []int
	for i, f := range p.Facts {
		if f.Status != Current {
			continue
		}
		if (!a.Keep && AttrKey(f.Attribute) == key) || containsID(a.Replace, f.ID) {
			old = append(old, i)
		}
	}
	var ids []string
	for _, i := range old {
		if a.OnlyIfNewer && p.Facts[i].LastConfirmed() > day {
			return Outcome{Fact: p.Facts[i], Stale: true}, nil
		}
		ids = append(ids, p.Facts[i].ID)
	}
	taken := map[string]bool{}
	for _, f := range p.Facts {
		taken[f.ID] = true
	}
	nf := knowledge.Fact{Entity: p.Slug, Attribute: a.Attribute, Value: value, Confidence: conf, Seen: day,
		Source: a.Source, Supersedes: strings.Join(ids, ", ")}
	nf.ID = NewID(p.Slug, a.Attribute, value, func(id string) bool { return taken[id] })
	for _, i := range old {
		f := p.Facts[i]
		f.Struck, f.Until = true, day
		p.setFact(i, f)
	}
	at := p.sectionEnd(key)
	if at < 0 {
		p.appendSection(a.Attribute)
		at = len(p.lines)
	}
	p.insert(at, FormatLine(nf, '-'))
	p.touch(day)
	p.parse()
	for _, f := range p.Facts {
		if f.ID == nf.ID {
			out.Fact = f
		}
		if containsID(ids, f.ID) {
			out.Superseded = append(out.Superseded, f)
		}
	}
	return out, nil
}

func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if strings.TrimPrefix(x, "^") == id {
			return true
		}
	}
	return false
}

// Forget strikes through the current fact with the id given, marking it
// forgotten on day. The line stays on the page: the audit trail.
func (p *Page) Forget(id, day string) (knowledge.Fact, error) {
	for i, f := range p.Facts {
		if f.ID != id {
			continue
		}
		if f.Status != Current {
			return f, fmt.Errorf("%w: %s is %s", ErrNotCurrent, id, f.Status)
		}
		f.Struck, f.ForgotOn = true, day
		p.setFact(i, f)
		p.touch(day)
		p.parse()
		return p.Facts[i], nil
	}
	return knowledge.Fact{}, fmt.Errorf("%w: %s", ErrNoFact, id)
}

// Find returns the fact with the id given.
func (p *Page) Find(id string) (knowledge.Fact, bool) {
	for _, f := range p.Facts {
		if f.ID == id {
			return f, true
		}
	}
	return knowledge.Fact{}, false
}

// setFact rewrites fact i's line in memhost's form, keeping its marker
// and writing its id.
func (p *Page) setFact(i int, f knowledge.Fact) {
	f.HasID = true
	line := f.Line - 1
	p.lines[line] = FormatLine(f, p.marker[i]) + lineEnd(p.lines[line], p.eol)
}

func lineEnd(l, eol string) string {
	switch {
	case strings.HasSuffix(l, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(l, "\n"):
		return "\n"
	}
	return eol
}

// sectionEnd is the line index after the last fact, or else the last
// non-blank line, of the first section of the attribute; -1 when the page
// has no such section.
func (p *Page) sectionEnd(key string) int {
	start := -1
	fenced := p.fenced()
	for i := p.fmEnd; i < len(p.lines); i++ {
		if fenced[i] {
			continue
		}
		l := text(p.lines[i])
		if h, ok := strings.CutPrefix(l, "## "); ok {
			if start >= 0 {
				break
			}
			if AttrKey(strings.TrimRight(strings.TrimSpace(h), "#")) == key {
				start = i
			}
			continue
		}
		if start >= 0 && strings.HasPrefix(l, "# ") {
			break
		}
	}
	if start < 0 {
		return -1
	}
	end := start + 1
	lastFact := -1
	for _, f := range p.Facts {
		if AttrKey(f.Attribute) == key && f.Line-1 > start {
			if next := p.nextHeading(start); f.Line-1 < next {
				lastFact = max(lastFact, f.Line-1)
			}
		}
	}
	if lastFact >= 0 {
		// After the fact's nested lines, which belong to it.
		end := lastFact + 1
		for end < len(p.lines) && strings.TrimSpace(p.lines[end]) != "" && strings.IndexAny(p.lines[end], " \t") == 0 {
			end++
		}
		return end
	}
	next := p.nextHeading(start)
	for i := start + 1; i < next; i++ {
		if strings.TrimSpace(p.lines[i]) != "" {
			end = i + 1
		}
	}
	return end
}

// nextHeading is the index of the first H1 or H2 line after line start.
func (p *Page) nextHeading(start int) int {
	fenced := p.fenced()
	for i := start + 1; i < len(p.lines); i++ {
		l := text(p.lines[i])
		if !fenced[i] && (strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "# ")) {
			return i
		}
	}
	return len(p.lines)
}

// appendSection adds "## attribute" at the end of the page, after a blank
// line.
func (p *Page) appendSection(attr string) {
	n := len(p.lines)
	if n > 0 && !strings.HasSuffix(p.lines[n-1], "\n") {
		p.lines[n-1] += p.eol
	}
	if n > 0 && strings.TrimSpace(p.lines[n-1]) != "" && n > p.fmEnd {
		p.lines = append(p.lines, p.eol)
	}
	p.lines = append(p.lines, "## "+attr+p.eol)
}

// insert puts a line before index at.
func (p *Page) insert(at int, line string) {
	if at > 0 && !strings.HasSuffix(p.lines[at-1], "\n") {
		p.lines[at-1] += p.eol
	}
	p.lines = append(p.lines, "")
	copy(p.lines[at+1:], p.lines[at:])
	p.lines[at] = line + p.eol
}

// touch sets the frontmatter's updated date (adding a frontmatter when the
// page has none; a frontmatter that is not a YAML mapping is left alone).
func (p *Page) touch(day string) {
	if p.fmBad {
		return
	}
	m := p.Meta
	m.Updated = day
	if m.Created == "" {
		m.Created = day
	}
	if m.Title == "" && p.fm == nil {
		m.Title = p.Slug
	}
	p.SetMeta(m)
}

// SetMeta replaces the frontmatter's title, aliases, tags and dates,
// keeping its other keys. A frontmatter that is not a YAML mapping is left
// alone.
func (p *Page) SetMeta(m Meta) {
	if p.fmBad {
		return
	}
	n := p.fm
	if n == nil {
		n = &yaml.Node{Kind: yaml.MappingNode}
	}
	setMeta(n, m)
	var fm []string
	fm = append(fm, "---"+p.eol)
	for _, l := range strings.SplitAfter(encodeYAML(n), "\n") {
		if l != "" {
			fm = append(fm, strings.TrimSuffix(l, "\n")+p.eol)
		}
	}
	fm = append(fm, "---"+p.eol)
	p.lines = append(fm, p.lines[p.fmEnd:]...)
	p.parse()
}
