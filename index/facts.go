package index

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/memhost/memhost/index/factrows"
)

// The fact tables (package factrows) are derived from the entity pages of
// the notebook like chunks are from every page: an Update whose Entity is
// set fills them, and removing the file's rows removes its rows.
func init() {
	schema = append(schema, factrows.Schema...)
	tables = append(append([]string(nil), factrows.Tables...), tables...)
	// Schema 10 added the facts tables: an older index gets them, and its
	// entity pages are indexed again to fill them.
	for v, up := range upgrades {
		if n, err := strconv.Atoi(v); err != nil || n >= 11 {
			continue // indexes of schema 11 and later have them
		}
		upgrades[v] = func(ctx context.Context, tx *sql.Tx) error {
			if err := up(ctx, tx); err != nil {
				return err
			}
			return addFacts(ctx, tx)
		}
	}
}

// addFacts upgrades an index of schema 9 or 10: the fact tables are made,
// and the entity pages' rows removed so that the next sync indexes them
// again, filling them.
func addFacts(ctx context.Context, tx *sql.Tx) error {
	for _, stmt := range factrows.Schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT path FROM files WHERE path LIKE ? ESCAPE '\'`, strings.ReplaceAll(factrows.EntityDir, "_", `\_`)+"%")
	if err != nil {
		return err
	}
	var paths []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return err
		}
		paths = append(paths, p)
	}
	rows.Close()
	for _, p := range paths {
		if err := removeFile(ctx, tx, p); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Facts reads the fact tables.
func (d *DB) Facts() factrows.Reader { return factrows.Reader{DB: d.SQL()} }
