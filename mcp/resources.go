package mcp

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
)

// URIPrefix begins the URI of every notebook page:
// memhost://notebook/reference/contacts.md.
const URIPrefix = "memhost://notebook/"

// PageURI is the resource URI of a notebook page (each name
// percent-encoded as needed).
func PageURI(page string) string {
	parts := strings.Split(page, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return URIPrefix + strings.Join(parts, "/")
}

// pageOf is the notebook page a resource URI names.
func pageOf(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, URIPrefix)
	if !ok || rest == "" {
		return "", false
	}
	p, err := url.PathUnescape(rest)
	return p, err == nil
}

const markdown = "text/markdown"

// stateDeleted is the state of an indexed file deleted since the last
// sync: host/indexer.StateDeleted (TestHostConstants holds them equal).
const stateDeleted = "deleted"

// isPage reports whether an indexed file is a notebook page on disk (not a
// transcript, not deleted).
func isPage(f memhost.FileInfo) bool {
	return strings.HasSuffix(f.Path, ".md") && f.State != stateDeleted
}

// The resources are the notebook's pages: each registered with the SDK
// (so that resources/list holds them and a page coming or going sends
// notifications/resources/list_changed), kept in step with the notebook
// before each list and on each change; the template serves pages made
// since.
func (s *srv) addResources() {
	s.sdk.AddResourceTemplate(&mcpsdk.ResourceTemplate{
		Name:        "notebook-page",
		Title:       "Notebook page",
		URITemplate: URIPrefix + "{+path}",
		Description: "A page of the memhost notebook, by its path inside the notebook (e.g. reference/contacts.md).",
		MIMEType:    markdown,
	}, s.readPage)
	s.sdk.AddReceivingMiddleware(func(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
		return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
			if method == "resources/list" {
				if err := s.refreshPages(ctx); err != nil {
					return nil, err
				}
			}
			return next(ctx, method, req)
		}
	})
}

// refreshPages registers the pages that exist and drops those that no
// longer do.
func (s *srv) refreshPages(ctx context.Context) error {
	files, err := s.api.Files(ctx, memhost.FilesRequest{})
	if err != nil {
		return fmt.Errorf("listing the notebook's pages: %v", err)
	}
	now := map[string]memhost.FileInfo{}
	for _, f := range files.Files {
		if isPage(f) {
			now[f.Path] = f
		}
	}
	s.mu.Lock()
	var gone []string
	for p := range s.pages {
		if _, ok := now[p]; !ok {
			gone = append(gone, PageURI(p))
			delete(s.pages, p)
		}
	}
	var added []memhost.FileInfo
	for p, f := range now {
		if !s.pages[p] {
			s.pages[p] = true
			added = append(added, f)
		}
	}
	s.mu.Unlock()
	if len(gone) > 0 {
		s.sdk.RemoveResources(gone...)
	}
	for _, f := range added {
		s.sdk.AddResource(pageResource(f.Path, f.Size), s.readPage)
	}
	return nil
}

func pageResource(page string, size int64) *mcpsdk.Resource {
	return &mcpsdk.Resource{URI: PageURI(page), Name: page, Title: path.Base(page), MIMEType: markdown, Size: size}
}

// readPage serves resources/read of a page.
func (s *srv) readPage(ctx context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
	uri := req.Params.URI
	p, ok := pageOf(uri)
	if !ok {
		return nil, mcpsdk.ResourceNotFoundError(uri)
	}
	r, err := s.api.Get(ctx, memhost.GetRequest{Path: p})
	switch fault.KindOf(err) {
	case "":
	case fault.NotFound, fault.Outside, fault.BadInput:
		return nil, mcpsdk.ResourceNotFoundError(uri)
	default:
		return nil, err
	}
	return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: uri, MIMEType: markdown, Text: r.Text}}}, nil
}

// subscribe accepts subscriptions to notebook pages only.
func (s *srv) subscribe(_ context.Context, req *mcpsdk.SubscribeRequest) error {
	if _, ok := pageOf(req.Params.URI); !ok {
		return fmt.Errorf("cannot subscribe to %q: only notebook pages (%s<path>) change", req.Params.URI, URIPrefix)
	}
	return nil
}

// changed notifies the clients of a page change: subscribers of the page
// with notifications/resources/updated, and every client with
// list_changed when the page came or went.
func (s *srv) changed(c Change) {
	if !strings.HasSuffix(c.Path, ".md") {
		return // a transcript
	}
	s.mu.Lock()
	known := s.pages[c.Path]
	switch {
	case c.Removed && known:
		delete(s.pages, c.Path)
	case !c.Removed && !known:
		s.pages[c.Path] = true
	}
	s.mu.Unlock()
	switch {
	case c.Removed && known:
		s.sdk.RemoveResources(PageURI(c.Path))
	case !c.Removed && !known:
		s.sdk.AddResource(pageResource(c.Path, 0), s.readPage)
	}
	s.sdk.ResourceUpdated(context.Background(), &mcpsdk.ResourceUpdatedNotificationParams{URI: PageURI(c.Path)})
}
