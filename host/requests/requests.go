// Package requests is the journal that makes memhost's writes idempotent
// under retry. A client that loses its server mid-request (the launcher,
// memhost-core, stdio MCP) runs the same command again in its own process
// with the same request id; the first run recorded the id with what it
// wrote, so the second finds it and answers as the first did instead of
// writing again.
//
// A record is written before the write it describes reaches the disk (for
// a page: after its new content is computed, under the notebook's lock,
// before the rename), with the page's hash before and after and what
// changed. A retry then tells the three cases apart by the page as it
// finds it: the after hash (the write landed: replay its answer), the
// before hash (it did not: write), or neither (someone wrote since): the
// write landed when the text it wrote is on the page after the text that
// was before it (Landed). A record is kept for Keep.
//
// The records live in brain/requests/, one small JSON file per id; the
// folder is derived state like the index: deleting it only forgets which
// retries were already answered.
package requests

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/memhost/memhost/internal/fsx"
)

// Keep is how long a record is kept. A client re-runs a command within
// seconds of losing its server; a day also covers an agent that re-runs
// it after a reboot.
const Keep = 24 * time.Hour

// pruneEvery is how often the expired records are swept, by the first
// write after it has passed (the sweep's time is the mtime of a marker
// file: most writes come from short-lived CLI processes).
const pruneEvery = time.Hour

// sweptMarker is the marker file's name.
const sweptMarker = ".swept"

// validID is what a request id may be: it names a file.
var validID = regexp.MustCompile(`^[0-9A-Za-z_-]{1,64}$`)

// CheckID refuses an id that cannot name a record.
func CheckID(id string) error {
	if !validID.MatchString(id) {
		return fmt.Errorf("request id %q: want 1 to 64 letters, digits, '-' or '_'", id)
	}
	return nil
}

// Record is one write: the operation, the pages it touched, their hashes
// before and after, the text it inserted, and its answer.
type Record struct {
	ID   string    `json:"id"`
	Op   string    `json:"op"`
	Time time.Time `json:"time"`
	// Path is the page written (or removed, or moved from); To is where a
	// move put it.
	Path string `json:"path"`
	To   string `json:"to,omitempty"`
	// Before and After are the page's Hash before and after the write.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// The change, to recognise it under later writes (see Change): the
	// text before it (Context), what it replaced (Old) and what it wrote
	// (New).
	Context string `json:"context,omitempty"`
	Old     string `json:"old,omitempty"`
	New     string `json:"new,omitempty"`
	// Done says an operation of several steps (a move: the rename, then
	// the links) did them all.
	Done bool `json:"done,omitempty"`
	// Response is the operation's answer, replayed to a retry.
	Response json.RawMessage `json:"response,omitempty"`
}

// Hash is the hash a Record keeps of a page; a missing page's is "".
func Hash(data []byte, exists bool) string {
	if !exists {
		return ""
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// contextBytes is how much of the text before a change a record keeps:
// enough that "- ok" after these 64 bytes is this write's, not another
// "- ok" elsewhere on the page.
const contextBytes = 64

// Change returns the one run of old that next replaces (common prefix and
// suffix left out) and the text before it, which a Record keeps: ctx ends
// where the change starts, in both.
func Change(old, next []byte) (ctx, was, now string) {
	p := 0
	for p < len(old) && p < len(next) && old[p] == next[p] {
		p++
	}
	s := 0
	for s < len(old)-p && s < len(next)-p && old[len(old)-1-s] == next[len(next)-1-s] {
		s++
	}
	return string(old[max(0, p-contextBytes):p]), string(old[p : len(old)-s]), string(next[p : len(next)-s])
}

// Landed reports whether the write of r is on page (the page's content
// now, exists false when it is missing): the page is as the write left it,
// or, when others wrote since, what it wrote is there after the text that
// preceded it (and, for a write that only removed text, the text it
// removed is not).
func (r Record) Landed(page []byte, exists bool) bool {
	switch h := Hash(page, exists); {
	case h == r.After:
		return true
	case h == r.Before || !exists:
		return false
	case r.New != "":
		return bytes.Contains(page, []byte(r.Context+r.New))
	case r.Old != "":
		return !bytes.Contains(page, []byte(r.Context+r.Old))
	}
	return false
}

// Journal is the folder of records. It is safe for concurrent use: each
// record is its own file, written whole and renamed into place.
type Journal struct {
	dir string
}

// Open returns the journal in dir (made on the first write). Records are
// timed and expired by the wall clock, as their files' mtimes are.
func Open(dir string) *Journal { return &Journal{dir: dir} }

// Get returns the record of id, if there is one. A record is read
// without following a symlink or waiting on a FIFO (it is read under the
// notebook's lock).
func (j *Journal) Get(id string) (Record, bool, error) {
	if CheckID(id) != nil {
		return Record{}, false, nil
	}
	data, err := fsx.ReadFile(filepath.Join(j.dir, id+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("request %s: %w", id, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil || r.ID != id {
		// A torn record (a write killed mid-way is renamed whole, so
		// this is damage from elsewhere): as if there were none.
		return Record{}, false, nil
	}
	if name, ok := renamedOps[r.Op]; ok {
		r.Op = name
	}
	return r, true, nil
}

// renamedOps are the names records written before the operations took
// their table names (api/ops.go) give them, each with its name now: a
// retry within Keep of an upgrade still finds its first run.
var renamedOps = map[string]string{
	"fact-add":    "fact/add",
	"fact-forget": "fact/forget",
	"models-rm":   "models/rm",
}

// Put stores r durably (the file and its folder flushed) before it
// returns: the write it describes comes after.
func (j *Journal) Put(r Record) error {
	if err := CheckID(r.ID); err != nil {
		return err
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return fmt.Errorf("request %s: %w", r.ID, err)
	}
	d, err := fsx.OpenDir(j.dir)
	if err != nil {
		return fmt.Errorf("request %s: %w", r.ID, err)
	}
	defer d.Close()
	if fi, err := os.Stat(filepath.Join(j.dir, sweptMarker)); err != nil || time.Since(fi.ModTime()) > pruneEvery {
		j.prune()
	}
	if err := d.WriteFile(r.ID+".json", data, 0o600); err != nil {
		return fmt.Errorf("request %s: %w", r.ID, err)
	}
	return nil
}

// prune removes the records older than Keep, and temporary files of
// killed writes. Errors are ignored: a record left is only kept longer.
func (j *Journal) prune() {
	if f, err := os.Create(filepath.Join(j.dir, sweptMarker)); err == nil {
		f.Close()
	}
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-Keep)
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || e.Name() == sweptMarker {
			continue
		}
		// A temporary record is a killed writer's once it is a minute old.
		if fi.ModTime().Before(cutoff) || (strings.HasPrefix(e.Name(), fsx.TempPrefix) && time.Since(fi.ModTime()) > time.Minute) {
			os.Remove(filepath.Join(j.dir, e.Name()))
		}
	}
}
