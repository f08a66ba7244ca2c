package indexer

import (
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/index/vaultrows"
)

// PageVault reads what the index keeps of a page's Obsidian metadata: the
// frontmatter's title and aliases, its tags and the inline #tags, and the
// wikilinks. YAML that does not parse is an error (the page is still
// indexed, its body without the frontmatter block, its links and inline
// tags kept). The links are wikilinks and markdown links to vault files.
func PageVault(text string) (*vaultrows.Meta, error) {
	fm, err := markdown.ParseFrontmatter(text)
	lines := markdown.Lines(text)
	v := &vaultrows.Meta{Title: fm.Title, Aliases: fm.Aliases}
	seen := map[string]bool{}
	for _, t := range fm.Tags {
		if !seen[t] {
			seen[t] = true
			v.Tags = append(v.Tags, t)
		}
	}
	for _, t := range markdown.InlineTags(lines) {
		if !seen[t.Name] {
			seen[t.Name] = true
			v.Tags = append(v.Tags, t.Name)
		}
	}
	for _, l := range markdown.Links(lines) {
		v.Links = append(v.Links, vaultrows.Link{Target: l.Target, Heading: l.Heading, Alias: l.Alias, Embed: l.Embed, Line: l.Line, Markdown: l.Markdown})
	}
	return v, err
}
