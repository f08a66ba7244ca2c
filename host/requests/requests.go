// Package requests is the journal that makes memhost's writes idempotent
// under retry. A client that loses its server mid-request (the launcher,
// memhost-core, stdio MCP) runs the same command again in its own process
// with the same request id; the first run recorded the id with what it
// wrote, so the second finds it and answers as the first did instead of
// writing again.
//
// A record is written before the write it describes reaches the disk (for
// a page: after its new content is computed, under the notebook's lock,
// before the rename), with the page's hash before and after. A retry then
// tells the three cases apart by the page as it finds it: the after hash
// (the write landed: replay its answer), the before hash (it did not:
// write), or neither (someone wrote since): the write landed when the text
// it inserted is on the page. A record is kept for Keep.
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
	// Inserted is what the write added to the page when it only added
	// (Inserted), to recognise it under later writes.
	Inserted string `json:"inserted,omitempty"`
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

// minInserted is the shortest insertion a retry looks for on a page that
// others wrote to since: shorter text ("- a") may be there for another
// reason, and the write is then taken as not done.
const minInserted = 8

// Inserted returns what next adds to old when it only adds (one run of
// text inserted somewhere), and "" when it changes or removes anything.
func Inserted(old, next []byte) string {
	if len(next) <= len(old) {
		return ""
	}
	p := 0
	for p < len(old) && old[p] == next[p] {
		p++
	}
	s := 0
	for s < len(old)-p && old[len(old)-1-s] == next[len(next)-1-s] {
		s++
	}
	if p+s != len(old) {
		return ""
	}
	return string(next[p : len(next)-s])
}

// Landed reports whether the write of r is on page (the page's content
// now, exists false when it is missing).
func (r Record) Landed(page []byte, exists bool) bool {
	switch h := Hash(page, exists); {
	case h == r.After:
		return true
	case h == r.Before:
		return false
	}
	return len(r.Inserted) >= minInserted && bytes.Contains(page, []byte(r.Inserted))
}

// Journal is the folder of records. It is safe for concurrent use: each
// record is its own file, written whole and renamed into place.
type Journal struct {
	dir string
}

// Open returns the journal in dir (made on the first write). Records are
// timed and expired by the wall clock, as their files' mtimes are.
func Open(dir string) *Journal { return &Journal{dir: dir} }

func (j *Journal) path(id string) string { return filepath.Join(j.dir, id+".json") }

// Get returns the record of id, if there is one.
func (j *Journal) Get(id string) (Record, bool, error) {
	data, err := os.ReadFile(j.path(id))
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
	return r, true, nil
}

// Put stores r, durably (fsync) before it returns: the write it describes
// comes after.
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
	if fi, err := os.Stat(filepath.Join(j.dir, sweptMarker)); err != nil || time.Since(fi.ModTime()) > pruneEvery {
		j.prune()
	}
	f, err := os.CreateTemp(j.dir, ".tmp-"+r.ID+"-*")
	if err != nil {
		return fmt.Errorf("request %s: %w", r.ID, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, j.path(r.ID))
	}
	if err != nil {
		os.Remove(tmp)
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
		if fi.ModTime().Before(cutoff) || (strings.HasPrefix(e.Name(), ".tmp-") && time.Since(fi.ModTime()) > time.Minute) {
			os.Remove(filepath.Join(j.dir, e.Name()))
		}
	}
}
