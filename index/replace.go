package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/memhost/memhost/internal/fsx"
)

// fileID names a file independently of its path.
type fileID struct{ dev, ino uint64 }

func statID(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, fmt.Errorf("%s: no inode", path)
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, nil
}

// lockFile takes an exclusive flock on the file at path (creating it) and
// returns its release. Opening and replacing an index hold it, so that no
// process removes the -wal of a database another is creating.
func lockFile(path string) (func(), error) {
	return fsx.Lock(context.Background(), path)
}

// SQL is the open database handle, after making sure it is still the file at
// the path: when that was deleted or replaced, the file there now is
// opened (created if missing) and used from then on; the old handle is
// closed once its queries end. The check costs a stat and a read lock:
// 5.4-6.0 µs here (BenchmarkHandle, with other work on the machine), a
// few calls per recall, about 1% of a 3.7 ms keyword recall.
func (d *DB) SQL() *sql.DB {
	d.mu.RLock()
	db, id := d.db, d.id
	d.mu.RUnlock()
	if now, err := statID(d.path); err == nil && now == id {
		return db
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.db != db { // another goroutine reopened meanwhile
		return d.db
	}
	fresh, freshID, err := d.open(context.Background())
	if err != nil {
		return d.db // its calls fail and tell why; the next one tries again
	}
	d.swap(fresh, freshID)
	return fresh
}

// Generation counts the times the database file was found replaced (or
// deleted) and opened anew: a caller that keeps state about the index's
// content (which files changed since) must look at every file again when
// it changes.
func (d *DB) Generation() int64 {
	d.SQL()
	return d.gen.Load()
}

// retireAfter is how long a replaced database handle stays open for the
// callers that took it just before.
const retireAfter = 10 * time.Second

// swap makes db the open database (d.mu held) and closes the old one once
// its queries end.
func (d *DB) swap(db *sql.DB, id fileID) {
	old := d.db
	d.db, d.id = db, id
	d.gen.Add(1)
	// Callers may hold the old handle without having started their query
	// yet (sql.DB.Close fails those with "database is closed"): it is
	// closed a while later, or when the DB is.
	d.old = append(d.old, old)
	time.AfterFunc(retireAfter, func() {
		d.mu.Lock()
		i := slices.Index(d.old, old)
		if i >= 0 {
			d.old = slices.Delete(d.old, i, i+1)
		}
		d.mu.Unlock()
		if i >= 0 {
			old.Close()
		}
	})
}

// Lock takes the open lock of the index at path (see DB.open): while it is
// held no process opens, creates or replaces that index. The caller must
// call the returned func.
func Lock(path string) (func(), error) { return lockFile(path + ".lock") }

// IsCorrupt reports whether err says the database file is damaged
// (SQLITE_CORRUPT, SQLITE_NOTADB): the index must be moved aside and built
// again from the notebook.
func IsCorrupt(err error) bool {
	var se sqlite3.Error
	var ce *CorruptError
	switch {
	case errors.As(err, &ce):
		return true
	case errors.As(err, &se):
		return se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB
	}
	return false
}

// MoveAside renames the index at path and its -wal to a name of its own,
// path.corrupt-<UTC time>[-n], and removes its -shm, under the open lock.
// It returns the new name.
func MoveAside(path string) (string, error) {
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	return moveAside(path)
}

func moveAside(path string) (string, error) {
	base := path + ".corrupt-" + time.Now().UTC().Format("20060102-150405")
	aside := base
	for n := 2; ; n++ {
		if _, err := os.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
			break
		}
		aside = fmt.Sprintf("%s-%d", base, n)
	}
	if err := fsx.Rename(path, aside); err != nil {
		return "", fmt.Errorf("moving the corrupt index aside: %w", err)
	}
	if err := fsx.Rename(path+"-wal", aside+"-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return aside, fmt.Errorf("moving the corrupt index's log aside: %w", err)
	}
	os.Remove(path + "-shm")
	return aside, nil
}

// Replace moves the corrupt index aside (see MoveAside) and opens a new,
// empty one in its place, which the caller fills from the notebook. Other
// processes using the old file follow the path to the new one. seen is
// the Generation the caller met the damage in: if the file was replaced
// since (by this process or another), Replace does nothing and returns ""
// — the damaged file is gone, and the new one must not be moved aside.
func (d *DB) Replace(ctx context.Context, seen int64) (string, error) {
	d.SQL() // follow a replacement by another process first
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gen.Load() != seen {
		return "", nil
	}
	aside, err := func() (string, error) {
		unlock, err := lockFile(d.path + ".lock")
		if err != nil {
			return "", err
		}
		defer unlock()
		if now, err := statID(d.path); err != nil || now != d.id {
			return "", nil // already replaced
		}
		return moveAside(d.path)
	}()
	if err != nil {
		return "", fmt.Errorf("index %s: %w", d.path, err)
	}
	fresh, id, err := d.open(ctx)
	if err != nil {
		return aside, err
	}
	d.swap(fresh, id)
	return aside, nil
}

// quickCheck runs PRAGMA quick_check: every page of the file is read and
// its structure checked.
func quickCheck(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" && len(problems) < 3 {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return &CorruptError{Problems: problems}
	}
	return nil
}

// CorruptError is what quick_check found wrong (the first few problems).
type CorruptError struct{ Problems []string }

func (e *CorruptError) Error() string {
	return "database disk image is malformed: " + strings.Join(e.Problems, "; ")
}
