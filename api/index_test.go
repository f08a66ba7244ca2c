package api_test

// docs/api.md's operation index is generated from the operation table:
// TestAPIIndex renders it from api.Ops and compares it with the section
// between the markers; -update rewrites that section.

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/memhost/memhost/api"
)

var update = flag.Bool("update", false, "rewrite docs/api.md's operation index from api.Ops")

const (
	apiDocPath = "../docs/api.md"
	indexBegin = "<!-- generated: the operation index (go test ./api/ -run TestAPIIndex -update) -->"
	indexEnd   = "<!-- end generated -->"
)

// TestAPIIndex checks that docs/api.md's operation index is the table
// renderIndex makes from api.Ops, and that every route it links to has its
// "### POST /api/v1/<name>" section.
func TestAPIIndex(t *testing.T) {
	raw, err := os.ReadFile(apiDocPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	begin := strings.Index(doc, indexBegin)
	if begin < 0 {
		t.Fatalf("docs/api.md has no line %q to start the operation index", indexBegin)
	}
	n := strings.Index(doc[begin:], indexEnd)
	if n < 0 {
		t.Fatalf("docs/api.md's operation index has no %q after its start", indexEnd)
	}
	end := begin + n + len(indexEnd)

	index, err := renderIndex(api.Ops)
	if err != nil {
		t.Fatal(err)
	}
	want := indexBegin + "\n\n" + index + "\n" + indexEnd
	for _, op := range api.Ops {
		if h := "\n### POST " + op.Info().Path() + "\n"; !strings.Contains(doc, h) {
			t.Errorf("docs/api.md has no section %q for the index to link to", strings.TrimSpace(h))
		}
	}
	if doc[begin:end] == want {
		return
	}
	if *update {
		if err := os.WriteFile(apiDocPath, []byte(doc[:begin]+want+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/api.md's operation index is not the one api.Ops gives; run go test ./api/ -run TestAPIIndex -update\nwant:\n%s", want)
}

// renderIndex is the markdown table of ops: name, route linked to its
// section, read or write, socket only, request and response types.
func renderIndex(ops []api.Operation) (string, error) {
	var b strings.Builder
	b.WriteString("| operation | route | read/write | socket only | request | response |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, op := range ops {
		in := op.Info()
		req, resp, err := opTypes(op)
		if err != nil {
			return "", err
		}
		rw, socket := "read", "no"
		if in.Write {
			rw = "write"
		}
		if in.SocketOnly {
			socket = "yes"
		}
		route := "POST " + in.Path()
		fmt.Fprintf(&b, "| %s | [`%s`](#%s) | %s | %s | `%s` | `%s` |\n", in.Name, route, anchor(route), rw, socket, req, resp)
	}
	return b.String(), nil
}

// opTypes returns the request and response types of op, an api.Op, from
// its Run field: func(API, context.Context, Req) (Resp, error).
func opTypes(op api.Operation) (req, resp reflect.Type, err error) {
	f, ok := reflect.TypeOf(op).FieldByName("Run")
	if !ok || f.Type.Kind() != reflect.Func || f.Type.NumIn() != 3 || f.Type.NumOut() != 2 {
		return nil, nil, fmt.Errorf("operation %s is a %T, whose Run field is not func(API, context.Context, Req) (Resp, error)", op.Info().Name, op)
	}
	return f.Type.In(2), f.Type.Out(0), nil
}

// anchor is the fragment GitHub gives a heading: lower case, spaces as
// hyphens, other punctuation but hyphens and underscores dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
