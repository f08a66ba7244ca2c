package pagehtml

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"html/template"
	"time"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Rendering is bounded three ways, because a page is anyone's text (an
// agent's, a remote's) and a view must not cost minutes of CPU:
//   - a page larger than MaxRenderBytes is shown as plain text, its first
//     MaxRenderBytes only, and never read whole (host.PageRequest.MaxBytes);
//   - the work is linear in the page where goldmark's is not: an inline
//     link's destination and title are bounded as CommonMark allows
//     (boundedLinks), and this package's own inline syntax scans each byte
//     a bounded number of times;
//   - the parse stops when the request's context ends (the client left)
//     or after renderBudget; a page over the budget is shown as plain
//     text. This holds where goldmark is still super-linear: emphasis
//     runs such as "*a_" repeated, and blocks nested thousands deep.

// MaxRenderBytes is the largest page rendered as markdown, 1 MiB: ordinary
// pages are a few KiB and a 1 MiB page renders in tens of milliseconds,
// while larger ones are logs and dumps nobody reads rendered, which would
// cost memory (the text held several times over: source, AST, HTML,
// template) and CPU for nothing. A larger page shows its first
// MaxRenderBytes as text, with a note to open it in an editor.
const MaxRenderBytes = 1 << 20

// renderBudget bounds the time one rendering may take. A page within
// MaxRenderBytes takes well under a second on a busy machine; one that
// takes longer is a pathological input and is shown as plain text.
const renderBudget = 5 * time.Second

// maxLinkParens bounds the parentheses nested in an inline link's
// destination, as cmark does (CommonMark lets implementations limit them).
// Without it "[a](" repeated makes each link attempt scan the rest of the
// line: quadratic, 56 s of CPU for 400 KB.
const maxLinkParens = 32

// maxDelimiters bounds the runs of '*' and '_' one block's emphasis may
// use; later ones are text. goldmark matches them pairwise, quadratic in
// their number ("*a_" repeated: 13 s for 100 KB), in one call that no
// context check interrupts. 2000 runs make a thousand emphasised spans in
// one paragraph and cost milliseconds.
const maxDelimiters = 2000

// ErrTooLarge and ErrTooSlow say why a page is shown as plain text.
var (
	ErrTooLarge = fmt.Errorf("this page is larger than %d KiB, too large to render: its first %d KiB are shown as text; open it in an editor", MaxRenderBytes>>10, MaxRenderBytes>>10)
	ErrTooSlow  = fmt.Errorf("this page took longer than %s to render: it is shown as text", renderBudget)
)

// PlainHTML is text shown as it is, with a note saying why.
func PlainHTML(note error, text string) template.HTML {
	return template.HTML(`<p class="notice plain-note" role="note">` + html.EscapeString(note.Error()) + `</p><pre class="plain">` + html.EscapeString(text) + `</pre>`)
}

// stopped carries a context's error out of goldmark's parse, which takes
// no context: the checks panic with it and render recovers it.
type stopped struct{ err error }

// stopper checks a context every so often; it is one parse's, kept in the
// parser.Context.
type stopper struct {
	ctx context.Context
	n   int

	delimBlock ast.Node // the block boundedEmphasis counts delims of
	delims     int
}

var stopperKey = parser.NewContextKey()

func (s *stopper) check() {
	if s.n++; s.n&63 == 0 {
		if err := s.ctx.Err(); err != nil {
			panic(stopped{err})
		}
	}
}

// parse parses src under ctx: goldmark's block parsers read through a
// reader that checks ctx, and its inline parsers are interleaved with
// ctxCheck. When ctx ends, parse stops within a line's work and returns
// ctx's error.
func parse(ctx context.Context, p parser.Parser, src []byte) (doc ast.Node, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st := &stopper{ctx: ctx}
	pc := parser.NewContext(parser.WithIDs(newHeadingIDs())) // headingid.go
	pc.Set(stopperKey, st)
	defer func() {
		if v := recover(); v != nil {
			s, ok := v.(stopped)
			if !ok {
				panic(v)
			}
			doc, err = nil, s.err
		}
	}()
	return p.Parse(&stopReader{Reader: text.NewReader(src), st: st}, parser.WithContext(pc)), nil
}

// stopReader is the block parsers' reader, checking the context at each
// line they look at.
type stopReader struct {
	text.Reader
	st *stopper
}

func (r *stopReader) PeekLine() ([]byte, text.Segment) {
	r.st.check()
	return r.Reader.PeekLine()
}

// ctxCheck is an inline parser that parses nothing: it runs first at
// every character that starts inline syntax and checks the parse's
// context.
type ctxCheck struct{}

func (ctxCheck) Trigger() []byte { return []byte("[]!()*_~`<>&\\|:=") }

func (ctxCheck) Parse(_ ast.Node, _ text.Reader, pc parser.Context) ast.Node {
	if st, ok := pc.Get(stopperKey).(*stopper); ok {
		st.check()
	}
	return nil
}

// inlineParsers are goldmark's defaults with the link and emphasis
// parsers bounded, and ctxCheck first.
func inlineParsers() []util.PrioritizedValue {
	links := parser.NewLinkParser()
	out := []util.PrioritizedValue{util.Prioritized(ctxCheck{}, 0)}
	emphasis := parser.NewEmphasisParser()
	for _, v := range parser.DefaultInlineParsers() {
		switch v.Value {
		case links:
			v = util.Prioritized(boundedLinks{links}, v.Priority)
		case emphasis:
			v = util.Prioritized(boundedEmphasis{emphasis}, v.Priority)
		}
		out = append(out, v)
	}
	return out
}

// boundedEmphasis is goldmark's emphasis parser, reading '*' and '_' as
// text once a block holds maxDelimiters runs of them.
type boundedEmphasis struct{ parser.InlineParser }

func (p boundedEmphasis) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	st, _ := pc.Get(stopperKey).(*stopper)
	if st == nil {
		return p.InlineParser.Parse(parent, block, pc)
	}
	if st.delimBlock != parent {
		st.delimBlock, st.delims = parent, 0
	}
	if st.delims >= maxDelimiters {
		return nil
	}
	n := p.InlineParser.Parse(parent, block, pc)
	if n != nil {
		st.delims++
	}
	return n
}

// boundedLinks is goldmark's link parser, but for an inline link whose
// destination or title CommonMark allows to refuse and that goldmark would
// look for to the end of the line or paragraph: a destination with more
// than maxLinkParens nested parentheses, a <destination> with a '<' in it
// or none closing it on its line, a (title) with a '(' in it. Such a
// "](" is read as if no '(' followed the ']': a shortcut reference link
// or text, as CommonMark has it.
type boundedLinks struct{ parser.InlineParser }

func (p boundedLinks) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	if len(line) == 0 || line[0] != ']' {
		return p.InlineParser.Parse(parent, block, pc)
	}
	r := &linkReader{Reader: block}
	r.hideParen = len(line) > 1 && line[1] == '(' && !inlineLinkBounded(block)
	return p.InlineParser.Parse(parent, r, pc)
}

func (p boundedLinks) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	p.InlineParser.(parser.CloseBlocker).CloseBlock(parent, block, pc)
}

// linkReader is the reader goldmark's link parser gets at a ']'.
//
// With hideParen, its first Peek, which decides between an inline link
// and a reference, sees no '(' (TestBoundedLinks holds this reading of
// goldmark).
//
// Its Value reads a segment within one line directly: goldmark's looks
// for the segment's line from the paragraph's last line back, at every
// ']' that makes no inline link (a reference it looks up), which is
// quadratic in a paragraph of many lines.
type linkReader struct {
	text.Reader
	hideParen, peeked bool
}

func (r *linkReader) Peek() byte {
	c := r.Reader.Peek()
	if !r.peeked {
		r.peeked = true
		if r.hideParen && c == '(' {
			return 0
		}
	}
	return c
}

func (r *linkReader) Value(seg text.Segment) []byte {
	src := r.Source()
	if seg.Padding == 0 && 0 <= seg.Start && seg.Start <= seg.Stop && seg.Stop <= len(src) && bytes.IndexByte(src[seg.Start:seg.Stop], '\n') < 0 {
		return bytes.Clone(src[seg.Start:seg.Stop])
	}
	return r.Reader.Value(seg)
}

// inlineLinkBounded reports whether the "](" block is at opens an inline
// link goldmark may look for: its destination and title end where
// CommonMark says they can, within a bounded scan. It leaves block where
// it was. Each scan stops at the next '<' or quote or '(' (or after
// maxLinkParens of them), so the scans of a line's links together read
// each byte a bounded number of times.
func inlineLinkBounded(block text.Reader) bool {
	l, pos := block.Position()
	defer block.SetPosition(l, pos)
	line, _ := block.PeekLine()
	i := skipSpace(line, 2)
	if i == len(line) {
		return true // the destination is on the next line, or none
	}
	if line[i] == '<' {
		for i++; i < len(line); i++ {
			switch c := line[i]; {
			case c == '\\' && i+1 < len(line):
				i++
			case c == '>':
				return true
			case c == '<' || c == '\n':
				return false
			}
		}
		return false
	}
	depth := 0
dest:
	for ; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && i+1 < len(line) && util.IsPunct(line[i+1]):
			i++
		case c == '(':
			if depth++; depth > maxLinkParens {
				return false
			}
		case c == ')':
			if depth--; depth < 0 {
				break dest
			}
		case util.IsSpace(c):
			break dest
		}
	}
	// The title: on this line or the next.
	if i = skipSpace(line, i); i == len(line) {
		block.AdvanceLine()
		if line, _ = block.PeekLine(); line == nil {
			return true
		}
		i = skipSpace(line, 0)
	}
	if i == len(line) || line[i] != '(' {
		return true // none, or a quoted one, closed by the next quote: bounded
	}
	// A (title): closed by the first ')' unless a '(' comes first; it may
	// run over lines.
	block.Advance(i + 1)
	for {
		line, _ := block.PeekLine()
		if line == nil {
			return false
		}
		for j := 0; j < len(line); j++ {
			switch line[j] {
			case '\\':
				j++
			case ')':
				return true
			case '(':
				return false
			}
		}
		block.AdvanceLine()
	}
}

// skipSpace is the index of the first byte of line from i on that is not
// white space (a line ends with its newline).
func skipSpace(line []byte, i int) int {
	for i < len(line) && util.IsSpace(line[i]) {
		i++
	}
	return i
}

// WithBudget wraps a request's ctx with the render budget; TooSlow tells
// the budget running out (show the page as text) from the request ending.
func WithBudget(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, renderBudget)
}

// TooSlow reports whether err is the render budget running out while the
// request's own context (parent) is still live.
func TooSlow(parent context.Context, err error) bool {
	return errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil
}
