package vault

import (
	"context"
	"errors"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/requests"
	"github.com/memhost/memhost/index/vaultrows"
)

// vaultGraph is the notebook's pages and links as the index holds them,
// with the resolver over them.
type vaultGraph struct {
	pages    []vaultrows.Page
	links    []vaultrows.PageLink
	resolver *Resolver
}

// graph reads the pages (and, with links, every link) from the index,
// after syncing what changed when fresh.
func (s *VaultService) graph(ctx context.Context, fresh, links bool) (vaultGraph, error) {
	var g vaultGraph
	err := s.k.WithIndex(ctx, func() error {
		if fresh {
			if _, err := s.k.Indexer().Fresh(ctx); err != nil {
				return err
			}
		}
		var err error
		if g.pages, err = s.k.Index().Vault().Pages(ctx); err != nil || !links {
			return err
		}
		g.links, err = s.k.Index().Vault().Links(ctx, "")
		return err
	})
	if err != nil {
		return g, err
	}
	g.resolver = NewResolver(vaultPages(g.pages), s.attachments())
	return g, nil
}

func vaultPages(pages []vaultrows.Page) []Page {
	out := make([]Page, len(pages))
	for i, p := range pages {
		out[i] = Page{Path: p.Path, Aliases: p.Aliases}
	}
	return out
}

// unresolved lists the links that resolve to nothing, by page and line.
func (g vaultGraph) unresolved() []memhost.LinkInfo {
	var out []memhost.LinkInfo
	for _, l := range g.links {
		if _, ok := g.resolver.Resolve(l.From, l.Target); !ok {
			out = append(out, linkInfo(l.From, l.Link, false))
		}
	}
	return out
}

func linkInfo(page string, l vaultrows.Link, resolved bool) memhost.LinkInfo {
	return memhost.LinkInfo{Page: page, Target: l.Target, Heading: l.Heading, Alias: l.Alias, Embed: l.Embed, Markdown: l.Markdown, Line: l.Line, Resolved: resolved}
}

// Links lists a page's out links (each with the page it resolves to) and
// its back links (the links in other pages that resolve to it), resolved
// as Obsidian resolves them (see Resolver); with Unresolved, every
// link of the notebook that finds no page. The page is a path, or a name
// as a wikilink gives it ("Project Alpha").
func (s *VaultService) Links(ctx context.Context, req memhost.LinksRequest) (memhost.LinksResponse, error) {
	resp := memhost.LinksResponse{Out: []memhost.LinkInfo{}, Back: []memhost.LinkInfo{}}
	if req.Path == "" && !req.Unresolved {
		return resp, fault.BadInputf("path", "no page given")
	}
	var rel string
	if req.Path != "" {
		var err error
		if rel, err = s.k.Notebook().Clean(req.Path); err != nil {
			return resp, err
		}
	}
	if rel == "" {
		// The unresolved links alone: synced, then from the cache while
		// no page changes.
		err := s.k.WithIndex(ctx, func() error {
			_, err := s.k.Indexer().Fresh(ctx)
			return err
		})
		if err != nil {
			return resp, err
		}
		list, err := s.UnresolvedLinks(ctx)
		resp.Unresolved = slices.Clone(list)
		return resp, err
	}
	g, err := s.graph(ctx, true, req.Unresolved)
	if err != nil {
		return resp, err
	}
	if rel != "" && !s.k.PageExists(rel) {
		// A page may be named as a link names it: "Project Alpha".
		if p, ok := g.resolver.Resolve("", req.Path); ok && strings.EqualFold(path.Ext(p), ".md") {
			rel = p
		} else if _, err := s.k.Notebook().Read(rel); err != nil {
			return resp, err
		}
	}
	if req.Unresolved {
		resp.Unresolved = g.unresolved()
		if resp.Unresolved == nil {
			resp.Unresolved = []memhost.LinkInfo{}
		}
	}
	if rel == "" {
		return resp, nil
	}
	resp.Path = rel
	for _, p := range g.pages {
		if p.Path == rel {
			resp.Title, resp.Aliases = p.Title, p.Aliases
		}
	}
	if resp.Tags, err = s.k.Index().Vault().Tags(ctx, rel); err != nil {
		return resp, err
	}
	out, back := g.links, g.links
	if !req.Unresolved {
		// Not every link is needed: the page's own, and those whose
		// target could name it.
		if out, err = s.k.Index().Vault().Links(ctx, rel); err != nil {
			return resp, err
		}
		if names := linkNames(rel, resp.Aliases); names != nil {
			back, err = s.k.Index().Vault().LinksNamed(ctx, names)
		} else {
			back, err = s.k.Index().Vault().Links(ctx, "")
		}
		if err != nil {
			return resp, err
		}
	}
	for _, l := range out {
		if l.From == rel {
			to, ok := g.resolver.Resolve(l.From, l.Target)
			resp.Out = append(resp.Out, linkInfo(to, l.Link, ok))
		}
	}
	for _, l := range back {
		if to, ok := g.resolver.Resolve(l.From, l.Target); ok && to == rel && l.From != rel {
			resp.Back = append(resp.Back, linkInfo(l.From, l.Link, true))
		}
	}
	return resp, nil
}

// Move renames a page (never over another one) and rewrites the links
// that found it under its old name, wikilinks and markdown links, in every
// page, so that they find it under the new one (a link that still does, by
// an alias or a file name the page kept, stays as it is); so too the
// renamed page's own links that a new folder would lead elsewhere
// ([x](../notes.md)). Only the page part of each link changes, in the
// style it was written (linkText); its #heading, |alias or text stay, and
// nothing else of the page changes. Frontmatter is never touched.
func (s *VaultService) Move(ctx context.Context, req memhost.MoveRequest) (out memhost.MoveResponse, err error) {
	from, err := s.k.Notebook().Clean(req.From)
	if err != nil {
		return memhost.MoveResponse{}, err
	}
	to, err := s.k.Notebook().Clean(req.To)
	if err != nil {
		return memhost.MoveResponse{}, fault.Errorf(fault.KindOf(err), "to", "%w", err)
	}
	if from == to {
		return memhost.MoveResponse{}, fault.BadInputf("to", "%s is already the page's name", to)
	}
	g, err := s.graph(ctx, true, true)
	if err != nil {
		return memhost.MoveResponse{}, err
	}
	resp := memhost.MoveResponse{From: from, To: to, Updated: []memhost.LinkUpdate{}}
	rq := once.Request{Op: api.OpMove.Name, ID: req.RequestID, Resp: &resp}
	var landed *requests.Record
	if err := s.k.Notebook().RenameGuarded(ctx, from, to, s.k.Once().Guard(rq, from, to, &landed)); err != nil {
		return memhost.MoveResponse{}, err
	}
	if landed != nil {
		// A retry of a move whose rename landed (its server died before
		// answering): finished, it answers as the first run did; killed
		// before its links were all rewritten, it rewrites them now,
		// judged against the notebook as it was before the rename
		// (rewriting is idempotent: a link done already finds the page).
		if landed.Done {
			resp.Warnings = append(resp.Warnings, s.k.IndexWritten(ctx, from, to)...)
			return resp, nil
		}
		for i := range g.pages {
			if g.pages[i].Path == to {
				g.pages[i].Path = from
			}
		}
		for i := range g.links {
			if g.links[i].From == to {
				g.links[i].From = from
			}
		}
		g.resolver = NewResolver(vaultPages(g.pages), s.attachments())
	}
	// The pages whose links found the old name (and the page itself, whose
	// links are read from its new folder now), and the resolver of the
	// notebook after the rename, which chooses the new links' text.
	linkers := map[string]bool{from: true}
	for _, l := range g.links {
		if p, ok := g.resolver.Resolve(l.From, l.Target); ok && p == from {
			linkers[l.From] = true
		}
	}
	after := make([]Page, 0, len(g.pages))
	for _, p := range vaultPages(g.pages) {
		if p.Path == from {
			p.Path = to
		}
		after = append(after, p)
	}
	newResolver := NewResolver(after, s.attachments())
	paths := []string{from, to}
	pages := make([]string, 0, len(linkers))
	for p := range linkers {
		pages = append(pages, p)
	}
	sort.Strings(pages)
	for _, src := range pages {
		page := src
		if src == from {
			page = to
		}
		n := 0
		err := s.k.Notebook().Update(ctx, page, func(old []byte, exists bool) ([]byte, error) {
			if !exists {
				return nil, errPageGone
			}
			text, count := RewriteLinks(string(old), func(l markdown.Link) (string, bool) {
				dest, ok := g.resolver.Resolve(src, l.Target)
				if !ok || (dest != from && src != from) {
					return "", false
				}
				if dest == from {
					dest = to
				}
				if p, ok := newResolver.Resolve(page, l.Target); ok && p == dest {
					return "", false // it still finds the page: an alias, a name kept
				}
				return linkText(newResolver, src, page, l, dest, g.resolver), true
			})
			if n = count; count == 0 {
				return nil, notebook.ErrUnchanged
			}
			return []byte(text), nil
		})
		switch {
		case err == nil:
			resp.Updated = append(resp.Updated, memhost.LinkUpdate{Path: page, Links: n})
			paths = append(paths, page)
		case errors.Is(err, notebook.ErrUnchanged), errors.Is(err, errPageGone):
		default:
			resp.Warnings = append(resp.Warnings, "links in "+page+" not updated: "+err.Error())
		}
	}
	s.k.Once().Finish(rq, from, to)
	resp.Warnings = append(resp.Warnings, s.k.IndexWritten(ctx, paths...)...)
	return resp, nil
}

// linkText is the page part link l, in the page at page (src before the
// move), is written with so that r (the notebook after the move) finds
// dest, in the style l was written with (before, the notebook before the
// move, tells it): a wikilink, or a markdown link found by its name, gets
// the file name when that is unique, else the path from the root
// (Resolver.LinkText); a markdown link written as a path from its page's
// folder ("notes.md", "../people/Sarah Chen.md") stays one from the
// page's folder now, a path from the root ("/people/x.md" or
// "people/x.md") one from the root. The .md extension is written when l
// had it.
func linkText(r *Resolver, src, page string, l markdown.Link, dest string, before *Resolver) string {
	t := l.Target
	isMD := func(p string) bool { return strings.EqualFold(path.Ext(p), ".md") }
	ext := func(p string) string { // p: a path ending in dest's extension
		if isMD(p) && !isMD(t) {
			return strings.TrimSuffix(p, path.Ext(p))
		}
		return p
	}
	byName := func() string {
		nt := r.LinkText(page, dest)
		if isMD(t) && isMD(dest) && !isMD(nt) {
			nt += ".md"
		}
		return nt
	}
	if !l.Markdown {
		return byName()
	}
	old, _ := before.Resolve(src, t)
	same := func(a, b string) bool { // paths, with or without .md
		return strings.EqualFold(a, b) || strings.EqualFold(a+".md", b)
	}
	var nt string
	switch {
	case strings.HasPrefix(t, "/"):
		nt = "/" + ext(dest)
	case strings.HasPrefix(t, "./"), strings.HasPrefix(t, "../"),
		path.Dir(src) != "." && same(path.Join(path.Dir(src), t), old):
		nt = ext(relativePath(path.Dir(page), dest))
		if strings.HasPrefix(t, "./") && !strings.HasPrefix(nt, "../") {
			nt = "./" + nt
		}
	case same(t, old):
		nt = ext(dest)
	default:
		return byName()
	}
	if p, ok := r.Resolve(page, nt); !ok || p != dest {
		return byName()
	}
	return nt
}

// relativePath is the path of target (from the notebook's root) from the
// folder dir ("." for the root).
func relativePath(dir, target string) string {
	if dir == "." {
		return target
	}
	d, t := strings.Split(dir, "/"), strings.Split(target, "/")
	i := 0
	for i < len(d) && i < len(t)-1 && d[i] == t[i] {
		i++
	}
	return strings.Repeat("../", len(d)-i) + strings.Join(t[i:], "/")
}

// errPageGone means a page was removed while Move was updating it.
var errPageGone = errors.New("the page was removed meanwhile")

// linkNames are the names a link to the page at rel may end with: its file
// name without .md and its aliases, lowercased, for VaultLinksNamed; nil
// (every link) when one is not ASCII, which SQLite's case folding does not
// cover.
func linkNames(rel string, aliases []string) []string {
	names := []string{strings.ToLower(strings.TrimSuffix(path.Base(rel), path.Ext(rel)))}
	for _, a := range aliases {
		names = append(names, strings.ToLower(strings.TrimSpace(a)))
	}
	for _, n := range names {
		for _, r := range n {
			if r >= 0x80 {
				return nil
			}
		}
	}
	return names
}
