package pagehtml

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
)

// HeadingID is the anchor of a heading whose text is s, as the heading's
// id attribute and every [[page#heading]] link to it write it. ASCII goes
// as goldmark's auto heading ids take it: letters and digits lowercased,
// blanks, '-' and '_' as '-', the rest dropped ("Hello, World!" gives
// "hello-world"). Letters, marks and digits outside ASCII are kept and
// lowercased, as GitHub's anchors keep them ("Café" gives "café"), where
// goldmark drops them: its "caf" is not what a link to "Café" can be
// turned into without the page, and every heading in a script without
// ASCII letters would be "heading", "heading-1", ... in the page's order.
// Text with nothing left gives "heading", as in goldmark.
func HeadingID(s string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		case r == ' ' || r == '\t' || r == '-' || r == '_':
			b.WriteByte('-')
		case r > unicode.MaxASCII && unicode.In(r, unicode.L, unicode.M, unicode.N):
			b.WriteRune(unicode.ToLower(r))
		}
	}
	if b.Len() == 0 {
		return "heading"
	}
	return b.String()
}

// headingIDs is goldmark's id generator for one parse (parser.WithIDs):
// each heading gets HeadingID of its text, and a repeat gets "-1", "-2",
// ... after it as in goldmark, so a link to a repeated heading finds the
// first. Not safe for concurrent use; a parse is one goroutine.
type headingIDs struct {
	used map[string]bool
	next map[string]int // per HeadingID, the suffix to try next
}

var _ parser.IDs = (*headingIDs)(nil)

func newHeadingIDs() *headingIDs {
	return &headingIDs{used: map[string]bool{}, next: map[string]int{}}
}

func (ids *headingIDs) Generate(value []byte, _ ast.NodeKind) []byte {
	base := HeadingID(string(value))
	id := base
	for ids.used[id] {
		ids.next[base]++
		id = base + "-" + strconv.Itoa(ids.next[base])
	}
	ids.used[id] = true
	return []byte(id)
}

func (ids *headingIDs) Put(value []byte) { ids.used[string(value)] = true }
