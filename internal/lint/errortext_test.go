package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"
)

// errTextAllowed lists the functions ("file.go:Func", slash paths from the
// repository's root) that may look into an error's text, each with why.
var errTextAllowed = map[string]string{
	// encoding/json has no error type for an unknown field: its message
	// is the only way to name the field.
	"server/server.go:jsonError": "encoding/json's unknown-field error has no type",
	// A failure retried in the background is logged once until its words
	// change: the text is what the log would repeat.
	"host/embedq/worker.go:work": "logs a repeated failure once, by its words",
	// Wording, not branching: a message that starts with the argument's
	// name is not given it twice ("path: path is outside ...").
	"mcp/tools.go:explain": "does not name the argument twice",
}

// looking are the functions of packages strings and bytes that look into
// a text (those that only reshape it, such as Fields or ReplaceAll, are
// how a message is worded for one line).
var looking = map[string]bool{
	"Contains": true, "ContainsAny": true, "ContainsRune": true, "ContainsFunc": true,
	"HasPrefix": true, "HasSuffix": true, "TrimPrefix": true, "TrimSuffix": true,
	"CutPrefix": true, "CutSuffix": true, "Cut": true, "EqualFold": true, "Compare": true, "Count": true,
	"Index": true, "IndexAny": true, "IndexByte": true, "IndexRune": true, "IndexFunc": true,
	"LastIndex": true, "LastIndexAny": true, "LastIndexByte": true, "LastIndexFunc": true,
	"Split": true, "SplitN": true, "SplitAfter": true, "SplitAfterN": true,
}

// TestNoBranchOnErrorText fails when a non-test .go file looks into an
// error's text: passes err.Error() (or a variable holding it) to a
// function of package strings or bytes that looks into a text, compares it
// with == or != (but with ""), or switches on it. Callers branch on kinds, sentinels and types
// (fault.KindOf, errors.Is, errors.As); the text is for a person.
func TestNoBranchOnErrorText(t *testing.T) {
	goSources(t, func(rel, path string) {
		for _, h := range errorTextUses(t, path) {
			if _, ok := errTextAllowed[rel+":"+h.fn]; !ok {
				t.Errorf("%s:%d (in %s): %s\n\tbranches on an error's text: use a kind, a sentinel or a type (fault.KindOf, errors.Is, errors.As)", rel, h.line, h.fn, h.what)
			}
		}
	})
}

// TestErrorTextUsesFound: the check finds each way of looking into an
// error's text, and passes what only words one.
func TestErrorTextUsesFound(t *testing.T) {
	src := `package x

import ("errors"; "fmt"; "strings")

func bad(err error) {
	_ = strings.Contains(err.Error(), "did not answer")
	_ = strings.TrimPrefix(err.Error(), "x: ")
	_ = err.Error() == "eof"
	msg := err.Error()
	_, list, _ := strings.Cut(msg, "first: ")
	_ = list
	switch err.Error() {
	}
	var text string
	text = err.Error()
	if text != "boom" {
	}
	if text != "" {
	}
	_ = strings.ReplaceAll(err.Error(), "\n", " ")
}

func good(err error) error {
	_ = errors.Is(err, errors.ErrUnsupported)
	return fmt.Errorf("%w; again", errors.New(err.Error()+"; choose another"))
}
`
	p := filepath.Join(t.TempDir(), "x.go")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range errorTextUses(t, p) {
		got = append(got, fmt.Sprintf("%d %s", h.line, h.fn))
	}
	want := []string{"6 bad", "7 bad", "8 bad", "10 bad", "12 bad", "16 bad"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("found %v, want %v", got, want)
	}
}

// use is one look into an error's text.
type use struct {
	line int
	fn   string // the enclosing function ("" at package level)
	what string
}

// errorTextUses parses the Go file at path and lists where it looks into
// an error's text.
func errorTextUses(t *testing.T, path string) []use {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	var out []use
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		texts := textVars(fd.Body)
		isText := func(e ast.Expr) bool {
			e = ast.Unparen(e)
			if id, ok := e.(*ast.Ident); ok {
				return texts[id.Name]
			}
			return isErrorCall(e)
		}
		add := func(n ast.Node, what string) {
			out = append(out, use{line: fset.Position(n.Pos()).Line, fn: fd.Name.Name, what: what})
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if pkg, name, ok := pkgCall(n); ok && (pkg == "strings" || pkg == "bytes") && looking[name] {
					for _, a := range n.Args {
						if isText(a) {
							add(n, pkg+"."+name+" of an error's text")
							break
						}
					}
				}
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isText(n.X) && !isEmpty(n.Y) || isText(n.Y) && !isEmpty(n.X)) {
					add(n, "an error's text compared with "+n.Op.String())
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && isText(n.Tag) {
					add(n, "a switch on an error's text")
				}
			}
			return true
		})
	}
	return out
}

// isEmpty reports whether e is the literal "": whether a text is empty
// says nothing of what it says.
func isEmpty(e ast.Expr) bool {
	l, ok := ast.Unparen(e).(*ast.BasicLit)
	return ok && l.Kind == token.STRING && (l.Value == `""` || l.Value == "``")
}

// textVars names the variables of body assigned an error's text.
func textVars(body *ast.BlockStmt) map[string]bool {
	vars := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			return true
		}
		for i, r := range as.Rhs {
			if id, ok := as.Lhs[i].(*ast.Ident); ok && isErrorCall(ast.Unparen(r)) {
				vars[id.Name] = true
			}
		}
		return true
	})
	return vars
}

// isErrorCall reports whether e is a call x.Error() with no arguments.
func isErrorCall(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok || len(c.Args) != 0 {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Error"
}

// pkgCall splits a call pkg.Name(...) into pkg and Name.
func pkgCall(c *ast.CallExpr) (pkg, name string, ok bool) {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", "", false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", "", false
	}
	return id.Name, sel.Sel.Name, true
}
