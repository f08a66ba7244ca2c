package pagehtml

import (
	"bytes"
	"html"
	"html/template"
	"regexp"
	"strings"

	"github.com/memhost/memhost/host/markdown"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"go.yaml.in/yaml/v3"
)

// Obsidian's page metadata, drawn the way Obsidian draws it rather than as
// markdown: YAML frontmatter (every entity page host/facts writes has it)
// as a properties table, and Dataview's inline fields, [key:: value] and
// (key:: value) within a line and key:: value at the start of one, as a
// key label before the value.

// props is a page's frontmatter.
type props struct {
	rows  []prop
	raw   string // the YAML, shown as it is when it does not parse
	lines int    // the frontmatter's last line (the closing ---)
}

type prop struct {
	Key    string
	Values []string // a list: one chip each
	Value  string   // a scalar, or a nested value as YAML
	List   bool
}

// frontmatter splits a page into its frontmatter (nil when it has none),
// where host/markdown reads it for every other part of memhost, and the
// page with the frontmatter's bytes blanked, newlines kept, so that
// offsets and line numbers in it are the file's.
func frontmatter(src []byte) (*props, []byte) {
	yamlStart, yamlEnd, end, ok := markdown.FrontmatterSpan(string(src))
	if !ok {
		return nil, src
	}
	p := &props{raw: string(src[yamlStart:yamlEnd]), lines: bytes.Count(src[:end], []byte("\n"))}
	if src[end-1] != '\n' {
		p.lines++
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(p.raw), &doc); err == nil && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		m := doc.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			r := prop{Key: k.Value}
			switch v.Kind {
			case yaml.ScalarNode:
				r.Value = v.Value
			case yaml.SequenceNode:
				r.List = true
				for _, c := range v.Content {
					if c.Kind == yaml.ScalarNode {
						r.Values = append(r.Values, c.Value)
					} else {
						b, _ := yaml.Marshal(c)
						r.Values = append(r.Values, strings.TrimSpace(string(b)))
					}
				}
			default:
				b, _ := yaml.Marshal(v)
				r.Value = strings.TrimSpace(string(b))
			}
			p.rows = append(p.rows, r)
		}
		p.raw = ""
	} else if strings.TrimSpace(p.raw) == "" {
		p.raw = ""
	}
	body := bytes.Clone(src)
	for i := range end {
		if body[i] != '\n' {
			body[i] = ' '
		}
	}
	return p, body
}

// html draws the properties table. Values are escaped; a value that is a
// wikilink ("[[acme-corp]]", as Obsidian writes links in properties) is a
// link; tags are shown as #tag.
func (p *props) html(resolve Resolver) template.HTML {
	var b strings.Builder
	b.WriteString(`<table class="props" aria-label="Properties"><tbody>`)
	value := func(key, v string) string {
		if n, l := parseWikilink([]byte(v), resolve); n != nil && l == len(v) {
			return wikiHTML(n)
		}
		if key == "tags" || key == "tag" {
			return "#" + html.EscapeString(strings.TrimPrefix(v, "#"))
		}
		return html.EscapeString(v)
	}
	for _, r := range p.rows {
		b.WriteString(`<tr><th scope="row">` + html.EscapeString(r.Key) + `</th><td>`)
		if r.List {
			class := "prop"
			if r.Key == "tags" || r.Key == "tag" {
				class += " tag"
			}
			for i, v := range r.Values {
				if i > 0 {
					b.WriteString(" ")
				}
				b.WriteString(`<span class="` + class + `">` + value(r.Key, v) + `</span>`)
			}
		} else {
			b.WriteString(value(r.Key, r.Value))
		}
		b.WriteString(`</td></tr>`)
	}
	if p.raw != "" {
		b.WriteString(`<tr><th scope="row">frontmatter</th><td><span class="error">not valid YAML</span><pre>` + html.EscapeString(p.raw) + `</pre></td></tr>`)
	}
	b.WriteString(`</tbody></table>`)
	return template.HTML(b.String())
}

// Inline fields.

var (
	kindField    = ast.NewNodeKind("InlineField")
	kindFieldKey = ast.NewNodeKind("FieldKey")
	// fieldKey is a Dataview key: words, spaces, - and _, then "::".
	fieldKeyRe = regexp.MustCompile(`^([\p{L}\p{N}][\p{L}\p{N} _-]*?)::[ \t]*`)
)

// field is [key:: value] or (key:: value); its children are the value.
type field struct {
	ast.BaseInline
	Key string
	at  int // source offset of its bracket
}

func (n *field) Kind() ast.NodeKind { return kindField }
func (n *field) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Key": n.Key}, nil)
}

// lineKey is the key of a line that is a field (key:: value); the value
// follows it as the line's own inlines.
type lineKey struct {
	ast.BaseInline
	Key string
	at  int // source offset of the line
}

func (n *lineKey) Kind() ast.NodeKind { return kindFieldKey }
func (n *lineKey) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Key": n.Key}, nil)
}

type fieldExt struct{ resolve Resolver }

func (e *fieldExt) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithInlineParsers(util.Prioritized(&fieldParser{e.resolve}, 198)), // before wikilinks and links
		parser.WithASTTransformers(util.Prioritized(lineFields{}, 500), util.Prioritized(blockIDs{}, 501)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(fieldRenderer{}, 198)))
}

type fieldParser struct{ resolve Resolver }

// maxFieldDepth bounds the brackets nested in an inline field's value.
const maxFieldDepth = 8

func (p *fieldParser) Trigger() []byte { return []byte{'[', '('} }

// Parse reads [key:: value] or (key:: value): the value runs to the
// bracket that closes the opening one, wikilinks in it are links.
func (p *fieldParser) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	line, seg := block.PeekLine()
	if len(line) < 5 {
		return nil
	}
	open := line[0]
	closer := byte(']')
	if open == '(' {
		closer = ')'
	}
	m := fieldKeyRe.FindSubmatchIndex(line[1:])
	if m == nil {
		return nil
	}
	depth, end := 0, -1
	for i := 1 + m[1]; i < len(line) && end < 0; i++ {
		switch line[i] {
		case open:
			// Bounded, so that "[k:: " repeated does not read the rest
			// of the line at each: each byte is read by at most
			// maxFieldDepth+1 fields' scans.
			if depth++; depth > maxFieldDepth {
				return nil
			}
		case closer:
			if depth == 0 {
				end = i
			}
			depth--
		case '\n':
			return nil
		}
	}
	if end < 0 {
		return nil
	}
	n := &field{Key: strings.TrimSpace(string(line[1+m[2] : 1+m[3]])), at: seg.Start}
	// The value: text, and the wikilinks in it.
	from := 1 + m[1]
	for i := from; i < end; {
		if w, l := parseWikilink(line[i:end], p.resolve); w != nil {
			if i > from {
				n.AppendChild(n, ast.NewTextSegment(text.NewSegment(seg.Start+from, seg.Start+i)))
			}
			w.at = seg.Start + i
			n.AppendChild(n, w)
			i += l
			from = i
			continue
		}
		i++
	}
	if end > from {
		n.AppendChild(n, ast.NewTextSegment(text.NewSegment(seg.Start+from, seg.Start+end)))
	}
	block.Advance(end + 1)
	return n
}

// lineFields finds the lines of paragraphs and list items that are fields
// (key:: value) and puts a key label in place of "key:: ".
type lineFields struct{}

func (lineFields) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var blocks []ast.Node
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && (n.Kind() == ast.KindParagraph || n.Kind() == ast.KindTextBlock) {
			blocks = append(blocks, n)
		}
		return ast.WalkContinue, nil
	})
	for _, b := range blocks {
		lines := b.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			m := fieldKeyRe.FindSubmatchIndex(src[seg.Start:seg.Stop])
			if m == nil || len(bytes.TrimSpace(src[seg.Start+m[1]:seg.Stop])) == 0 {
				continue
			}
			keyLine(b, seg.Start, seg.Start+m[1], strings.TrimSpace(string(src[seg.Start+m[2]:seg.Start+m[3]])))
		}
	}
}

// keyLine replaces the text from start to end (a line's "key:: ") in the
// inlines of b with a key label. It leaves the line alone when anything
// but plain text lies there.
func keyLine(b ast.Node, start, end int, key string) {
	var drop []*ast.Text
	var trim *ast.Text
	var before ast.Node
	for c := b.FirstChild(); c != nil; c = c.NextSibling() {
		at := startOf(c)
		if at < 0 {
			return // an inline without a known place: leave the line alone
		}
		if at < start {
			continue
		}
		if at >= end {
			before = c
			break
		}
		t, ok := c.(*ast.Text)
		if !ok {
			return
		}
		if t.Segment.Stop <= end {
			drop = append(drop, t)
			continue
		}
		trim, before = t, t
		break
	}
	for _, t := range drop {
		b.RemoveChild(b, t)
	}
	if trim != nil {
		trim.Segment = trim.Segment.WithStart(end)
	}
	k := &lineKey{Key: key, at: start}
	if before == nil {
		b.AppendChild(b, k)
	} else {
		b.InsertBefore(b, before, k)
	}
	// A field line is a line of its own, as Dataview shows it.
	if prev, ok := k.PreviousSibling().(*ast.Text); ok && prev.SoftLineBreak() {
		prev.SetHardLineBreak(true)
	}
}

// startOf is the source offset where an inline begins, -1 when unknown.
func startOf(n ast.Node) int {
	switch n := n.(type) {
	case *ast.Text:
		return n.Segment.Start
	case *wikilink:
		return n.at
	case *field:
		return n.at
	case *lineKey:
		return n.at
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if s := startOf(c); s >= 0 {
			return s
		}
	}
	return -1
}

type fieldRenderer struct{}

func (fieldRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindField, func(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			w.WriteString(`<span class="field"><span class="field-key">` + html.EscapeString(node.(*field).Key) + `</span> <span class="field-value">`)
		} else {
			w.WriteString(`</span></span>`)
		}
		return ast.WalkContinue, nil
	})
	reg.Register(kindFieldKey, func(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			w.WriteString(`<span class="field-key">` + html.EscapeString(node.(*lineKey).Key) + `</span> `)
		}
		return ast.WalkSkipChildren, nil
	})
}

// blockIDEnd is an Obsidian block id ending a paragraph or a list item's
// text ("… [seen:: 2026-11-23] ^f7e1b22"), with the white space before it.
var blockIDEnd = regexp.MustCompile(`[ \t]+\^[A-Za-z0-9-]+[ \t]*$`)

// blockIDs hides the block id that ends a paragraph or a list item's
// text, as Obsidian's reading view does: it is an address for links
// ([[page#^f7e1b22]]), not text.
type blockIDs struct{}

func (blockIDs) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var last []*ast.Text
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && (n.Kind() == ast.KindParagraph || n.Kind() == ast.KindTextBlock) {
			if t, ok := n.LastChild().(*ast.Text); ok {
				last = append(last, t)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, t := range last {
		if m := blockIDEnd.FindIndex(t.Segment.Value(src)); m != nil {
			t.Segment = t.Segment.WithStop(t.Segment.Start + m[0])
		}
	}
}
