// Command gen writes the code every operation of the table (api/ops.go)
// needs beside its declaration: the API interface and the Ops list
// (api/api_gen.go), Func's methods, through which every forwarding and
// middleware runs (api/api_gen.go), and the apitest fake with one function
// field per operation (api/apitest/fake_gen.go).
//
// It reads ops.go as source, not by importing the package, so that a new
// operation's table line is enough to generate the interface that line
// refers to. Run it with go generate ./api (TestGeneratedFilesAreFresh
// fails while the files on disk differ from what it writes).
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("api/internal/gen: ")
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	files, err := Generate(dir)
	if err != nil {
		log.Fatal(err)
	}
	for name, src := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// An op is one line of the table.
type op struct {
	Var        string // OpRemember
	Name       string // remember
	Method     string // Remember
	Req, Resp  string // memhost.RememberRequest
	Write      bool
	SocketOnly bool
}

// Generate reads dir/ops.go and returns the generated files, by path
// relative to dir.
func Generate(dir string) (map[string][]byte, error) {
	fset := token.NewFileSet()
	path := filepath.Join(dir, "ops.go")
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	imports := map[string]string{} // package name → import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = p
	}
	var ops []op
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, v := range vs.Values {
				o, ok, err := readOp(fset, v)
				if err != nil {
					return nil, fmt.Errorf("%s: %s: %w", fset.Position(v.Pos()), vs.Names[i].Name, err)
				}
				if ok {
					o.Var = vs.Names[i].Name
					ops = append(ops, o)
				}
			}
		}
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("%s declares no Op", path)
	}
	seen := map[string]string{}
	for _, o := range ops {
		for _, k := range []string{"name " + o.Name, "method " + o.Method} {
			if prev, dup := seen[k]; dup {
				return nil, fmt.Errorf("%s and %s have the same %s", prev, o.Var, k)
			}
			seen[k] = o.Var
		}
	}
	apiSrc, err := apiFile(ops, imports)
	if err != nil {
		return nil, err
	}
	fakeSrc, err := fakeFile(ops, imports)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{"api_gen.go": apiSrc, "apitest/fake_gen.go": fakeSrc}, nil
}

// readOp reads Op[Req, Resp]{OpInfo{Name: …}, API.Method, nil} (a read)
// or Op[Req, Resp]{OpInfo{Name: …, Write: true}, API.Method, change} (a
// write).
func readOp(fset *token.FileSet, v ast.Expr) (op, bool, error) {
	cl, ok := v.(*ast.CompositeLit)
	if !ok {
		return op{}, false, nil
	}
	il, ok := cl.Type.(*ast.IndexListExpr)
	if !ok || len(il.Indices) != 2 {
		return op{}, false, nil
	}
	if id, ok := il.X.(*ast.Ident); !ok || id.Name != "Op" {
		return op{}, false, nil
	}
	var o op
	o.Req, o.Resp = expr(fset, il.Indices[0]), expr(fset, il.Indices[1])
	if len(cl.Elts) != 3 {
		return o, false, fmt.Errorf("an Op is {OpInfo{…}, API.Method, change} (change nil for a read)")
	}
	info, ok := cl.Elts[0].(*ast.CompositeLit)
	if !ok {
		return o, false, fmt.Errorf("an Op's first field is an OpInfo{…} literal")
	}
	for _, e := range info.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return o, false, fmt.Errorf("OpInfo's fields are named")
		}
		key := kv.Key.(*ast.Ident).Name
		val := expr(fset, kv.Value)
		switch key {
		case "Name":
			o.Name, _ = strconv.Unquote(val)
		case "Write":
			o.Write = val == "true"
		case "SocketOnly":
			o.SocketOnly = val == "true"
		}
	}
	sel, ok := cl.Elts[1].(*ast.SelectorExpr)
	if !ok || expr(fset, sel.X) != "API" {
		return o, false, fmt.Errorf("an Op's second field is API.Method")
	}
	o.Method = sel.Sel.Name
	if o.Name == "" {
		return o, false, fmt.Errorf("an Op needs a Name")
	}
	// A write says what it changed (the Change the host publishes); a
	// read changes nothing.
	switch change := expr(fset, cl.Elts[2]); {
	case o.Write && change == "nil":
		return o, false, fmt.Errorf("%s writes: its Op's third field is the function saying what it changed, not nil", o.Name)
	case !o.Write && change != "nil":
		return o, false, fmt.Errorf("%s is a read: its Op's third field is nil, not %s", o.Name, change)
	}
	return o, true, nil
}

func expr(fset *token.FileSet, e ast.Expr) string {
	var b bytes.Buffer
	printer.Fprint(&b, fset, e)
	return b.String()
}

const header = "// Code generated by api/internal/gen from api/ops.go; DO NOT EDIT.\n\n"

// importsOf writes the import block of a generated file: always, the
// packages named; and those of ops.go its types use.
func importsOf(b *bytes.Buffer, ops []op, imports map[string]string, always ...string) {
	use := map[string]bool{}
	for _, p := range always {
		use[p] = true
	}
	for _, o := range ops {
		for _, t := range []string{o.Req, o.Resp} {
			if i := strings.Index(t, "."); i > 0 {
				p, ok := imports[t[:i]]
				if !ok {
					log.Fatalf("%s: no import for %s", o.Var, t)
				}
				use[p] = true
			}
		}
	}
	paths := make([]string, 0, len(use))
	for p := range use {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { // the standard library's first
		si, sj := !strings.Contains(strings.Split(paths[i], "/")[0], "."), !strings.Contains(strings.Split(paths[j], "/")[0], ".")
		if si != sj {
			return si
		}
		return paths[i] < paths[j]
	})
	b.WriteString("import (\n")
	std := true
	for _, p := range paths {
		if dot := strings.Contains(strings.Split(p, "/")[0], "."); dot && std {
			b.WriteString("\n")
			std = false
		}
		fmt.Fprintf(b, "\t%q\n", p)
	}
	b.WriteString(")\n\n")
}

func apiFile(ops []op, imports map[string]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header + "package api\n\n")
	importsOf(&b, ops, imports, "context")
	b.WriteString("// API is every operation of the table: *host.Host runs them, *client.Client\n" +
		"// (server/client) forwards them to a running server, with the same\n" +
		"// requests, responses and errors.\ntype API interface {\n")
	for _, o := range ops {
		fmt.Fprintf(&b, "\t%s(context.Context, %s) (%s, error)\n", o.Method, o.Req, o.Resp)
	}
	b.WriteString("}\n\n// Ops is every operation, in the table's order (the order docs/api.md gives them).\nvar Ops = []Operation{\n")
	for _, o := range ops {
		fmt.Fprintf(&b, "\t%s,\n", o.Var)
	}
	b.WriteString("}\n\n")
	for _, o := range ops {
		fmt.Fprintf(&b, "// %s runs %s through f.\nfunc (f Func) %s(ctx context.Context, req %s) (%s, error) {\n\treturn invoke(ctx, f, %s, req)\n}\n\n",
			o.Method, o.Var, o.Method, o.Req, o.Resp, o.Var)
	}
	return gofmt(b.Bytes())
}

func fakeFile(ops []op, imports map[string]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header + "package apitest\n\n")
	importsOf(&b, ops, imports, "context", "github.com/memhost/memhost/api")
	b.WriteString("// Fake is an api.API whose operations are its function fields: set the\n" +
		"// ones a test calls; an operation whose field is nil fails with\n" +
		"// ErrNotSet.\ntype Fake struct {\n")
	for _, o := range ops {
		fmt.Fprintf(&b, "\t%sFn func(context.Context, %s) (%s, error)\n", o.Method, o.Req, o.Resp)
	}
	b.WriteString("}\n\nvar _ api.API = (*Fake)(nil)\n\n")
	for _, o := range ops {
		fmt.Fprintf(&b, "// %s calls f.%sFn.\nfunc (f *Fake) %s(ctx context.Context, req %s) (%s, error) {\n"+
			"\tif f.%sFn == nil {\n\t\tvar zero %s\n\t\treturn zero, notSet(api.%s)\n\t}\n\treturn f.%sFn(ctx, req)\n}\n\n",
			o.Method, o.Method, o.Method, o.Req, o.Resp, o.Method, o.Resp, o.Var, o.Method)
	}
	return gofmt(b.Bytes())
}

func gofmt(src []byte) ([]byte, error) {
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("generated code does not parse: %w\n%s", err, src)
	}
	return out, nil
}
