// Package pagehtml renders a notebook page's markdown to safe HTML for the
// dashboard: goldmark with wikilinks and inline fields, frontmatter as
// properties, block by block with source lines, and bounded in size and
// time (render.go). Of memhost's packages it imports host/markdown alone,
// which imports none, for the frontmatter rule every reader of a page
// shares.
package pagehtml
