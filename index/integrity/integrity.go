// Package integrity checks an index database: SQLite's and FTS5's own
// checks (Quick), rows of its tables out of step with each other (Drift),
// and transcript turns indexed twice (TurnChunks). memhost health reports
// them.
package integrity

import (
	"context"
	"fmt"
	"strings"

	"github.com/memhost/memhost/index"
)

// Quick runs SQLite's PRAGMA quick_check and FTS5's integrity-check
// on the full-text tables. It returns the problems found, at most limit
// of SQLite's (nil when the database is sound); err is for a check that
// could not run at all. A corrupt page often makes the check itself fail
// with SQLITE_CORRUPT: that is reported as a problem, not an error.
func Quick(ctx context.Context, d *index.DB, limit int) (problems []string, err error) {
	rows, err := d.SQL().QueryContext(ctx, fmt.Sprintf("PRAGMA quick_check(%d)", max(limit, 1)))
	if err != nil {
		return corruption(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return corruption(err)
		}
		for _, line := range strings.Split(s, "\n") {
			// "*** in database main ***" heads the problems of a database.
			if line = strings.TrimSpace(line); line != "ok" && line != "" && !strings.HasPrefix(line, "*** in database") {
				problems = append(problems, line)
			}
		}
	}
	if err := rows.Close(); err != nil {
		return corruption(err)
	}
	if err := rows.Err(); err != nil {
		return corruption(err)
	}
	// quick_check sees the FTS5 shadow tables as plain tables; whether the
	// full-text index agrees with its content is FTS5's own check.
	for _, t := range index.FTSTables() {
		if _, err := d.SQL().ExecContext(ctx, `INSERT INTO `+t.Name+`(`+t.Name+`, rank) VALUES ('integrity-check', 0)`); err != nil {
			p, err := corruption(err)
			if err != nil {
				return problems, err
			}
			problems = append(problems, "full-text index: "+p[0])
		}
	}
	return problems, nil
}

// corruption turns an error that says the database is damaged into a
// problem; other errors stay errors.
func corruption(err error) ([]string, error) {
	if index.IsCorrupt(err) {
		return []string{err.Error()}, nil
	}
	return nil, err
}

// Drift counts rows of the index's tables that are out of step with each
// other. Every count is 0 in a sound index.
type Drift struct {
	ChunksWithoutFTS      int `json:"chunksWithoutFts"`      // chunks the keyword search cannot find
	FTSWithoutChunk       int `json:"ftsWithoutChunk"`       // FTS rows whose chunk is gone
	VectorsWithoutChunk   int `json:"vectorsWithoutChunk"`   // chunks_vec and chunks_bit rows whose chunk is gone
	EmbeddedWithoutVector int `json:"embeddedWithoutVector"` // chunks marked embedded, without a vector or its bits
}

// Total is the number of rows out of step.
func (dr Drift) Total() int {
	return dr.ChunksWithoutFTS + dr.FTSWithoutChunk + dr.VectorsWithoutChunk + dr.EmbeddedWithoutVector
}

// DriftOf compares chunks with chunks_fts, turns_fts, chunks_vec and chunks_bit. It
// reads every table once.
func DriftOf(ctx context.Context, d *index.DB) (Drift, error) {
	var dr Drift
	q := func(dst *int, query string) error {
		var n int
		if err := d.SQL().QueryRowContext(ctx, query).Scan(&n); err != nil {
			return fmt.Errorf("drift: %w", err)
		}
		*dst += n
		return nil
	}
	// Each source's chunks in its own full-text table (ftsTables): a row
	// in the other table counts as missing from this one, and as an
	// orphan there.
	for _, t := range index.FTSTables() {
		in := "('" + strings.Join(t.Sources, "', '") + "')"
		if err := q(&dr.ChunksWithoutFTS, `SELECT count(*) FROM chunks c WHERE c.source IN `+in+` AND NOT EXISTS (SELECT 1 FROM `+t.Name+` f WHERE f.rowid = c.id)`); err != nil {
			return dr, err
		}
		if err := q(&dr.FTSWithoutChunk, `SELECT count(*) FROM `+t.Name+` f WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.id = f.rowid AND c.source IN `+in+`)`); err != nil {
			return dr, err
		}
	}
	var hasVec bool
	if err := d.SQL().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'chunks_vec')`).Scan(&hasVec); err != nil {
		return dr, err
	}
	if !hasVec {
		// No model yet: no chunk may say it has a vector.
		return dr, q(&dr.EmbeddedWithoutVector, `SELECT count(*) FROM chunks WHERE embedded != 0`)
	}
	for _, t := range []string{"chunks_vec", "chunks_bit"} {
		if err := q(&dr.VectorsWithoutChunk, `SELECT count(*) FROM `+t+` v WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.id = v.chunk_id)`); err != nil {
			return dr, err
		}
	}
	err := q(&dr.EmbeddedWithoutVector, `SELECT count(*) FROM chunks c WHERE c.embedded != 0 AND (
		NOT EXISTS (SELECT 1 FROM chunks_vec v WHERE v.chunk_id = c.id) OR
		NOT EXISTS (SELECT 1 FROM chunks_bit b WHERE b.chunk_id = c.id))`)
	return dr, err
}

// TurnCopies is a group of identical transcript chunks: the chunks of one
// file with the same meta (session, turn ids, role, time), first line and
// text. Copies is 1 in a sound index.
type TurnCopies struct {
	Path      string
	Meta      string
	StartLine int
	Copies    int
}

// TurnChunks groups the chunks of the sessions source, in path and line
// order.
func TurnChunks(ctx context.Context, d *index.DB) ([]TurnCopies, error) {
	lo, hi, err := index.IDRange("sessions")
	if err != nil {
		return nil, err
	}
	rows, err := d.SQL().QueryContext(ctx, `SELECT file_path, coalesce(meta, ''), start_line, count(*) FROM chunks
		WHERE id >= ? AND id < ? GROUP BY file_path, meta, start_line, text ORDER BY file_path, start_line`, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TurnCopies
	for rows.Next() {
		var t TurnCopies
		if err := rows.Scan(&t.Path, &t.Meta, &t.StartLine, &t.Copies); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
