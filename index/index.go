// Package index is the SQL of the derived index. It owns brain/memory.db:
// the schema, file and chunk upserts, the FTS5 table and BM25 queries.
//
// The index is derived from the notebook and can be deleted at any time;
// a schema change therefore drops and recreates the tables instead of
// migrating them, unless the change only adds what the index's vectors
// can be derived into (see upgrades): vectors cost an embedding each to
// make again. Every method is safe for concurrent use, and several
// processes may use one database at once: it runs in WAL mode with a busy
// timeout, and write transactions start IMMEDIATE so that they wait for the
// lock instead of failing with "database is locked".
package index

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqlite_vec "github.com/asg017/sqlite-vec-go-bindings/cgo"
	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/memhost/memhost/index/factrows"
	"github.com/memhost/memhost/index/ftsrank"
	"github.com/memhost/memhost/index/ftstext"
	"github.com/memhost/memhost/index/vaultrows"
)

// DriverName is mattn's driver with memhost's per-connection settings:
// memory-mapped reads, so that a vector search reads the vector blobs
// from the page cache without copying them through SQLite's pager.
const DriverName = "sqlite3_memhost"

// mmapSize is how much of the database SQLite maps: any index whole,
// as far as its build's SQLITE_MAX_MMAP_SIZE allows (2 GB unless, as in
// the Makefile, the build sets more). Past the map each page is a system
// call: at 1.1M chunks (2.8 GB, vectors last) hybrid recall's p50 was 25.1
// ms, 20.5 mapped whole (medians of 3; docs/benchmarks.md).
const mmapSize int64 = 1 << 36

// persistWAL is SQLITE_FCNTL_PERSIST_WAL. With it, closing the last
// connection to a database leaves its -wal and -shm files in place instead
// of deleting them by name: after the database file was deleted or moved
// aside (see DB.SQL), those names may already belong to the new index
// another process made, and deleting them would corrupt it.
const persistWAL = 10

func init() {
	sqlite_vec.Auto() // sqlite-vec and bm25_topk on every connection
	ftsrank.Auto()
	sql.Register(DriverName, &sqlite3.SQLiteDriver{
		ConnectHook: func(c *sqlite3.SQLiteConn) error {
			// journal_size_limit 0: the log kept by persistWAL is cut to
			// nothing when the last connection closes, so that no stale
			// log sits beside the file.
			if _, err := c.Exec("PRAGMA mmap_size = "+strconv.FormatInt(mmapSize, 10)+"; PRAGMA journal_size_limit = 0", nil); err != nil {
				return err
			}
			return c.SetFileControlInt("main", persistWAL, 1)
		},
	})
}

// SchemaVersion changes whenever the tables change; an index with another
// version is rebuilt from the notebook, unless upgrades knows the way.
const SchemaVersion = "14"

// upgrades bring an index of an older schema version to SchemaVersion
// where that is cheaper than rebuilding it from the notebook: vectors cost
// an embedding each to make again.
// Each brings its version to the current one in one step.
var upgrades = map[string]func(context.Context, *sql.Tx) error{
	"8": then(func(ctx context.Context, tx *sql.Tx) error { // 9 added chunks_bit
		if err := fillBitTable(ctx, tx); err != nil {
			return err
		}
		return vaultrows.AddTables(ctx, tx)
	}, contentlessFTS, smallVecChunks),
	"9":  then(vaultrows.AddTables, contentlessFTS, smallVecChunks),        // 10 added the vault tables
	"10": then(vaultrows.AddMarkdownLinks, contentlessFTS, smallVecChunks), // 11 added page_links.markdown
	"11": then(splitTurnsFTS, contentlessFTS, smallVecChunks),              // 12 moved transcript turns to turns_fts
	"12": then(contentlessFTS, smallVecChunks),                             // 13 made the full-text tables contentless
	"13": smallVecChunks,                                                   // 14 made chunks_vec's blobs smaller
}

// then runs one upgrade after another.
func then(steps ...func(context.Context, *sql.Tx) error) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		for _, step := range steps {
			if err := step(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	}
}

// ErrNoFTS5 means the binary was built without the sqlite_fts5 build tag.
var ErrNoFTS5 = errors.New("this build of SQLite has no FTS5: build with -tags sqlite_fts5 (make build)")

var schema = []string{
	`CREATE TABLE IF NOT EXISTS meta (
		key TEXT PRIMARY KEY,
		value TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS files (
		path TEXT PRIMARY KEY,
		source TEXT NOT NULL,
		hash TEXT NOT NULL,
		mtime INTEGER NOT NULL,      -- Unix nanoseconds: compared on every sync, so no parsing
		size INTEGER NOT NULL,
		indexed_at INTEGER NOT NULL  -- Unix nanoseconds
	)`,
	`CREATE TABLE IF NOT EXISTS chunks (
		id INTEGER PRIMARY KEY,              -- in its source's range (see IDRange), never reused
		file_path TEXT NOT NULL,
		source TEXT NOT NULL,
		heading TEXT,
		start_line INTEGER NOT NULL,
		end_line INTEGER NOT NULL,
		text TEXT NOT NULL,
		context TEXT,                        -- embedded before text, searched with a lower weight (transcripts: the end of the turn before)
		hash TEXT NOT NULL,                  -- SHA-256 of what is embedded: the embedding cache's key
		embedded INTEGER NOT NULL DEFAULT 0, -- 1 when chunks_vec holds its vector for the model in meta
		meta TEXT,                           -- JSON the host attaches (conversation turns: session, turn ids, role, time)
		created_at TEXT NOT NULL DEFAULT (datetime('now'))
	)`,
	`CREATE INDEX IF NOT EXISTS idx_chunks_file ON chunks(file_path)`,
	`CREATE INDEX IF NOT EXISTS idx_chunks_hash ON chunks(hash)`,
	// The embedding queue: chunks still without a vector.
	`CREATE INDEX IF NOT EXISTS idx_chunks_pending ON chunks(id) WHERE embedded = 0`,
	// text, heading and context hold the segmented form (see package ftstext);
	// the raw text lives in chunks. rowid is the chunk id. Pages go to
	// chunks_fts, transcript turns to turns_fts (see ftsTables).
	ftsSchema("chunks_fts"),
	ftsSchema("turns_fts"),
}

// ftsSchema: the full-text tables are contentless (schema 13): they keep
// the index of the words and no copy of the text, which chunks holds (a
// copy was a third of the index's size); a search joins chunks for the
// rows it returns and for filters on the path or source.
func ftsSchema(table string) string {
	return `CREATE VIRTUAL TABLE IF NOT EXISTS ` + table + ` USING fts5(
		text,
		heading,
		context,
		content = '',
		contentless_delete = 1,
		tokenize = 'porter unicode61 remove_diacritics 2'
	)`
}

// ftsInsert inserts a chunk's full-text row into table (the segmented form
// of its text, heading and context; package ftstext).
func ftsInsert(table string) string {
	return `INSERT INTO ` + table + `(rowid, text, heading, context) VALUES (?, ?, ?, ?)`
}

var tables = []string{"chunks_vec", "chunks_bit", "turns_fts", "chunks_fts", "chunks", "files", "meta"}

// ftsTables are the full-text tables and the sources each holds. BM25's
// statistics are a table's: how rare a word is among its rows (IDF) and
// how long its rows are on average. In one table for everything, a
// notebook crowded with daily-log pages changed the order of a search of
// the transcripts: on the LoCoMo dev split with the other conversations
// as daily pages, keyword R@10 moved by a point, single questions far
// more (docs/benchmarks.md). Transcript turns therefore have their own
// table, and the notebook's pages theirs: a search of one is ranked by
// its own statistics whatever the other holds. Notebook and daily pages
// share one: they are one notebook, ranked together by default.
var ftsTables = []FTSTable{
	{"chunks_fts", []string{"notebook", "daily"}},
	{"turns_fts", []string{"sessions"}},
}

// FTSTable is a full-text table and the sources whose chunks it holds.
type FTSTable struct {
	Name    string
	Sources []string
}

// FTSTables are the full-text tables (see ftsTables).
func FTSTables() []FTSTable { return slices.Clone(ftsTables) }

// ftsTable is the full-text table holding a source's chunks.
func ftsTable(source string) string {
	for _, t := range ftsTables {
		if slices.Contains(t.Sources, source) {
			return t.Name
		}
	}
	return ftsTables[0].Name
}

// ftsTableOf is the full-text table holding chunk id's row.
func ftsTableOf(id int64) string {
	if i := int(id >> 40); i >= 0 && i < len(Sources) {
		return ftsTable(Sources[i])
	}
	return ftsTables[0].Name
}

// contentlessFTS rebuilds the full-text tables contentless (schema 13)
// from chunks: no vector is lost.
func contentlessFTS(ctx context.Context, tx *sql.Tx) error {
	for _, t := range ftsTables {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+t.Name); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, ftsSchema(t.Name)); err != nil {
			return err
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, source, text, coalesce(heading, ''), coalesce(context, '') FROM chunks`)
	if err != nil {
		return err
	}
	defer rows.Close()
	ins := map[string]*sql.Stmt{}
	for _, t := range ftsTables {
		st, err := tx.PrepareContext(ctx, ftsInsert(t.Name))
		if err != nil {
			return err
		}
		defer st.Close()
		ins[t.Name] = st
	}
	for rows.Next() {
		var id int64
		var source, text, heading, context string
		if err := rows.Scan(&id, &source, &text, &heading, &context); err != nil {
			return err
		}
		if _, err := ins[ftsTable(source)].ExecContext(ctx, id, ftstext.Segment(text), ftstext.Segment(heading), ftstext.Segment(context)); err != nil {
			return err
		}
	}
	return rows.Err()
}

// splitTurnsFTS moves the transcript turns' full-text rows from
// chunks_fts to turns_fts (schema 12): no vector is lost.
func splitTurnsFTS(ctx context.Context, tx *sql.Tx) error {
	lo, hi, err := IDRange("sessions")
	if err != nil {
		return err
	}
	// The schema of 12, contentful: contentlessFTS follows.
	if _, err := tx.ExecContext(ctx, `CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5(
		text, heading, context, file_path UNINDEXED, source UNINDEXED,
		tokenize = 'porter unicode61 remove_diacritics 2')`); err != nil {
		return err
	}
	for _, stmt := range []string{
		`INSERT INTO turns_fts(rowid, text, heading, context, file_path, source)
			SELECT rowid, text, heading, context, file_path, source FROM chunks_fts WHERE rowid >= ? AND rowid < ?`,
		`DELETE FROM chunks_fts WHERE rowid >= ? AND rowid < ?`,
	} {
		if _, err := tx.ExecContext(ctx, stmt, lo, hi); err != nil {
			return err
		}
	}
	return nil
}

// DB is an open index database. It follows its path: when the file there
// is no longer the one it opened (a person deleted it for a rebuild, or
// another process moved a corrupt one aside), the next call opens the new
// one (see SQL).
type DB struct {
	mu   sync.RWMutex
	db   *sql.DB      // the open database; use SQL()
	id   fileID       // the file db has open
	old  []*sql.DB    // handles of replaced files, closed after retireAfter
	gen  atomic.Int64 // how many times the file was replaced under this DB
	path string
}

// Open opens or creates the index at path (its folder must exist) and makes
// sure its schema is current. A corrupt database fails with an error that
// IsCorrupt recognises; a small one is checked whole (quickCheckMax).
func Open(ctx context.Context, path string) (*DB, error) {
	d := &DB{path: path}
	db, id, err := d.open(ctx)
	if err != nil {
		return nil, err
	}
	d.db, d.id = db, id
	return d, nil
}

// quickCheckMax is the largest index Open checks with PRAGMA quick_check:
// it reads every page, 1.5-4 ms per MB here (an 18 MB index: 26-80 ms,
// against 0.5 ms to open it unchecked), so at most about 16 ms for a
// notebook of a few hundred pages; larger ones are checked when an error
// says they are corrupt (and by memhost health).
var quickCheckMax int64 = 4 << 20 // a variable for tests

// open opens the database file at d.path, under the open lock: a missing
// file's leftover -wal and -shm are removed first (they belong to a
// database that is gone; SQLite would otherwise read the new empty file
// through the old log and fail with "disk I/O error").
func (d *DB) open(ctx context.Context) (*sql.DB, fileID, error) {
	unlock, err := lockFile(d.path + ".lock")
	if err != nil {
		return nil, fileID{}, fmt.Errorf("index %s: %w", d.path, err)
	}
	defer unlock()
	fi, err := os.Stat(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		for _, s := range []string{"-wal", "-shm", "-journal"} {
			if err := os.Remove(d.path + s); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fileID{}, fmt.Errorf("index %s: removing the files of a deleted index: %w", d.path, err)
			}
		}
	}
	dsn := "file:" + d.path + "?_busy_timeout=30000&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate&_foreign_keys=1"
	db, err := sql.Open(DriverName, dsn)
	if err != nil {
		return nil, fileID{}, fmt.Errorf("index %s: %w", d.path, err)
	}
	if fi != nil && fi.Size() <= quickCheckMax {
		err = quickCheck(ctx, db)
	}
	if err == nil {
		err = migrate(ctx, db)
	}
	var id fileID
	if err == nil {
		id, err = statID(d.path)
	}
	if err != nil {
		db.Close()
		return nil, fileID{}, fmt.Errorf("index %s: %w", d.path, err)
	}
	return db, id, nil
}

// Path is the database file.
func (d *DB) Path() string { return d.path }

// Close closes the database.
func (d *DB) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	err := d.db.Close()
	for _, old := range d.old {
		old.Close()
	}
	d.old = nil
	return err
}

func migrate(ctx context.Context, db *sql.DB) error {
	return writeTx(ctx, db, func(tx *sql.Tx) error {
		var version string
		hasMeta, err := HasTable(ctx, tx, "meta")
		if err != nil {
			return err
		}
		if hasMeta {
			err = tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version)
		}
		switch {
		case !hasMeta: // a new database
		case err == nil && version == SchemaVersion:
			return nil
		case err == nil && upgrades[version] != nil:
			if err := upgrades[version](ctx, tx); err != nil {
				return fmt.Errorf("upgrade from schema %s: %w", version, err)
			}
			_, err = tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'schema_version'`, SchemaVersion)
			return err
		case err == nil, errors.Is(err, sql.ErrNoRows):
			// Another version, or a half-made database: start afresh.
			for _, t := range tables {
				if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
					return err
				}
			}
		default:
			return err
		}
		var fts5 bool
		if err := tx.QueryRowContext(ctx, `SELECT sqlite_compileoption_used('ENABLE_FTS5')`).Scan(&fts5); err != nil {
			return err
		}
		if !fts5 {
			return ErrNoFTS5
		}
		for _, stmt := range schema {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)`, SchemaVersion)
		return err
	})
}

// Write runs fn in an IMMEDIATE transaction, retrying when another
// process holds the lock past the busy timeout.
func (d *DB) Write(ctx context.Context, fn func(*sql.Tx) error) error {
	return writeTx(ctx, d.SQL(), fn)
}

func writeTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	for attempt := 0; ; attempt++ {
		err := tryWrite(ctx, db, fn)
		if err == nil || !isBusy(err) || attempt == 5 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(50*(attempt+1)) * time.Millisecond):
		}
	}
}

func tryWrite(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func isBusy(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked
	}
	return false
}

// File is one indexed page.
type File struct {
	Path      string // relative to the notebook, with forward slashes
	Source    string // "notebook" or "daily"
	Hash      string // SHA-256 of the content, hex
	Mtime     time.Time
	Size      int64
	IndexedAt time.Time
	Chunks    int // filled in by Files
}

// Chunk is one piece of a page.
type Chunk struct {
	Heading   string
	StartLine int // 1-based
	EndLine   int // inclusive
	Text      string
	// Context is what surrounds the chunk (a transcript turn: the end of
	// the turn before it). It is embedded before Text, and searched by
	// keyword with a lower weight (contextWeight). "" for none.
	Context string
	Hash    string // SHA-256 of EmbedText(), hex: the embedding cache's key
	Meta    string // JSON kept with the chunk and returned with hits; "" for none
}

// EmbedText is what the chunk's vector is made from: Context, a newline,
// then Text; Text alone without a context.
func (c Chunk) EmbedText() string {
	if c.Context == "" {
		return c.Text
	}
	return c.Context + "\n" + c.Text
}

// Update replaces everything the index holds for one file.
type Update struct {
	File   File
	Chunks []Chunk
	// Base, for Batch.Appends, is the hash of the file row the new chunks
	// continue. Another process may have indexed the file since it was
	// read: Apply then skips the append if the row already holds File's
	// content, and fails with ErrStale otherwise, instead of adding chunks
	// twice.
	Base string
	// Vault is the page's Obsidian metadata (tags, aliases, links); nil
	// for transcripts.
	Vault *vaultrows.Meta
	// Entity, for an entity page (knowledge/entities/*.md), is what its
	// facts tables hold (facts.go); nil for other files.
	Entity *factrows.Entity
}

// ErrStale means an append was computed from a file row that has changed
// since: read the file again and recompute.
var ErrStale = errors.New("the index changed since the file was read")

// Batch is a set of changes applied in one transaction.
type Batch struct {
	Upserts []Update
	Appends []Update          // new chunks added to a file's, and its row updated (transcripts that grew)
	Touches []File            // unchanged content, new mtime or indexed_at
	Removes []string          // paths
	Meta    map[string]string // meta keys to set
}

// Empty reports whether the batch changes nothing.
func (b Batch) Empty() bool {
	return len(b.Upserts)+len(b.Appends)+len(b.Touches)+len(b.Removes)+len(b.Meta) == 0
}

// Sources are the result groups chunks belong to, in the order of their id
// ranges: chunk ids of source i lie in [i<<40, (i+1)<<40). A search limited
// to some sources is then a rowid range FTS5 seeks through, instead of a
// look-up of every match's source (3x slower at 110k chunks).
var Sources = []string{"notebook", "daily", "sessions"}

// IDRange is the [lo, hi) range of chunk ids of a source.
func IDRange(source string) (lo, hi int64, err error) {
	i := slices.Index(Sources, source)
	if i < 0 {
		return 0, 0, fmt.Errorf("unknown source %q (want one of %s)", source, strings.Join(Sources, ", "))
	}
	return int64(i) << 40, int64(i+1) << 40, nil
}

// idAllocator hands out chunk ids in each source's range, going on from
// the last one ever given (kept in meta), so an id is never reused: a
// vector computed for a deleted chunk can never land on a new one.
type idAllocator struct {
	tx    *sql.Tx
	spans map[string]*idSpan
}

// idSpan is the next id of a source and the end of its range.
type idSpan struct{ next, end int64 }

func (a *idAllocator) id(ctx context.Context, source string) (int64, error) {
	s, ok := a.spans[source]
	if !ok {
		lo, hi, err := IDRange(source)
		if err != nil {
			return 0, err
		}
		s = &idSpan{next: max(lo, 1), end: hi}
		var v string
		err = a.tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, "next_id:"+source).Scan(&v)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, err
		}
		if v != "" {
			if s.next, err = strconv.ParseInt(v, 10, 64); err != nil {
				return 0, fmt.Errorf("meta next_id:%s = %q: %w", source, v, err)
			}
		}
		a.spans[source] = s
	}
	if s.next >= s.end {
		return 0, fmt.Errorf("chunk ids of %s are used up", source)
	}
	s.next++
	return s.next - 1, nil
}

// save records the next ids.
func (a *idAllocator) save(ctx context.Context) error {
	for source, s := range a.spans {
		if _, err := a.tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, "next_id:"+source, strconv.FormatInt(s.next, 10)); err != nil {
			return err
		}
	}
	return nil
}

// Apply applies b in one transaction.
func (d *DB) Apply(ctx context.Context, b Batch) error {
	if b.Empty() {
		return nil
	}
	return d.Write(ctx, func(tx *sql.Tx) error {
		for k, v := range b.Meta {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, k, v); err != nil {
				return err
			}
		}
		for _, p := range b.Removes {
			if err := removeFile(ctx, tx, p); err != nil {
				return err
			}
		}
		for _, f := range b.Touches {
			if _, err := tx.ExecContext(ctx, `UPDATE files SET mtime = ?, size = ?, indexed_at = ? WHERE path = ?`,
				f.Mtime.UnixNano(), f.Size, f.IndexedAt.UnixNano(), f.Path); err != nil {
				return err
			}
		}
		if len(b.Upserts)+len(b.Appends) == 0 {
			return nil
		}
		insChunk, err := tx.PrepareContext(ctx, `INSERT INTO chunks(id, file_path, source, heading, start_line, end_line, text, context, hash, meta) VALUES (?, ?, ?, ?, ?, ?, ?, nullif(?, ''), ?, nullif(?, ''))`)
		if err != nil {
			return err
		}
		defer insChunk.Close()
		insFTS := map[string]*sql.Stmt{}
		for _, t := range ftsTables {
			st, err := tx.PrepareContext(ctx, ftsInsert(t.Name))
			if err != nil {
				return err
			}
			defer st.Close()
			insFTS[t.Name] = st
		}
		ids := &idAllocator{tx: tx, spans: map[string]*idSpan{}}
		all := append(append([]Update(nil), b.Upserts...), b.Appends...)
		for i, u := range all {
			f := u.File
			if i < len(b.Upserts) {
				if err := removeFile(ctx, tx, f.Path); err != nil {
					return err
				}
			} else {
				var cur string
				err := tx.QueryRowContext(ctx, `SELECT hash FROM files WHERE path = ?`, f.Path).Scan(&cur)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					return err
				}
				if cur == f.Hash {
					continue // indexed meanwhile by another process
				}
				if cur != u.Base {
					return fmt.Errorf("appending to %s: %w", f.Path, ErrStale)
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO files(path, source, hash, mtime, size, indexed_at) VALUES (?, ?, ?, ?, ?, ?)`,
				f.Path, f.Source, f.Hash, f.Mtime.UnixNano(), f.Size, f.IndexedAt.UnixNano()); err != nil {
				return err
			}
			if err := vaultrows.Put(ctx, tx, f.Path, u.Vault); err != nil {
				return err
			}
			if u.Entity != nil {
				if err := factrows.Insert(ctx, tx, f.Path, u.Entity); err != nil {
					return fmt.Errorf("%s: %w", f.Path, err)
				}
			}
			for _, c := range u.Chunks {
				id, err := ids.id(ctx, f.Source)
				if err != nil {
					return fmt.Errorf("%s: %w", f.Path, err)
				}
				if _, err := insChunk.ExecContext(ctx, id, f.Path, f.Source, c.Heading, c.StartLine, c.EndLine, c.Text, c.Context, c.Hash, c.Meta); err != nil {
					return err
				}
				if _, err := insFTS[ftsTable(f.Source)].ExecContext(ctx, id, ftstext.Segment(c.Text), ftstext.Segment(c.Heading), ftstext.Segment(c.Context)); err != nil {
					return err
				}
			}
		}
		return ids.save(ctx)
	})
}

// HasTable reports whether the database of tx has a table (or index) of
// that name.
func HasTable(ctx context.Context, tx *sql.Tx, name string) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = ?`, name).Scan(&n)
	return n > 0, err
}

func removeFile(ctx context.Context, tx *sql.Tx, path string) error {
	if err := factrows.Remove(ctx, tx, path); err != nil {
		return err
	}
	// Delete FTS rows one rowid at a time: "rowid IN (subquery)" makes
	// SQLite scan the whole FTS5 table for every file.
	rows, err := tx.QueryContext(ctx, `SELECT id FROM chunks WHERE file_path = ?`, path)
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
	vec, err := HasTable(ctx, tx, "chunks_vec")
	if err != nil {
		return err
	}
	touched := false
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+ftsTableOf(id)+` WHERE rowid = ?`, id); err != nil {
			return err
		}
		if !vec {
			continue
		}
		for _, s := range []string{`DELETE FROM chunks_vec WHERE chunk_id = ?`, `DELETE FROM chunks_bit WHERE chunk_id = ?`} {
			r, err := tx.ExecContext(ctx, s, id)
			if err != nil {
				return err
			}
			if n, _ := r.RowsAffected(); n > 0 {
				touched = true
			}
		}
	}
	if touched {
		if err := TouchVectors(ctx, tx); err != nil {
			return err
		}
	}
	if len(ids) > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE file_path = ?`, path); err != nil {
			return err
		}
	}
	if err := vaultrows.Remove(ctx, tx, path); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM files WHERE path = ?`, path)
	return err
}

// Files returns every indexed file by path, with its chunk count.
func (d *DB) Files(ctx context.Context) (map[string]File, error) {
	rows, err := d.SQL().QueryContext(ctx, `SELECT f.path, f.source, f.hash, f.mtime, f.size, f.indexed_at,
		(SELECT count(*) FROM chunks c WHERE c.file_path = f.path) FROM files f`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]File{}
	for rows.Next() {
		var f File
		var mtime, indexed int64
		if err := rows.Scan(&f.Path, &f.Source, &f.Hash, &mtime, &f.Size, &indexed, &f.Chunks); err != nil {
			return nil, err
		}
		f.Mtime, f.IndexedAt = time.Unix(0, mtime), time.Unix(0, indexed)
		out[f.Path] = f
	}
	return out, rows.Err()
}

// Stamps returns path → (hash, size, mtime, indexed_at) for every file: the
// cheap subset of Files that a no-change sync needs.
func (d *DB) Stamps(ctx context.Context) (map[string]File, error) {
	rows, err := d.SQL().QueryContext(ctx, `SELECT path, hash, size, mtime, indexed_at FROM files`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]File{}
	for rows.Next() {
		var f File
		var mtime, indexed int64
		if err := rows.Scan(&f.Path, &f.Hash, &f.Size, &mtime, &indexed); err != nil {
			return nil, err
		}
		f.Mtime, f.IndexedAt = time.Unix(0, mtime), time.Unix(0, indexed)
		out[f.Path] = f
	}
	return out, rows.Err()
}

// SetMeta records a key in meta.
func (d *DB) SetMeta(ctx context.Context, key, value string) error {
	return d.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, key, value)
		return err
	})
}

// Meta returns a key of meta, or "" when it is not set.
func (d *DB) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := d.SQL().QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// Stats summarises the index.
type Stats struct {
	Files     int
	Chunks    int
	SizeBytes int64 // database file plus its WAL
}

// Stats counts files and chunks and measures the database on disk.
func (d *DB) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	if err := d.SQL().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM chunks)`).Scan(&s.Files, &s.Chunks); err != nil {
		return s, err
	}
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(d.path + suffix); err == nil {
			s.SizeBytes += fi.Size()
		}
	}
	return s, nil
}

// Hit is one chunk found by a search.
type Hit struct {
	ChunkID   int64
	Path      string
	Source    string
	Heading   string
	StartLine int
	EndLine   int
	Text      string
	// BM25 is FTS5's bm25() for the chunk: negative, lower is better.
	BM25 float64
	// Distance is 1 - cosine similarity, for vector hits.
	Distance float64
	Meta     string // the chunk's Meta
	Context  string // the chunk's Context
}

// Query is a keyword search.
type Query struct {
	Text    string          // free text, as the user typed it
	Sources []string        // empty means all
	Path    string          // only this file, when set
	Scope   vaultrows.Scope // only these pages (folder, tags), when set
	Limit   int
}

// contextWeight is the weight of a chunk's context in BM25 (its text's is
// 1, its heading's 0.5): a reply is found by the words of the question it
// answers, below a turn holding them itself. On the LoCoMo dev split 0.3
// lifts keyword R@5 from 59.6 to 66.3 (0.5: 66.4, docs/benchmarks.md).
const contextWeight = "0.3"

// sourceRange is the id range holding exactly the chunks of sources; ok
// is false when they are not one range (notebook and sessions without
// daily) or a source is unknown.
func sourceRange(sources []string) (lo, hi int64, ok bool) {
	distinct := map[string]bool{}
	lo, hi = math.MaxInt64, 0
	for _, s := range sources {
		l, h, err := IDRange(s)
		if err != nil {
			return 0, 0, false
		}
		distinct[s] = true
		lo, hi = min(lo, l), max(hi, h)
	}
	return lo, hi, len(distinct) > 0 && int64(len(distinct)) == (hi-lo)>>40
}

// Search runs a BM25 search and returns hits best first. Ties are broken by
// path and line, so equal indexes answer identically however they were built.
// Each full-text table is searched with its own BM25 statistics (see
// ftsTables); a search of sources in both merges the two lists by score.
func (d *DB) Search(ctx context.Context, q Query) ([]Hit, error) {
	expr := ftstext.MatchExpr(q.Text)
	if expr == "" {
		return nil, ftstext.ErrNoTerms
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	var hits []Hit
	searched := 0
	for _, t := range ftsTables {
		sources := t.Sources
		if len(q.Sources) > 0 {
			sources = nil
			for _, s := range q.Sources {
				if slices.Contains(t.Sources, s) {
					sources = append(sources, s)
				}
			}
			if len(sources) == 0 {
				continue
			}
		}
		more, err := d.searchTable(ctx, t.Name, expr, sources, q, limit)
		if err != nil {
			return nil, fmt.Errorf("search %q: %w", q.Text, err)
		}
		hits = append(hits, more...)
		searched++
	}
	if searched > 1 {
		slices.SortStableFunc(hits, func(a, b Hit) int {
			return cmp.Or(cmp.Compare(a.BM25, b.BM25), strings.Compare(a.Path, b.Path), a.StartLine-b.StartLine)
		})
		hits = hits[:min(len(hits), limit)]
	}
	return hits, nil
}

// searchTable is Search in one full-text table, limited to sources (all
// of them held by table).
func (d *DB) searchTable(ctx context.Context, table, expr string, sources []string, q Query, limit int) ([]Hit, error) {
	var (
		where = table + " MATCH ?"
		args  = []any{expr}
		from  = table // the table is contentless: filters on the path or source join chunks
	)
	if lo, hi, ok := sourceRange(sources); ok {
		where += " AND " + table + ".rowid >= ? AND " + table + ".rowid < ?"
		args = append(args, lo, hi)
	} else {
		from = table + " JOIN chunks f ON f.id = " + table + ".rowid"
		where += " AND f.source IN (?" + strings.Repeat(", ?", len(sources)-1) + ")"
		for _, s := range sources {
			args = append(args, s)
		}
	}
	if q.Path != "" || q.Scope.Filters() {
		if from == table {
			from = table + " JOIN chunks f ON f.id = " + table + ".rowid"
		}
		if q.Path != "" {
			where += " AND f.file_path = ?"
			args = append(args, q.Path)
		}
		if q.Scope.Filters() {
			where += " AND " + q.Scope.Cond("f.file_path", func(v any) string {
				args = append(args, v)
				return "?"
			})
		}
	}
	// bm25_topk skips the rows that cannot be among the limit's best,
	// which is exact only when every row it sees may be returned: with a
	// join's filter it scores them all (k = 0), as bm25 does.
	k := limit
	if from != table {
		k = 0
	}
	args = append(args, limit)
	rows, err := d.SQL().QueryContext(ctx, `
		WITH m AS (
			SELECT `+table+`.rowid AS id, bm25_topk(`+table+`, `+strconv.Itoa(k)+`, 1.0, 0.5, `+contextWeight+`) AS score
			FROM `+from+` WHERE `+where+`
			ORDER BY score LIMIT ?)
		SELECT c.id, c.file_path, c.source, coalesce(c.heading, ''), c.start_line, c.end_line, c.text, m.score, coalesce(c.meta, ''), coalesce(c.context, '')
		FROM m JOIN chunks c ON c.id = m.id
		ORDER BY m.score, c.file_path, c.start_line`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.ChunkID, &h.Path, &h.Source, &h.Heading, &h.StartLine, &h.EndLine, &h.Text, &h.BM25, &h.Meta, &h.Context); err != nil {
			return nil, err
		}
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

// CopyFrom replaces this database's content with the content of the
// database at src, through SQLite's online backup API: other connections,
// in this process or another, see either the old index or the new one,
// never a mix, and a failure leaves the old one as it was.
func (d *DB) CopyFrom(ctx context.Context, src string) error {
	srcDB, err := sql.Open("sqlite3", "file:"+src+"?mode=ro")
	if err != nil {
		return err
	}
	defer srcDB.Close()
	srcConn, err := srcDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer srcConn.Close()
	dstConn, err := d.SQL().Conn(ctx)
	if err != nil {
		return err
	}
	defer dstConn.Close()
	return dstConn.Raw(func(dst any) error {
		return srcConn.Raw(func(s any) error {
			bk, err := dst.(*sqlite3.SQLiteConn).Backup("main", s.(*sqlite3.SQLiteConn), "main")
			if err != nil {
				return err
			}
			for {
				done, err := bk.Step(-1)
				if err != nil {
					bk.Finish()
					return fmt.Errorf("copy %s: %w", filepath.Base(src), err)
				}
				if done {
					if err := bk.Finish(); err != nil {
						return err
					}
					// The copy went into the log; move it into the file
					// now rather than leave the index twice its size until
					// the next automatic checkpoint (busy readers only
					// delay that).
					dst.(*sqlite3.SQLiteConn).Exec("PRAGMA wal_checkpoint(TRUNCATE)", nil)
					return nil
				}
				// Busy: another connection is writing; wait and go on.
				select {
				case <-ctx.Done():
					bk.Finish()
					return ctx.Err()
				case <-time.After(20 * time.Millisecond):
				}
			}
		})
	})
}
