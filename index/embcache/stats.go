package embcache

import "context"

// CountLookups adds to the cache's lifetime counts of look-ups that found
// a vector (hits) and that did not (misses), kept in the cache file so
// that they outlive a rebuild of the index.
func (c *Cache) CountLookups(ctx context.Context, hits, misses int) error {
	if hits == 0 && misses == 0 {
		return nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS stats (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`); err != nil {
		return err
	}
	for k, n := range map[string]int{"hits": hits, "misses": misses} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO stats(key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = value + excluded.value`, k, n); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Lookups returns the counts CountLookups kept; zero when none.
func (c *Cache) Lookups(ctx context.Context) (hits, misses int64, err error) {
	if has, err := c.hasStats(ctx); err != nil || !has {
		return 0, 0, err
	}
	err = c.db.QueryRowContext(ctx, `SELECT coalesce((SELECT value FROM stats WHERE key = 'hits'), 0), coalesce((SELECT value FROM stats WHERE key = 'misses'), 0)`).Scan(&hits, &misses)
	return hits, misses, err
}

func (c *Cache) hasStats(ctx context.Context) (bool, error) {
	var b bool
	err := c.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'stats')`).Scan(&b)
	return b, err
}
