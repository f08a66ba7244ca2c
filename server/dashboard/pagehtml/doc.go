// Package pagehtml renders a notebook page's markdown to safe HTML for the
// dashboard: goldmark with wikilinks and inline fields, frontmatter as
// properties, block by block with source lines, and bounded in size and
// time (render.go). It may import goldmark only, nothing of ours.
package pagehtml
