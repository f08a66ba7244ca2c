package index

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestMapsWholeIndex: every connection maps as much of the database as
// SQLite's build allows, up to mmapSize, and the Makefile's build (its
// CGO_CFLAGS, which `make test` passes on) allows all of it, so that an
// index past 2 GB is read from the map, not a system call a page.
func TestMapsWholeIndex(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	var limit int64 = -1
	rows, err := db.SQL().QueryContext(ctx, `PRAGMA compile_options`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var opt string
		if err := rows.Scan(&opt); err != nil {
			t.Fatal(err)
		}
		if v, ok := strings.CutPrefix(opt, "MAX_MMAP_SIZE="); ok {
			if limit, err = strconv.ParseInt(v, 0, 64); err != nil {
				t.Fatalf("compile option %s: %v", opt, err)
			}
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if limit < 0 {
		t.Fatal("SQLite reports no MAX_MMAP_SIZE among its compile options")
	}
	// Each connection of the pool has the setting: hold several at once.
	conns := make([]int64, 3)
	for i := range conns {
		c, err := db.SQL().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.QueryRowContext(ctx, `PRAGMA mmap_size`).Scan(&conns[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i, got := range conns {
		if want := min(mmapSize, limit); got != want {
			t.Errorf("connection %d maps %d bytes, want %d (mmapSize %d, SQLite's limit %d)", i, got, want, mmapSize, limit)
		}
	}
	if strings.Contains(os.Getenv("CGO_CFLAGS"), "-DSQLITE_MAX_MMAP_SIZE=") && limit < mmapSize {
		t.Errorf("CGO_CFLAGS sets SQLITE_MAX_MMAP_SIZE, but SQLite was built with a limit of %d, under mmapSize %d", limit, mmapSize)
	}
}
