package pagehtml

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"html/template"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Pages are rendered on the server with goldmark (CommonMark and GFM:
// tables, task-list checkboxes, strikethrough, autolinks) in its default,
// safe mode: raw HTML in a page is omitted, never passed through, and
// links and images whose URL is dangerous (javascript:, vbscript:, file:,
// data: but images) get an empty one. Wikilinks ([[page]], [[page|label]],
// [[page#section]]) are this file's own inline syntax and become links to
// the page in the dashboard, their text escaped. The dashboard's Content
// Security Policy (script-src 'self') is the second wall: even markup that
// got through could not run a script.

// Resolver turns a wikilink's target into a page path ("" when no page
// matches: the link offers to create it).
type Resolver func(target string) (path string, ok bool)

// Block is one top-level block of a rendered page with the source lines it
// came from, so that search results (path:lines) can point into the view.
type Block struct {
	HTML      template.HTML // goldmark's safe-mode output
	Start     int           // 1-based
	End       int
	HeadingID string // set for headings: the section anchor
}

func NewMarkdown(resolve Resolver) goldmark.Markdown {
	return goldmark.New(
		goldmark.WithParser(parser.NewParser(
			parser.WithBlockParsers(parser.DefaultBlockParsers()...),
			parser.WithInlineParsers(inlineParsers()...), // render.go
			parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		)),
		goldmark.WithExtensions(extension.GFM, &wikiExt{resolve: resolve}, &fieldExt{resolve: resolve}),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	)
}

// RenderBlocks renders src block by block. YAML frontmatter is one block of
// its own, a properties table (as Obsidian shows it); the markdown below
// is parsed with the frontmatter blanked out, so that byte offsets and
// line numbers stay those of the file. It stops with ctx's error when ctx
// ends (render.go).
func RenderBlocks(ctx context.Context, md goldmark.Markdown, resolve Resolver, src []byte) ([]Block, error) {
	fm, body := frontmatter(src)
	doc, err := parse(ctx, md.Parser(), body)
	if err != nil {
		return nil, err
	}
	lineOf := lineIndex(src)
	var out []Block
	if fm != nil {
		out = append(out, Block{HTML: fm.html(resolve), Start: 1, End: fm.lines})
	}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := md.Renderer().Render(&buf, body, n); err != nil {
			return nil, err
		}
		b := Block{HTML: template.HTML(buf.String())}
		b.Start, b.End = span(n, lineOf)
		if b.Start == 0 {
			// A block without lines of its own (a rule): the first
			// line after the block before that is not blank.
			b.Start = nextLine(body, lineOf, out)
			b.End = b.Start
		}
		if h, ok := n.(*ast.Heading); ok {
			if id, ok := h.AttributeString("id"); ok {
				if s, ok := id.([]byte); ok {
					b.HeadingID = string(s)
				}
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// RenderHTML renders src whole (the editor's preview), its frontmatter as
// a properties table. It stops with ctx's error when ctx ends.
func RenderHTML(ctx context.Context, md goldmark.Markdown, resolve Resolver, src []byte) (string, error) {
	fm, body := frontmatter(src)
	doc, err := parse(ctx, md.Parser(), body)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if fm != nil {
		buf.WriteString(string(fm.html(resolve)))
	}
	err = md.Renderer().Render(&buf, body, doc)
	return buf.String(), err
}

// nextLine is the first line that is not blank after the last of blocks
// (1 with none).
func nextLine(src []byte, lineOf func(int) int, blocks []Block) int {
	after := 0
	if len(blocks) > 0 {
		after = blocks[len(blocks)-1].End
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	for i := after; i < len(lines); i++ {
		if len(bytes.TrimSpace(lines[i])) > 0 {
			return i + 1
		}
	}
	return max(after, 1)
}

// lineIndex returns a function from a byte offset to its 1-based line.
func lineIndex(src []byte) func(off int) int {
	var starts []int
	starts = append(starts, 0)
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return func(off int) int {
		lo, hi := 0, len(starts)-1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if starts[mid] <= off {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return lo + 1
	}
}

// span is the first and last source line of a block node; blocks without
// lines of their own (lists, quotes) take their children's.
func span(n ast.Node, lineOf func(int) int) (start, end int) {
	first, last := -1, -1
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || c.Type() != ast.TypeBlock {
			return ast.WalkContinue, nil
		}
		if l := c.Lines(); l != nil && l.Len() > 0 {
			s, e := l.At(0).Start, l.At(l.Len()-1).Stop
			if first < 0 || s < first {
				first = s
			}
			if e > last {
				last = e
			}
		}
		return ast.WalkContinue, nil
	})
	if first < 0 {
		return 0, 0
	}
	start = lineOf(first)
	end = lineOf(max(last-1, first))
	if fc, ok := n.(*ast.FencedCodeBlock); ok {
		start-- // the opening fence
		if fc.Lines().Len() == 0 {
			end = start
		}
		end++ // the closing fence
	}
	return max(start, 1), end
}

// Wikilinks.

var kindWikilink = ast.NewNodeKind("Wikilink")

type wikilink struct {
	ast.BaseInline
	Target  string // page, maybe with #section
	Label   string
	Path    string // resolved page; "" when missing
	Section string
	at      int // source offset of its [[
}

func (n *wikilink) Kind() ast.NodeKind { return kindWikilink }
func (n *wikilink) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Target": n.Target}, nil)
}

type wikiExt struct{ resolve Resolver }

func (e *wikiExt) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithInlineParsers(util.Prioritized(&wikiParser{e.resolve}, 199))) // before links (200)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(wikiRenderer{}, 199)))
}

type wikiParser struct{ resolve Resolver }

func (p *wikiParser) Trigger() []byte { return []byte{'['} }

func (p *wikiParser) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	line, seg := block.PeekLine()
	n, length := parseWikilink(line, p.resolve)
	if n == nil {
		return nil
	}
	n.at = seg.Start
	block.Advance(length)
	return n
}

// parseWikilink reads the wikilink that line starts with, and its length
// in bytes (nil when line does not start with one).
func parseWikilink(line []byte, resolve Resolver) (*wikilink, int) {
	if len(line) < 5 || line[0] != '[' || line[1] != '[' {
		return nil, 0
	}
	// The first bracket after [[ must start the ]]: looking for ]] alone
	// would read the rest of the line at each "[[" ("[[" repeated:
	// quadratic).
	end := bytes.IndexAny(line[2:], "[]\n")
	if end <= 0 || line[2+end] != ']' || 2+end+1 >= len(line) || line[2+end+1] != ']' {
		return nil, 0
	}
	inner := string(line[2 : 2+end])
	if strings.TrimSpace(inner) == "" {
		return nil, 0
	}
	return newWikilink(inner, resolve), end + 4
}

func newWikilink(inner string, resolve Resolver) *wikilink {
	target, label, hasLabel := strings.Cut(inner, "|")
	target = strings.TrimSpace(target)
	if !hasLabel || strings.TrimSpace(label) == "" {
		label = target
	}
	n := &wikilink{Target: target, Label: strings.TrimSpace(label)}
	page, section, _ := strings.Cut(target, "#")
	n.Section = section
	if page == "" {
		return n // [[#section]]: this page
	}
	if resolve != nil {
		n.Path, _ = resolve(page)
	}
	return n
}

type wikiRenderer struct{}

func (wikiRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindWikilink, func(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkSkipChildren, nil
		}
		w.WriteString(wikiHTML(node.(*wikilink)))
		return ast.WalkSkipChildren, nil
	})
}

// wikiHTML is a wikilink's anchor: to its page, to this page's section, or
// (class missing) to the form that creates the page.
func wikiHTML(n *wikilink) string {
	href, class := "", "wikilink"
	switch {
	case n.Path != "":
		href = PageURL(n.Path)
	case strings.HasPrefix(n.Target, "#"):
	default:
		href = "/ui/notebook?new=" + url.QueryEscape(newPagePath(strings.Split(n.Target, "#")[0]))
		class += " missing"
	}
	if n.Section != "" {
		href += "#" + url.PathEscape(HeadingID(n.Section))
	}
	return fmt.Sprintf(`<a class="%s" href="%s">%s</a>`, class, html.EscapeString(href), html.EscapeString(n.Label))
}

// PageURL is the dashboard's address of a page.
func PageURL(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return "/ui/page/" + strings.Join(parts, "/")
}

// newPagePath is where a wikilink to a missing page would create it.
func newPagePath(target string) string {
	t := strings.TrimSpace(target)
	if !strings.HasSuffix(t, ".md") {
		t = Slug(t) + ".md"
	}
	return t
}

// Slug makes a page name into a file name: lowercase, spaces as '-',
// punctuation but '/' and '.' dropped. A heading's anchor is HeadingID.
func Slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case r == ' ' || r == '-' || r == '_':
			b.WriteRune('-')
		case r == '/' || r == '.':
			b.WriteRune(r)
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
