package mcp

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
)

// A tool is an operation of the API shown to models: its arguments are
// the operation's request, described once by the jsonschema tags of the
// request's fields; it reads (ReadOnlyHint, served read-only) exactly when
// the operation does not write (api.OpInfo.Write).
type tool[Req, Resp any] struct {
	name, title, description string
	// hide names the request's fields (by their JSON names) a model does
	// not give: they are left out of the schema, so that a call giving one
	// is refused as any unknown argument is.
	hide []string
	// schema completes the arguments' schema with what Go types cannot
	// say: enums, bounds.
	schema func(*jsonschema.Schema)
	// destructive and idempotent are the annotations of a tool that
	// writes: it changes or moves what exists; a second call with the
	// same arguments changes nothing more.
	destructive, idempotent bool
	// requestID, when set, is where the call's request id goes (see
	// requestID): a call sent again with the same JSON-RPC id then writes
	// once. The field is hidden.
	requestID func(*Req) *string
	// prepare checks a request before it runs: sizes, arguments that
	// depend on each other.
	prepare func(*Req) error
	// page is the page a not-found error of the request is about: the
	// error then lists the pages of its folder.
	page func(Req) string
	// check refuses an answer too large to hand back.
	check func(Resp) error
	// done returns the answer's text for the model, and notes what a
	// write stored.
	done func(call *mcpsdk.CallToolRequest, req Req, resp Resp) string
	// reword words an error of the operation for a model; nil leaves it.
	reword func(Req, error) error
}

// addTool registers t, which runs op; a tool that writes is not served
// read-only.
func addTool[Req, Resp any](s *srv, op api.Op[Req, Resp], t tool[Req, Resp]) {
	if s.opts.ReadOnly && op.Write {
		return
	}
	hide := t.hide
	if t.requestID != nil {
		hide = append(slices.Clone(hide), "requestId")
	}
	sc := argsSchema[Req](t.name, hide)
	if t.schema != nil {
		t.schema(sc)
	}
	register(s, &mcpsdk.Tool{Name: t.name, Title: t.title, Description: t.description, InputSchema: sc,
		Annotations: annotations(op.Write, t.destructive, t.idempotent)},
		func(ctx context.Context, call *mcpsdk.CallToolRequest, req Req) (any, string, error) {
			if t.requestID != nil {
				*t.requestID(&req) = requestID(call)
			}
			if t.prepare != nil {
				if err := t.prepare(&req); err != nil {
					return nil, "", err
				}
			}
			resp, err := op.Run(s.api, ctx, req)
			if err != nil {
				if t.reword != nil {
					err = t.reword(req, err)
				}
				if t.page != nil && fault.KindOf(err) == fault.NotFound {
					err = &pagesNear{err: err, page: t.page(req)}
				}
				return nil, "", err
			}
			if t.check != nil {
				if err := t.check(resp); err != nil {
					return nil, "", err
				}
			}
			return resp, t.done(call, req, resp), nil
		})
}

// register adds a tool whose arguments are In. fn returns the structured
// result and its text for the model; an error of fn becomes a tool error
// (IsError) worded for the model. No output schema is listed: clients
// read the text, and the structured result stays for those that want it,
// while every client pays for the schemas of tools/list in each session.
func register[In any](s *srv, t *mcpsdk.Tool, fn func(context.Context, *mcpsdk.CallToolRequest, In) (any, string, error)) {
	mcpsdk.AddTool(s.sdk, t, func(ctx context.Context, call *mcpsdk.CallToolRequest, in In) (*mcpsdk.CallToolResult, any, error) {
		out, text, err := fn(ctx, call, in)
		if err != nil {
			return nil, nil, errors.New(s.explain(ctx, err))
		}
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}, out, nil
	})
}

// argsSchema is the schema of Req as a tool's arguments, without the
// fields in hide. Every property has one type: an optional argument is
// left out, never null, which clients that map schemas onto a single-type
// dialect (Gemini's) need.
func argsSchema[Req any](name string, hide []string) *jsonschema.Schema {
	sc, err := jsonschema.For[Req](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %s: %v", name, err))
	}
	for _, h := range hide {
		if _, ok := sc.Properties[h]; !ok {
			panic(fmt.Sprintf("mcp: tool %s: no argument %s to hide", name, h))
		}
		delete(sc.Properties, h)
		sc.PropertyOrder = slices.DeleteFunc(sc.PropertyOrder, func(p string) bool { return p == h })
		sc.Required = slices.DeleteFunc(sc.Required, func(p string) bool { return p == h })
	}
	for _, p := range sc.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
	}
	return sc
}

// annotations are a tool's hints. openWorldHint is false for all: the
// tools reach the memory home, nothing outside it.
func annotations(writes, destructive, idempotent bool) *mcpsdk.ToolAnnotations {
	if !writes {
		return &mcpsdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	}
	return &mcpsdk.ToolAnnotations{DestructiveHint: ptr(destructive), IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
}

// pagesNear is a not-found error about a page: explain adds the pages of
// its folder.
type pagesNear struct {
	err  error
	page string
}

func (e *pagesNear) Error() string { return e.err.Error() }
func (e *pagesNear) Unwrap() error { return e.err }

// explain words an error for a model: the argument it is about, what to
// do, and for a missing page the pages that do exist in its folder. Tools
// take the requests' own fields, so an error's field is the argument's
// name.
func (s *srv) explain(ctx context.Context, err error) string {
	msg := err.Error()
	if f := fault.FieldOf(err); f != "" && !strings.HasPrefix(msg, f) {
		msg = f + ": " + msg
	}
	switch fault.KindOf(err) {
	case fault.NotFound:
		if pn := (*pagesNear)(nil); errors.As(err, &pn) {
			msg += s.folderPages(ctx, pn.page)
		}
	case fault.Outside:
		msg += " (pages are paths inside the notebook, such as reference/contacts.md)"
	case fault.Unavailable:
		msg += " (this may work if you try again later)"
	case fault.Conflict:
		msg += " (try again)"
	case fault.Internal:
		msg = "memhost failed: " + msg
	}
	return msg
}

// folderPages lists the pages of p's folder, for a model that named a page
// that does not exist: "; pages in reference/: contacts.md, preferences.md".
func (s *srv) folderPages(ctx context.Context, p string) string {
	files, err := s.api.Files(ctx, memhost.FilesRequest{})
	if err != nil {
		return ""
	}
	dir := path.Dir(p)
	var names, folders []string
	seen := map[string]bool{}
	for _, f := range files.Files {
		if !isPage(f) {
			continue
		}
		if path.Dir(f.Path) == dir {
			names = append(names, path.Base(f.Path))
		}
		if top, _, ok := strings.Cut(f.Path, "/"); ok && !seen[top] {
			seen[top] = true
			folders = append(folders, top+"/")
		}
	}
	const most = 30
	switch {
	case len(names) > most:
		return fmt.Sprintf("; pages in %s/: %s, … (%d in all)", dir, strings.Join(names[:most], ", "), len(names))
	case len(names) > 0 && dir == ".":
		return "; pages at the top of the notebook: " + strings.Join(names, ", ")
	case len(names) > 0:
		return fmt.Sprintf("; pages in %s/: %s", dir, strings.Join(names, ", "))
	case len(folders) > 0:
		return fmt.Sprintf("; %s/ holds no pages; the notebook's folders: %s", dir, strings.Join(folders, ", "))
	}
	return "; the notebook has no pages yet"
}

// checkSize refuses text over MaxContentBytes before it is sent on.
func checkSize(arg, text string) error {
	if len(text) > MaxContentBytes {
		return fault.BadInputf(arg, "%s is %d bytes; one call writes at most %d (1 MB): split it into several calls", arg, len(text), MaxContentBytes)
	}
	return nil
}

// about names arg in an error about a page path that names no argument
// (the notebook's "path is outside the notebook: ../x.md").
func about(arg string, err error) error {
	if err == nil || fault.FieldOf(err) != "" {
		return err
	}
	switch k := fault.KindOf(err); k {
	case fault.BadInput, fault.Outside:
		return &fault.Error{Kind: k, Field: arg, Message: err.Error(), Err: err}
	}
	return err
}

func ptr[T any](v T) *T { return &v }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

func inSection(section string) string {
	if section == "" {
		return ""
	}
	return " under \"" + strings.TrimPrefix(section, "## ") + "\""
}
