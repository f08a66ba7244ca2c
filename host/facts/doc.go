// Package facts is memhost's semantic tier on disk: durable facts about
// entities (people, projects, tools), one markdown page per entity under
// knowledge/entities/, which a person reads and edits in any editor or
// Obsidian. The pages are the source of truth; the index's facts,
// entity_relations and entities tables are derived from them (see
// index/facts.go) and rebuilt like every other table.
//
// # The page format
//
//	---
//	title: Sarah Chen
//	aliases:
//	    - Sarah
//	tags:
//	    - entity
//	created: 2026-11-20
//	updated: 2026-11-23
//	---
//	# Sarah Chen
//
//	## works at
//	- ~~[[techflow]]~~ [seen:: 2026-11-20] [until:: 2026-11-23] [source:: chat-1 turn 1a2b3c4d5e6f] ^f3c9a01
//	- [[acme-corp]] [confidence:: 0.9] [seen:: 2026-11-23] [supersedes:: f3c9a01] [source:: chat-1 turn 8f3a2b1c9d0e] ^f7e1b22
//
//	## email
//	- sarah@acme.example [seen:: 2026-11-23] [source:: cli] ^f0d4c13
//
// The frontmatter is YAML (title, aliases, tags, created, updated; other
// keys are kept). Each H2 section is an attribute; each top-level list item
// in it is a fact: its value, then Dataview-style inline fields
// ([key:: value], which Obsidian's Dataview plugin reads and which read as
// plain text elsewhere), then an Obsidian block id (^f7e1b22), so
// [[sarah-chen#^f7e1b22]] links to the fact. Fields: confidence (0..1,
// omitted when 1), seen (first seen), confirmed (last confirmed, omitted
// when equal to seen), until (the day it stopped being current), forgotten
// (the day it was forgotten), supersedes (the id of the fact it replaced),
// source (the session and turn, or the page and line, or what a person
// gave). A value struck through (~~...~~) is no longer current: superseded
// when a newer fact names it in supersedes, forgotten when it has a
// forgotten field, else retired by hand. A wikilink in a current value is a
// relation: "works at [[acme-corp]]" relates sarah-chen to acme-corp by
// "works at".
//
// Anything else on a page (a paragraph, a nested list, a code block, a
// section a person wrote) is kept as it is: a page is edited line by line,
// so memhost's writes change only the lines of the facts they touch (and
// the updated date), and a page parsed and written back unchanged is the
// same bytes (FuzzParse). A page memhost wrote round-trips through the
// index exactly: Render(Parse(p).Entity()) == p (TestRoundTripThroughIndex
// in package host).
package facts
