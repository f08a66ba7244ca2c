package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/memhost/memhost/index/vaultrows"
)

// The vault tables (package vaultrows) hold what a page's Obsidian
// metadata says; an Update's Vault fills them.
func init() {
	schema = append(schema, vaultrows.Schema...)
	tables = append(tables, vaultrows.Tables...)
}

// VaultGeneration names the state of the index's pages and links: it
// changes with every write of a page (by this process or another) and
// when the database file is replaced. "" for an index no page was written
// to since it had the vault tables.
func (d *DB) VaultGeneration(ctx context.Context) (string, error) {
	gen := d.Generation()
	var v string
	err := d.SQL().QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'vault_generation'`).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("vault generation: %w", err)
	}
	return strconv.FormatInt(gen, 10) + "/" + v, nil
}

// Vault reads the vault tables.
func (d *DB) Vault() vaultrows.Reader { return vaultrows.Reader{DB: d.SQL()} }
