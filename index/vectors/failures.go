package vectors

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/memhost/memhost/index"
)

// Embedding failures: how often embedding a chunk's text failed, by model
// and text hash (what the embedding cache is keyed by), in the table
// embed_failures. A chunk whose text failed maxFailures times for the
// index's model is dead: the queue passes it over (PendingLive) and
// search does not wait for it (HasLivePending), until its failures are
// cleared (ClearFailures). The table is made on the first failure;
// an index without one has no failures.

const failuresTable = `CREATE TABLE IF NOT EXISTS embed_failures (
	model TEXT NOT NULL,
	hash TEXT NOT NULL,
	failures INTEGER NOT NULL,
	last_error TEXT NOT NULL,
	last_at INTEGER NOT NULL, -- Unix nanoseconds
	PRIMARY KEY (model, hash)
) WITHOUT ROWID`

func (d *DB) hasFailures(ctx context.Context) (bool, error) {
	var b bool
	err := d.idx.SQL().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'embed_failures')`).Scan(&b)
	return b, err
}

// RecordFailures counts one more failure, with its message, for each
// text hash under model.
func (d *DB) RecordFailures(ctx context.Context, model string, hashes []string, msg string) error {
	if len(hashes) == 0 {
		return nil
	}
	now := time.Now().UnixNano()
	return d.idx.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, failuresTable); err != nil {
			return err
		}
		for _, h := range hashes {
			if _, err := tx.ExecContext(ctx, `INSERT INTO embed_failures(model, hash, failures, last_error, last_at) VALUES (?, ?, 1, ?, ?)
				ON CONFLICT (model, hash) DO UPDATE SET failures = failures + 1, last_error = excluded.last_error, last_at = excluded.last_at`,
				model, h, msg, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// ForgetFailures drops the failures of text hashes under model (they
// were embedded after all).
func (d *DB) ForgetFailures(ctx context.Context, model string, hashes []string) error {
	if ok, err := d.hasFailures(ctx); err != nil || !ok || len(hashes) == 0 {
		return err
	}
	return d.idx.Write(ctx, func(tx *sql.Tx) error {
		for _, h := range hashes {
			if _, err := tx.ExecContext(ctx, `DELETE FROM embed_failures WHERE model = ? AND hash = ?`, model, h); err != nil {
				return err
			}
		}
		return nil
	})
}

// ClearFailures forgets every failure, so that dead chunks are
// queued again; it returns how many dead chunks (of model, dead at
// maxFailures) that revives.
func (d *DB) ClearFailures(ctx context.Context, model string, maxFailures int) (int, error) {
	if ok, err := d.hasFailures(ctx); err != nil || !ok {
		return 0, err
	}
	n := 0
	err := d.idx.Write(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM chunks c JOIN embed_failures f ON f.hash = c.hash AND f.model = ?
			WHERE c.embedded = 0 AND f.failures >= ?`, model, maxFailures).Scan(&n); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM embed_failures`)
		return err
	})
	return n, err
}

// QueuedChunk is a chunk waiting for its vector, with the failures of
// its text so far.
type QueuedChunk struct {
	PendingChunk
	Failures int
}

// live is the FROM and WHERE clauses of the chunks c without a vector
// that are not dead (maxFailures failures under model), the expression of
// a chunk's failures, and the clauses' arguments. Without any failure
// recorded there is nothing to join.
func (d *DB) live(ctx context.Context, model string, maxFailures int) (from, failures string, args []any, err error) {
	has, err := d.hasFailures(ctx)
	if err != nil || !has {
		return `chunks c WHERE c.embedded = 0`, `0`, nil, err
	}
	return `chunks c LEFT JOIN embed_failures f ON f.model = ? AND f.hash = c.hash
		WHERE c.embedded = 0 AND coalesce(f.failures, 0) < ?`, `coalesce(f.failures, 0)`, []any{model, maxFailures}, nil
}

// PendingLive returns up to limit chunks without a vector, oldest first,
// passing over dead ones (maxFailures failures under model).
func (d *DB) PendingLive(ctx context.Context, limit int, model string, maxFailures int) ([]QueuedChunk, error) {
	from, failures, args, err := d.live(ctx, model, maxFailures)
	if err != nil {
		return nil, err
	}
	rows, err := d.idx.SQL().QueryContext(ctx, `SELECT c.id, c.text, coalesce(c.context, ''), c.hash, `+failures+` FROM `+from+` ORDER BY c.id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []QueuedChunk
	for rows.Next() {
		var q QueuedChunk
		var c index.Chunk
		if err := rows.Scan(&q.ID, &c.Text, &c.Context, &q.Hash, &q.Failures); err != nil {
			return nil, err
		}
		q.Text = c.EmbedText()
		out = append(out, q)
	}
	return out, rows.Err()
}

// HasLivePending reports whether any chunk that is not dead waits for a
// vector.
func (d *DB) HasLivePending(ctx context.Context, model string, maxFailures int) (bool, error) {
	has, err := d.hasFailures(ctx)
	if err != nil || !has {
		if err != nil {
			return false, err
		}
		return d.HasPending(ctx)
	}
	var b bool
	err = d.idx.SQL().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM chunks c WHERE c.embedded = 0 AND NOT EXISTS
		(SELECT 1 FROM embed_failures f WHERE f.model = ? AND f.hash = c.hash AND f.failures >= ?))`, model, maxFailures).Scan(&b)
	return b, err
}

// QueueCounts counts chunks without a vector: pending ones, and dead ones
// (maxFailures failures under model).
func (d *DB) QueueCounts(ctx context.Context, model string, maxFailures int) (pending, dead int, err error) {
	_, all, err := d.Counts(ctx)
	if err != nil {
		return 0, 0, err
	}
	if has, err := d.hasFailures(ctx); err != nil || !has {
		return all, 0, err
	}
	err = d.idx.SQL().QueryRowContext(ctx, `SELECT count(*) FROM chunks c JOIN embed_failures f ON f.model = ? AND f.hash = c.hash
		WHERE c.embedded = 0 AND f.failures >= ?`, model, maxFailures).Scan(&dead)
	return all - dead, dead, err
}

// PendingHashes returns the distinct text hashes of up to limit live
// chunks without a vector of model: the dead ones (failed maxFailures
// times or more) are left out, as PendingLive leaves them.
func (d *DB) PendingHashes(ctx context.Context, limit int, model string, maxFailures int) ([]string, error) {
	from, _, args, err := d.live(ctx, model, maxFailures)
	if err != nil {
		return nil, err
	}
	rows, err := d.idx.SQL().QueryContext(ctx, `SELECT DISTINCT c.hash FROM `+from+` LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// DeadChunk is a chunk whose embedding failed too often.
type DeadChunk struct {
	ID        int64  `json:"id"`
	Path      string `json:"path"`
	StartLine int    `json:"startLine"`
	Failures  int    `json:"failures"`
	LastError string `json:"lastError"`
}

// DeadChunks lists up to limit dead chunks of model, oldest first.
func (d *DB) DeadChunks(ctx context.Context, model string, maxFailures, limit int) ([]DeadChunk, error) {
	if has, err := d.hasFailures(ctx); err != nil || !has {
		return nil, err
	}
	rows, err := d.idx.SQL().QueryContext(ctx, `SELECT c.id, c.file_path, c.start_line, f.failures, f.last_error FROM chunks c
		JOIN embed_failures f ON f.model = ? AND f.hash = c.hash WHERE c.embedded = 0 AND f.failures >= ? ORDER BY c.id LIMIT ?`,
		model, maxFailures, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DeadChunk
	for rows.Next() {
		var c DeadChunk
		if err := rows.Scan(&c.ID, &c.Path, &c.StartLine, &c.Failures, &c.LastError); err != nil {
			return nil, err
		}
		c.LastError = strings.TrimSpace(c.LastError)
		out = append(out, c)
	}
	return out, rows.Err()
}
