// Package markdowntest holds the cases that every reader of markdown in
// memhost is tested against, so that the packages which read a page's
// frontmatter each their own way (bytes, lines with or without their
// endings) are held to one answer.
package markdowntest

// FrontmatterCase is a page and its frontmatter as host/markdown reads
// it: from a "---" first line to the next "---" line (trailing blanks
// aside), never to a "..." line.
type FrontmatterCase struct {
	Name string
	Page string
	// Lines is how many lines the block takes, both "---" lines included;
	// 0 when the page has none.
	Lines int
	// YAML is the page's bytes between the two "---" lines, line endings
	// as written; Body the bytes after the closing line and its ending.
	// Without frontmatter YAML is "" and Body is the page.
	YAML, Body string
}

// FrontmatterCases are the pages every frontmatter reader must agree on.
var FrontmatterCases = []FrontmatterCase{
	{Name: "closed by ---", Page: "---\na: 1\n---\nbody", Lines: 3, YAML: "a: 1\n", Body: "body"},
	// YAML ends a document with "...", and Jekyll and Pandoc end
	// frontmatter there too; Obsidian, goldmark-meta and Hugo do not, and
	// the notebook is read as Obsidian reads it: the block is not closed.
	{Name: "closed by ...", Page: "---\na: 1\n...\nbody", Body: "---\na: 1\n...\nbody"},
	{Name: "... before ---", Page: "---\na: 1\n...\n---\nbody", Lines: 4, YAML: "a: 1\n...\n", Body: "body"},
	{Name: "never closed", Page: "---\na: 1\nbody\n", Body: "---\na: 1\nbody\n"},
	{Name: "--- not on line 1", Page: "\n---\na: 1\n---\nbody", Body: "\n---\na: 1\n---\nbody"},
	{Name: "text before ---", Page: "body\n---\na: 1\n---\n", Body: "body\n---\na: 1\n---\n"},
	{Name: "CRLF", Page: "---\r\na: 1\r\n---\r\nbody\r\n", Lines: 3, YAML: "a: 1\r\n", Body: "body\r\n"},
	{Name: "trailing blanks", Page: "---  \na: 1\n---\t\nbody", Lines: 3, YAML: "a: 1\n", Body: "body"},
	{Name: "... in the body", Page: "---\na: 1\n---\nbody\n...\nmore\n", Lines: 3, YAML: "a: 1\n", Body: "body\n...\nmore\n"},
	{Name: "empty block", Page: "---\n---\nbody", Lines: 2, Body: "body"},
	{Name: "closed at the end", Page: "---\na: 1\n---", Lines: 3, YAML: "a: 1\n"},
	{Name: "only ---", Page: "---\n", Body: "---\n"},
	{Name: "empty page"},
}
