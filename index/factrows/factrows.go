// Package factrows holds the index's fact tables (entities, facts,
// entity_relations, facts_fts): their schema, the rows an entity page
// gives, written and removed in the index's transaction for the page
// (index.DB.Apply), and the reads over them (Reader).
package factrows

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memhost/memhost/index/ftstext"
	"github.com/memhost/memhost/knowledge"
)

// The semantic tier's tables, derived from the entity pages of the
// notebook (knowledge/entities/*.md) like chunks are from every page: an
// Update whose Entity is set fills them, and removing the file's row
// removes its rows. Ids are the facts' own (the block ids on the pages) in
// fact_id and superseded_by; a fact's episode is source (as the page says
// it) and its parts (source_session, source_turn, or source_path and
// source_line), not an episode row's id, since memhost's episodes are
// transcript turns and page lines, not rows; file_path and line say where
// the fact is written; status says whether it is current. The embedding column stays empty:
// near-duplicates are found by embedding the few current facts of one
// entity when a fact is added.
var Schema = []string{
	`CREATE TABLE IF NOT EXISTS entities (
		slug TEXT PRIMARY KEY,
		file_path TEXT NOT NULL,
		title TEXT NOT NULL,
		aliases TEXT NOT NULL DEFAULT '[]', -- JSON array
		tags TEXT NOT NULL DEFAULT '[]',    -- JSON array
		created_at TEXT,
		updated_at TEXT
	)`,
	`CREATE INDEX IF NOT EXISTS idx_entities_file ON entities(file_path)`,
	`CREATE TABLE IF NOT EXISTS facts (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		fact_id TEXT NOT NULL,            -- the ^block id on the page
		file_path TEXT NOT NULL,
		line INTEGER NOT NULL,
		entity TEXT NOT NULL,             -- the page's slug
		attribute TEXT NOT NULL,
		value TEXT NOT NULL,
		confidence REAL DEFAULT 1.0,
		source TEXT,
		source_session TEXT,
		source_turn TEXT,
		source_path TEXT,
		source_line INTEGER,
		extracted_at TEXT,                -- first seen
		last_confirmed_at TEXT,
		until TEXT,
		forgotten_at TEXT,
		supersedes TEXT,                  -- fact ids, comma-separated
		superseded_by TEXT,               -- fact id
		status TEXT NOT NULL,             -- current | superseded | forgotten | retired
		extra TEXT,                       -- JSON: inline fields memhost does not know
		embedding BLOB
	)`,
	`CREATE INDEX IF NOT EXISTS idx_facts_entity ON facts(entity, attribute)`,
	`CREATE INDEX IF NOT EXISTS idx_facts_confidence ON facts(confidence)`,
	`CREATE INDEX IF NOT EXISTS idx_facts_file ON facts(file_path)`,
	`CREATE INDEX IF NOT EXISTS idx_facts_id ON facts(fact_id)`,
	`CREATE TABLE IF NOT EXISTS entity_relations (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		from_entity TEXT NOT NULL,
		relation TEXT NOT NULL,
		to_entity TEXT NOT NULL,
		weight REAL DEFAULT 1.0,
		source TEXT,
		fact_id TEXT NOT NULL,
		file_path TEXT NOT NULL,
		created_at TEXT NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS idx_relations_from ON entity_relations(from_entity, relation)`,
	`CREATE INDEX IF NOT EXISTS idx_relations_to ON entity_relations(to_entity, relation)`,
	`CREATE INDEX IF NOT EXISTS idx_relations_file ON entity_relations(file_path)`,
	// Current facts, searched by recall's FACTS group; rowid is facts.id.
	`CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
		entity,
		attribute,
		value,
		tokenize = 'porter unicode61 remove_diacritics 2'
	)`,
}

// Tables are the fact tables, in the order they are dropped.
var Tables = []string{"facts_fts", "entity_relations", "facts", "entities"}

// EntityDir is the notebook folder of entity pages (facts.Dir).
const EntityDir = "knowledge/entities/"

// Entity is the rows one entity page gives.
type Entity struct {
	Slug      string
	Title     string
	Aliases   []string
	Tags      []string
	Created   string
	Updated   string
	Facts     []knowledge.FactRow
	Relations []knowledge.RelationRow
}

// Insert writes the rows of the entity page at path (its old rows are
// gone: Remove ran first).
func Insert(ctx context.Context, tx *sql.Tx, path string, e *Entity) error {
	aliases, _ := json.Marshal(nonNil(e.Aliases))
	tags, _ := json.Marshal(nonNil(e.Tags))
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO entities(slug, file_path, title, aliases, tags, created_at, updated_at) VALUES (?, ?, ?, ?, ?, nullif(?, ''), nullif(?, ''))`,
		e.Slug, path, e.Title, string(aliases), string(tags), e.Created, e.Updated); err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO facts(fact_id, file_path, line, entity, attribute, value, confidence, source, source_session, source_turn, source_path, source_line,
		extracted_at, last_confirmed_at, until, forgotten_at, supersedes, superseded_by, status, extra)
		VALUES (?, ?, ?, ?, ?, ?, ?, nullif(?, ''), nullif(?, ''), nullif(?, ''), nullif(?, ''), nullif(?, 0), nullif(?, ''), nullif(?, ''), nullif(?, ''), nullif(?, ''), nullif(?, ''), nullif(?, ''), ?, nullif(?, ''))`)
	if err != nil {
		return err
	}
	defer ins.Close()
	for _, f := range e.Facts {
		extra := ""
		if len(f.Extra) > 0 {
			b, _ := json.Marshal(f.Extra)
			extra = string(b)
		}
		r, err := ins.ExecContext(ctx, f.FactID, path, f.Line, e.Slug, f.Attribute, f.Value, f.Confidence, f.Source, f.SourceSession, f.SourceTurn, f.SourcePath, f.SourceLine,
			f.Seen, f.Confirmed, f.Until, f.Forgotten, f.Supersedes, f.SupersededBy, f.Status, extra)
		if err != nil {
			return err
		}
		if f.Status != "current" {
			continue
		}
		id, err := r.LastInsertId()
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO facts_fts(rowid, entity, attribute, value) VALUES (?, ?, ?, ?)`,
			id, ftstext.Segment(e.Title+" "+strings.Join(e.Aliases, " ")+" "+e.Slug), ftstext.Segment(f.Attribute), ftstext.Segment(f.Value)); err != nil {
			return err
		}
	}
	for _, r := range e.Relations {
		if _, err := tx.ExecContext(ctx, `INSERT INTO entity_relations(from_entity, relation, to_entity, weight, source, fact_id, file_path, created_at) VALUES (?, ?, ?, ?, nullif(?, ''), ?, ?, ?)`,
			r.From, r.Relation, r.To, r.Weight, r.Source, r.FactID, path, r.Since); err != nil {
			return err
		}
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Remove drops the rows of the entity page at path (nothing for another
// page, or an index of a schema before the fact tables, being upgraded).
func Remove(ctx context.Context, tx *sql.Tx, path string) error {
	if !strings.HasPrefix(path, EntityDir) {
		return nil
	}
	var ok bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'facts')`).Scan(&ok); err != nil || !ok {
		return err
	}
	// One FTS row at a time: "rowid IN (subquery)" makes SQLite scan the
	// whole FTS5 table.
	rows, err := tx.QueryContext(ctx, `SELECT id FROM facts WHERE file_path = ? AND status = 'current'`, path)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `DELETE FROM facts_fts WHERE rowid = ?`, id); err != nil {
			return err
		}
	}
	for _, s := range []string{`DELETE FROM facts WHERE file_path = ?`, `DELETE FROM entity_relations WHERE file_path = ?`, `DELETE FROM entities WHERE file_path = ?`} {
		if _, err := tx.ExecContext(ctx, s, path); err != nil {
			return err
		}
	}
	return nil
}

const factColumns = `fact_id, file_path, line, entity, attribute, value, confidence, coalesce(source, ''), coalesce(source_session, ''), coalesce(source_turn, ''),
	coalesce(source_path, ''), coalesce(source_line, 0), coalesce(extracted_at, ''), coalesce(last_confirmed_at, ''), coalesce(until, ''), coalesce(forgotten_at, ''),
	coalesce(supersedes, ''), coalesce(superseded_by, ''), status, coalesce(extra, '')`

func scanFact(rows interface{ Scan(...any) error }, extraCols ...any) (knowledge.FactRow, error) {
	var f knowledge.FactRow
	var extra string
	dest := []any{&f.FactID, &f.Path, &f.Line, &f.Entity, &f.Attribute, &f.Value, &f.Confidence, &f.Source, &f.SourceSession, &f.SourceTurn,
		&f.SourcePath, &f.SourceLine, &f.Seen, &f.Confirmed, &f.Until, &f.Forgotten, &f.Supersedes, &f.SupersededBy, &f.Status, &extra}
	if err := rows.Scan(append(dest, extraCols...)...); err != nil {
		return f, err
	}
	if extra != "" {
		json.Unmarshal([]byte(extra), &f.Extra)
	}
	return f, nil
}

// Reader reads the fact tables of one database handle (index.DB.Facts).
type Reader struct{ DB *sql.DB }

// Query selects facts.
type Query struct {
	Entity  string // a slug; "" for every entity
	History bool   // also superseded, forgotten and retired facts
	Limit   int    // 0: no limit
}

// List returns facts in page order (entity, then line).
func (r Reader) List(ctx context.Context, q Query) ([]knowledge.FactRow, error) {
	where, args := "1", []any{}
	if q.Entity != "" {
		where += " AND entity = ?"
		args = append(args, q.Entity)
	}
	if !q.History {
		where += " AND status = 'current'"
	}
	lim := ""
	if q.Limit > 0 {
		lim = fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := r.DB.QueryContext(ctx, `SELECT `+factColumns+` FROM facts WHERE `+where+` ORDER BY entity, line`+lim, args...)
	if err != nil {
		return nil, fmt.Errorf("facts: %w", err)
	}
	defer rows.Close()
	out := []knowledge.FactRow{}
	for rows.Next() {
		f, err := scanFact(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// Search finds current facts matching a free-text query (BM25 over
// entity names, attributes and values), best first; Score is relative to
// the best match's. ErrNoTerms when the query has no searchable word.
func (r Reader) Search(ctx context.Context, query string, limit int) ([]knowledge.FactRow, error) {
	expr := ftstext.MatchExpr(query)
	if expr == "" {
		return nil, ftstext.ErrNoTerms
	}
	if limit <= 0 {
		limit = 10
	}
	rows, err := r.DB.QueryContext(ctx, `
		WITH m AS (SELECT rowid AS id, bm25(facts_fts, 1.0, 0.5, 1.0) AS score FROM facts_fts WHERE facts_fts MATCH ? ORDER BY score LIMIT ?)
		SELECT `+factColumns+`, m.score FROM m JOIN facts f ON f.id = m.id ORDER BY m.score, f.entity, f.line`, expr, limit)
	if err != nil {
		return nil, fmt.Errorf("search facts %q: %w", query, err)
	}
	defer rows.Close()
	out := []knowledge.FactRow{}
	best := 0.0
	for rows.Next() {
		var bm float64
		f, err := scanFact(rows, &bm)
		if err != nil {
			return nil, err
		}
		if len(out) == 0 {
			best = bm
		}
		f.Score = 1
		if best < 0 {
			f.Score = bm / best
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// Entities lists the entity pages with their counts, by slug.
func (r Reader) Entities(ctx context.Context) ([]knowledge.EntityRow, error) {
	rows, err := r.DB.QueryContext(ctx, `SELECT e.slug, e.file_path, e.title, e.aliases, e.tags, coalesce(e.created_at, ''), coalesce(e.updated_at, ''),
		(SELECT count(*) FROM facts f WHERE f.entity = e.slug AND f.file_path = e.file_path AND f.status = 'current'),
		(SELECT count(*) FROM facts f WHERE f.entity = e.slug AND f.file_path = e.file_path AND f.status != 'current'),
		(SELECT count(*) FROM entity_relations r WHERE r.to_entity = e.slug),
		(SELECT count(*) FROM entity_relations r WHERE r.from_entity = e.slug)
		FROM entities e ORDER BY e.slug`)
	if err != nil {
		return nil, fmt.Errorf("entities: %w", err)
	}
	defer rows.Close()
	out := []knowledge.EntityRow{}
	for rows.Next() {
		var e knowledge.EntityRow
		var aliases, tags string
		if err := rows.Scan(&e.Slug, &e.Path, &e.Title, &aliases, &tags, &e.Created, &e.Updated, &e.Current, &e.History, &e.Mentions, &e.Relations); err != nil {
			return nil, err
		}
		json.Unmarshal([]byte(aliases), &e.Aliases)
		json.Unmarshal([]byte(tags), &e.Tags)
		out = append(out, e)
	}
	return out, rows.Err()
}

// Relations returns the edges out of (to == false) or into (to == true)
// an entity.
func (r Reader) Relations(ctx context.Context, slug string, to bool) ([]knowledge.RelationRow, error) {
	col := "from_entity"
	if to {
		col = "to_entity"
	}
	rows, err := r.DB.QueryContext(ctx, `SELECT from_entity, relation, to_entity, weight, coalesce(source, ''), fact_id, file_path, created_at
		FROM entity_relations WHERE `+col+` = ? ORDER BY from_entity, relation, to_entity`, slug)
	if err != nil {
		return nil, fmt.Errorf("relations: %w", err)
	}
	defer rows.Close()
	out := []knowledge.RelationRow{}
	for rows.Next() {
		var rel knowledge.RelationRow
		if err := rows.Scan(&rel.From, &rel.Relation, &rel.To, &rel.Weight, &rel.Source, &rel.FactID, &rel.Path, &rel.Since); err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	return out, rows.Err()
}

// Stats counts the fact tables' rows.
type Stats struct {
	Entities  int `json:"entities"`
	Facts     int `json:"facts"`
	Current   int `json:"current"`
	Relations int `json:"relations"`
}

// Stats counts entities, facts and relations.
func (r Reader) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	err := r.DB.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM entities), (SELECT count(*) FROM facts),
		(SELECT count(*) FROM facts WHERE status = 'current'), (SELECT count(*) FROM entity_relations)`).Scan(&s.Entities, &s.Facts, &s.Current, &s.Relations)
	return s, err
}
