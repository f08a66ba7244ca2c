// Package vaultrows holds the index's vault tables (page_meta,
// page_tags, page_links): their schema and upgrades, the rows a page's
// metadata gives, written and removed in the index's transaction for the
// page (index.DB.Apply), the reads over them (Reader) and Scope, the
// pages a search may return.
package vaultrows

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The vault tables hold what a page's Obsidian metadata says: its title and
// aliases (frontmatter), its tags (frontmatter and inline #tags) and its
// wikilinks as written. Links are stored unresolved: which page
// [[Sarah Chen]] means depends on every other page's name (Obsidian's
// shortest-path rule), so it is resolved when asked, over the pages the
// index holds at that moment, never left stale by a page added later.
var Schema = []string{
	`CREATE TABLE IF NOT EXISTS page_meta (
		file_path TEXT PRIMARY KEY,
		title TEXT NOT NULL,
		aliases TEXT NOT NULL            -- JSON array of strings
	)`,
	`CREATE TABLE IF NOT EXISTS page_tags (
		tag TEXT NOT NULL,               -- normalised: no '#', lowercase; nested tags keep their '/'
		file_path TEXT NOT NULL,
		PRIMARY KEY (tag, file_path)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS idx_page_tags_file ON page_tags(file_path)`,
	`CREATE TABLE IF NOT EXISTS page_links (
		file_path TEXT NOT NULL,         -- the page the link is in
		line INTEGER NOT NULL,
		target TEXT NOT NULL,            -- as written: "Sarah Chen", "people/sarah-chen", "photo.png"
		heading TEXT NOT NULL,
		alias TEXT NOT NULL,
		embed INTEGER NOT NULL,
		markdown INTEGER NOT NULL DEFAULT 0 -- [text](target): target URL-decoded, alias the text
	)`,
	`CREATE INDEX IF NOT EXISTS idx_page_links_file ON page_links(file_path)`,
}

// Tables are the vault tables.
var Tables = []string{"page_meta", "page_tags", "page_links"}

// AddTables upgrades a schema 9 index: the vault tables are made, and
// every page's row is marked changed so that the next sync reads each page
// again, filling them (and chunking it without its frontmatter, which it
// used to index as text). Vectors of unchanged chunks come back from the
// embedding cache.
func AddTables(ctx context.Context, tx *sql.Tx) error {
	for _, stmt := range Schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `UPDATE files SET hash = '', size = -1 WHERE source != 'sessions'`)
	return err
}

// AddMarkdownLinks upgrades a schema 10 index, whose page_links held
// wikilinks only: the column that tells markdown links is added, and the
// pages whose text holds "](" (a markdown link, maybe) are marked changed,
// so that the next sync reads their links again. The others keep their
// rows.
func AddMarkdownLinks(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `ALTER TABLE page_links ADD COLUMN markdown INTEGER NOT NULL DEFAULT 0`); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE files SET hash = '', size = -1 WHERE source != 'sessions'
		AND path IN (SELECT file_path FROM chunks WHERE text LIKE '%](%')`)
	return err
}

// touch gives the vault tables a new generation: every transaction
// that writes or removes a page's rows calls it (a transcript's are none),
// so that what is derived from every page's links (the unresolved links
// Status counts) is known to be stale. A random value, unlike a counter,
// cannot come back after a copy or a rebuild.
func touch(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES ('vault_generation', hex(randomblob(16)))`)
	return err
}

// Meta is the Obsidian metadata of one page, stored with its chunks.
type Meta struct {
	Title   string
	Aliases []string
	Tags    []string // normalised, each once
	Links   []Link
}

// Link is one link as written in a page: a wikilink, or (Markdown) a
// markdown link to a vault file.
type Link struct {
	Target   string
	Heading  string
	Alias    string
	Embed    bool
	Line     int
	Markdown bool
}

// Put stores v for the page at path, whose old rows Remove deleted.
func Put(ctx context.Context, tx *sql.Tx, path string, v *Meta) error {
	if v == nil {
		return nil
	}
	if err := touch(ctx, tx); err != nil {
		return err
	}
	aliases, err := json.Marshal(append([]string{}, v.Aliases...))
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO page_meta(file_path, title, aliases) VALUES (?, ?, ?)`, path, v.Title, string(aliases)); err != nil {
		return err
	}
	for _, t := range v.Tags {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO page_tags(tag, file_path) VALUES (?, ?)`, t, path); err != nil {
			return err
		}
	}
	if len(v.Links) == 0 {
		return nil
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO page_links(file_path, line, target, heading, alias, embed, markdown) VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	for _, l := range v.Links {
		if _, err := ins.ExecContext(ctx, path, l.Line, l.Target, l.Heading, l.Alias, l.Embed, l.Markdown); err != nil {
			return err
		}
	}
	return nil
}

// Remove drops the rows of the file at path, a page's or a transcript's
// (which has none).
func Remove(ctx context.Context, tx *sql.Tx, path string) error {
	var source string
	err := tx.QueryRowContext(ctx, `SELECT source FROM files WHERE path = ?`, path).Scan(&source)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if err == nil && source != "sessions" {
		if err := touch(ctx, tx); err != nil {
			return err
		}
	}
	for _, t := range Tables {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE file_path = ?`, path); err != nil {
			return err
		}
	}
	return nil
}

// Reader reads the vault tables of one database handle (index.DB.Vault).
type Reader struct{ DB *sql.DB }

// Page is an indexed page with its title and aliases.
type Page struct {
	Path    string
	Title   string
	Aliases []string
}

// Pages returns every indexed page (not transcripts), by path.
func (r Reader) Pages(ctx context.Context) ([]Page, error) {
	rows, err := r.DB.QueryContext(ctx, `SELECT f.path, coalesce(m.title, ''), coalesce(m.aliases, '[]')
		FROM files f LEFT JOIN page_meta m ON m.file_path = f.path
		WHERE f.source != 'sessions' ORDER BY f.path`)
	if err != nil {
		return nil, fmt.Errorf("vault pages: %w", err)
	}
	defer rows.Close()
	var out []Page
	for rows.Next() {
		var p Page
		var aliases string
		if err := rows.Scan(&p.Path, &p.Title, &aliases); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(aliases), &p.Aliases); err != nil {
			return nil, fmt.Errorf("vault pages: aliases of %s: %w", p.Path, err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// PageLink is a link with the page it is in.
type PageLink struct {
	From string
	Link
}

// Links returns the links of the page at from, or of every page when
// from is "", ordered by page and line.
func (r Reader) Links(ctx context.Context, from string) ([]PageLink, error) {
	q := `SELECT file_path, line, target, heading, alias, embed, markdown FROM page_links`
	var args []any
	if from != "" {
		q += ` WHERE file_path = ?`
		args = append(args, from)
	}
	return r.links(ctx, q+` ORDER BY file_path, line, rowid`, args...)
}

// links runs query, which selects page_links' columns in the order
// PageLink has them.
func (r Reader) links(ctx context.Context, query string, args ...any) ([]PageLink, error) {
	rows, err := r.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("vault links: %w", err)
	}
	defer rows.Close()
	var out []PageLink
	for rows.Next() {
		var l PageLink
		if err := rows.Scan(&l.From, &l.Line, &l.Target, &l.Heading, &l.Alias, &l.Embed, &l.Markdown); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// Tags returns the tags of the page at path, sorted.
func (r Reader) Tags(ctx context.Context, path string) ([]string, error) {
	rows, err := r.DB.QueryContext(ctx, `SELECT tag FROM page_tags WHERE file_path = ? ORDER BY tag`, path)
	if err != nil {
		return nil, fmt.Errorf("page tags: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Scope limits a search to some pages: one file (Path), a folder or page
// (Prefix: the path itself, the path with ".md", or anything under
// "Prefix/"), and pages having every tag in Tags (a tag also matches its
// nested tags: "project" matches "project/alpha"). The zero Scope allows
// everything.
type Scope struct {
	Path   string
	Prefix string
	Tags   []string
}

// Filters reports whether the scope limits more than the file.
func (s Scope) Filters() bool { return s.Prefix != "" || len(s.Tags) > 0 }

// Cond returns an SQL condition on the file path column col holding the
// scope's limits, with its arguments added through arg.
func (s Scope) Cond(col string, arg func(any) string) string {
	var parts []string
	if s.Path != "" {
		parts = append(parts, col+` = `+arg(s.Path))
	}
	if p := strings.TrimSuffix(s.Prefix, "/"); p != "" {
		parts = append(parts, `(`+col+` IN (`+arg(p)+`, `+arg(p+".md")+`) OR substr(`+col+`, 1, `+arg(len(p)+1)+`) = `+arg(p+"/")+`)`)
	}
	for _, t := range s.Tags {
		// A nested tag's range: "x/" < "x/..." < "x0" ('0' follows '/').
		parts = append(parts, col+` IN (SELECT file_path FROM page_tags WHERE tag = `+arg(t)+
			` OR (tag > `+arg(t+"/")+` AND tag < `+arg(t+"0")+`))`)
	}
	if len(parts) == 0 {
		return "1"
	}
	return strings.Join(parts, " AND ")
}

// LinksNamed returns the links whose target could name a page called
// one of names (lowercase ASCII, without .md): the target, without a
// trailing ".md", is the name or ends with "/" and the name, compared
// without regard to ASCII case. It narrows the links a page's back links
// are resolved from (Links of one page) without reading every link.
func (r Reader) LinksNamed(ctx context.Context, names []string) ([]PageLink, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var conds []string
	var args []any
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	for _, n := range names {
		for _, v := range []string{n, n + ".md"} {
			conds = append(conds, `target = ? COLLATE NOCASE OR target LIKE ? ESCAPE '\'`)
			args = append(args, v, "%/"+esc.Replace(v))
		}
	}
	return r.links(ctx, `SELECT file_path, line, target, heading, alias, embed, markdown FROM page_links
		WHERE `+strings.Join(conds, " OR ")+` ORDER BY file_path, line, rowid`, args...)
}
