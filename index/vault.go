package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The vault tables hold what a page's Obsidian metadata says: its title and
// aliases (frontmatter), its tags (frontmatter and inline #tags) and its
// wikilinks as written. Links are stored unresolved: which page
// [[Sarah Chen]] means depends on every other page's name (Obsidian's
// shortest-path rule), so it is resolved when asked, over the pages the
// index holds at that moment, never left stale by a page added later.
var vaultSchema = []string{
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

var vaultTables = []string{"page_meta", "page_tags", "page_links"}

func init() {
	schema = append(schema, vaultSchema...)
	tables = append(tables, vaultTables...)
}

// addVaultTables upgrades a schema 9 index: the vault tables are made, and
// every page's row is marked changed so that the next sync reads each page
// again, filling them (and chunking it without its frontmatter, which it
// used to index as text). Vectors of unchanged chunks come back from the
// embedding cache.
func addVaultTables(ctx context.Context, tx *sql.Tx) error {
	for _, stmt := range vaultSchema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `UPDATE files SET hash = '', size = -1 WHERE source != 'sessions'`)
	return err
}

// addMarkdownLinks upgrades a schema 10 index, whose page_links held
// wikilinks only: the column that tells markdown links is added, and the
// pages whose text holds "](" (a markdown link, maybe) are marked changed,
// so that the next sync reads their links again. The others keep their
// rows.
func addMarkdownLinks(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `ALTER TABLE page_links ADD COLUMN markdown INTEGER NOT NULL DEFAULT 0`); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE files SET hash = '', size = -1 WHERE source != 'sessions'
		AND path IN (SELECT file_path FROM chunks WHERE text LIKE '%](%')`)
	return err
}

// touchVault gives the vault tables a new generation: every transaction
// that writes or removes a page's rows calls it (a transcript's are none),
// so that what is derived from every page's links (the unresolved links
// Status counts) is known to be stale. A random value, unlike a counter,
// cannot come back after CopyFrom or a rebuild.
func touchVault(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES ('vault_generation', hex(randomblob(16)))`)
	return err
}

// VaultGeneration names the state of the index's pages and links: it
// changes with every write of a page (by this process or another) and
// when the database file is replaced. "" for an index no page was written
// to since it had the vault tables.
func (d *DB) VaultGeneration(ctx context.Context) (string, error) {
	gen := d.Generation()
	var v string
	err := d.handle().QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'vault_generation'`).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("vault generation: %w", err)
	}
	return strconv.FormatInt(gen, 10) + "/" + v, nil
}

// Vault is the Obsidian metadata of one page, stored with its chunks.
type Vault struct {
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

// putVault stores v for the page at path, whose old rows removeFile
// deleted.
func putVault(ctx context.Context, tx *sql.Tx, path string, v *Vault) error {
	if v == nil {
		return nil
	}
	if err := touchVault(ctx, tx); err != nil {
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

func removeVault(ctx context.Context, tx *sql.Tx, path string) error {
	var source string
	err := tx.QueryRowContext(ctx, `SELECT source FROM files WHERE path = ?`, path).Scan(&source)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if err == nil && source != "sessions" {
		if err := touchVault(ctx, tx); err != nil {
			return err
		}
	}
	for _, t := range vaultTables {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE file_path = ?`, path); err != nil {
			return err
		}
	}
	return nil
}

// VaultPage is an indexed page with its title and aliases.
type VaultPage struct {
	Path    string
	Title   string
	Aliases []string
}

// VaultPages returns every indexed page (not transcripts), by path.
func (d *DB) VaultPages(ctx context.Context) ([]VaultPage, error) {
	rows, err := d.handle().QueryContext(ctx, `SELECT f.path, coalesce(m.title, ''), coalesce(m.aliases, '[]')
		FROM files f LEFT JOIN page_meta m ON m.file_path = f.path
		WHERE f.source != 'sessions' ORDER BY f.path`)
	if err != nil {
		return nil, fmt.Errorf("vault pages: %w", err)
	}
	defer rows.Close()
	var out []VaultPage
	for rows.Next() {
		var p VaultPage
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

// VaultLinks returns the links of the page at from, or of every page when
// from is "", ordered by page and line.
func (d *DB) VaultLinks(ctx context.Context, from string) ([]PageLink, error) {
	q := `SELECT file_path, line, target, heading, alias, embed, markdown FROM page_links`
	var args []any
	if from != "" {
		q += ` WHERE file_path = ?`
		args = append(args, from)
	}
	rows, err := d.handle().QueryContext(ctx, q+` ORDER BY file_path, line, rowid`, args...)
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

// PageTags returns the tags of the page at path, sorted.
func (d *DB) PageTags(ctx context.Context, path string) ([]string, error) {
	rows, err := d.handle().QueryContext(ctx, `SELECT tag FROM page_tags WHERE file_path = ? ORDER BY tag`, path)
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

func (s Scope) filters() bool { return s.Prefix != "" || len(s.Tags) > 0 }

// cond returns an SQL condition on the file path column col holding the
// scope's limits, with its arguments added through arg.
func (s Scope) cond(col string, arg func(any) string) string {
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

// SearchVectorsIn is SearchVectors limited to a scope, inside the nearest
// neighbour search as SearchVectors limits to a file: the hits are the k
// nearest of the chunks the scope allows. A scope of a few chunks
// (pointSearchMax) compares q with each of their vectors; a larger one runs
// the KNN (or the two-stage search over bits) with the allowed chunk ids.
func (d *DB) SearchVectorsIn(ctx context.Context, q []float32, k int, sources []string, sc Scope) ([]Hit, error) {
	if !sc.filters() {
		return d.SearchVectors(ctx, q, k, sources, sc.Path)
	}
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "?" + strconv.Itoa(len(args))
	}
	where := sc.cond("file_path", arg)
	var parts []string
	for _, s := range sources {
		if !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	if len(parts) > 0 {
		list := make([]string, len(parts))
		for i, s := range parts {
			list[i] = arg(s)
		}
		where += ` AND source IN (` + strings.Join(list, ", ") + `)`
	}
	rows, err := d.handle().QueryContext(ctx, `SELECT id, source FROM chunks WHERE embedded = 1 AND `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	allow := map[int64]bool{}
	var ids []int64
	var in []string
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			rows.Close()
			return nil, err
		}
		allow[id] = true
		ids = append(ids, id)
		if !slices.Contains(in, s) {
			in = append(in, s)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	q = unit(q)
	idJSON, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	args = nil
	qv, kv, iv := arg(EncodeVector(q)), arg(k), arg(string(idJSON))
	if len(ids) <= pointSearchMax {
		return d.knnHits(ctx, `SELECT v.chunk_id, vec_distance_l2(v.embedding, `+qv+`) AS distance
			FROM json_each(`+iv+`) j CROSS JOIN chunks_vec v ON v.chunk_id = j.value`, args, kv)
	}
	s, err := d.bits(ctx)
	if err != nil && !errors.Is(err, errBitLayout) {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	if s != nil && err == nil {
		if n := max(oversample*k, minCandidates); s.count(in) >= d.coarseRatio*n {
			cand, err := s.candidates(q, n, in, allow)
			if err != nil {
				return nil, fmt.Errorf("vector search: %w", err)
			}
			return d.rescore(ctx, q, cand, k)
		}
	}
	// vec0 applies chunk_id IN (...) within the KNN; one KNN per partition.
	knn := `SELECT chunk_id, distance FROM chunks_vec WHERE embedding MATCH ` + qv + ` AND k = ` + kv +
		` AND chunk_id IN (SELECT value FROM json_each(` + iv + `))`
	arms := make([]string, len(in))
	for i, s := range in {
		arms[i] = knn + ` AND source = ` + arg(s)
	}
	return d.knnHits(ctx, strings.Join(arms, `
		UNION ALL `), args, kv)
}

// VaultLinksNamed returns the links whose target could name a page called
// one of names (lowercase ASCII, without .md): the target, without a
// trailing ".md", is the name or ends with "/" and the name, compared
// without regard to ASCII case. It narrows the links a page's back links
// are resolved from (Links of one page) without reading every link.
func (d *DB) VaultLinksNamed(ctx context.Context, names []string) ([]PageLink, error) {
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
	rows, err := d.handle().QueryContext(ctx, `SELECT file_path, line, target, heading, alias, embed, markdown FROM page_links
		WHERE `+strings.Join(conds, " OR ")+` ORDER BY file_path, line, rowid`, args...)
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
