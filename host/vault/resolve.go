// Package vault reads the notebook as an Obsidian vault: it resolves
// wikilinks to pages the way Obsidian does, rewrites the links to a page
// that is renamed, and writes the weekly and monthly rollups of the daily
// logs. It works on paths and text only; the host feeds it the index's
// pages and links and writes what it returns.
package vault

import (
	"path"
	"sort"
	"strings"
)

// Page is a page that links may name: its path in the notebook (ending in
// .md) and its frontmatter aliases.
type Page struct {
	Path    string
	Aliases []string
}

// Resolver finds the page (or attachment) a wikilink names. It is built
// once over the notebook's pages and then read only: safe for concurrent
// use.
//
// The rules are Obsidian's, matched case-insensitively and without the
// .md extension:
//  1. a path from the linking page's folder ([[notes]] beside it, or
//     [[../notes]]), then from the notebook's root ([[people/Sarah Chen]]);
//  2. a file name, or the end of a path ([[Sarah Chen]] finds
//     people/Sarah Chen.md wherever it is);
//  3. a frontmatter alias (Obsidian suggests aliases when a link is typed;
//     memhost also resolves a link written with one, so that a page named
//     by an alias is found);
//  4. for a target with another extension ([[photo.png]]), an attachment.
//
// When several pages match, the one in the linking page's folder wins,
// else the shortest path, else the first in path order.
type Resolver struct {
	paths   map[string]string   // lowercased path without .md → path
	names   map[string][]string // lowercased file name without .md → paths
	aliases map[string][]string // lowercased alias → paths
	files   map[string]string   // lowercased attachment path → path
	fnames  map[string][]string // lowercased attachment file name → paths
}

// NewResolver indexes pages and attachments (other files of the notebook,
// by path).
func NewResolver(pages []Page, attachments []string) *Resolver {
	r := &Resolver{
		paths:   make(map[string]string, len(pages)),
		names:   make(map[string][]string, len(pages)),
		aliases: map[string][]string{},
		files:   make(map[string]string, len(attachments)),
		fnames:  make(map[string][]string, len(attachments)),
	}
	for _, p := range pages {
		k := strings.ToLower(trimMD(p.Path))
		r.paths[k] = p.Path
		r.names[path.Base(k)] = append(r.names[path.Base(k)], p.Path)
		for _, a := range p.Aliases {
			a = strings.ToLower(strings.TrimSpace(a))
			if a != "" {
				r.aliases[a] = append(r.aliases[a], p.Path)
			}
		}
	}
	for _, f := range attachments {
		k := strings.ToLower(f)
		r.files[k] = f
		r.fnames[path.Base(k)] = append(r.fnames[path.Base(k)], f)
	}
	return r
}

// Resolve returns the path of the page or attachment that target (a
// link's page part, as written) names in a link on page from, and whether
// there is one.
func (r *Resolver) Resolve(from, target string) (string, bool) {
	t := strings.TrimSpace(target)
	if t == "" {
		return "", false
	}
	dir := path.Dir(from)
	if strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") {
		t, dir = path.Join(dir, t), "." // resolved from the folder already
		if strings.HasPrefix(t, "../") || t == ".." {
			return "", false
		}
	}
	t = strings.TrimPrefix(t, "/")
	k := strings.ToLower(trimMD(t))
	if dir != "." {
		if p, ok := r.paths[strings.ToLower(dir)+"/"+k]; ok {
			return p, true // beside the linking page
		}
	}
	if p, ok := r.paths[k]; ok {
		return p, true
	}
	if p, ok := pick(from, suffixed(r.names[path.Base(k)], k, true)); ok {
		return p, true
	}
	if p, ok := pick(from, r.aliases[strings.ToLower(t)]); ok {
		return p, true
	}
	if path.Ext(t) != "" {
		k = strings.ToLower(t)
		if p, ok := r.files[k]; ok {
			return p, true
		}
		return pick(from, suffixed(r.fnames[path.Base(k)], k, false))
	}
	return "", false
}

// suffixed keeps the candidates whose path (without .md for pages) is k or
// ends with "/"+k: [[folder/Note]] names a/folder/Note.md, not b/Note.md.
func suffixed(cands []string, k string, md bool) []string {
	if !strings.Contains(k, "/") {
		return cands
	}
	var out []string
	for _, c := range cands {
		lc := strings.ToLower(c)
		if md {
			lc = trimMD(lc)
		}
		if lc == k || strings.HasSuffix(lc, "/"+k) {
			out = append(out, c)
		}
	}
	return out
}

// pick chooses among candidates: the one in from's folder, else the
// shortest path, else the first by path.
func pick(from string, cands []string) (string, bool) {
	switch len(cands) {
	case 0:
		return "", false
	case 1:
		return cands[0], true
	}
	dir := path.Dir(from)
	best := ""
	for _, c := range cands {
		if path.Dir(c) == dir {
			if best == "" || c < best {
				best = c
			}
		}
	}
	if best != "" {
		return best, true
	}
	sorted := append([]string(nil), cands...)
	sort.Slice(sorted, func(i, j int) bool {
		if len(sorted[i]) != len(sorted[j]) {
			return len(sorted[i]) < len(sorted[j])
		}
		return sorted[i] < sorted[j]
	})
	return sorted[0], true
}

// LinkText is the target a link to page should be written with in a link
// on page from: the file name alone when that finds page (Obsidian's
// "shortest path when possible"), else its path from the root; without
// .md either way.
func (r *Resolver) LinkText(from, page string) string {
	name := path.Base(trimMD(page))
	if p, ok := r.Resolve(from, name); ok && p == page {
		return name
	}
	return trimMD(page)
}

func trimMD(p string) string {
	if strings.EqualFold(path.Ext(p), ".md") {
		return p[:len(p)-3]
	}
	return p
}
