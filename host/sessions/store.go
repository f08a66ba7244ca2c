package sessions

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/chunk"
	"github.com/memhost/memhost/internal/fsx"
)

// Store is the sessions folder of a home. It holds no state of its own:
// every method reads or appends the files, with an exclusive flock per file
// while writing, so any number of goroutines and processes may share one.
type Store struct {
	Dir string           // the sessions folder, absolute
	Now func() time.Time // the time turns and receipts are stamped with
	// Redact, when set, is applied to every turn's content and metadata
	// before it is stored (Append and Import): the home's secrets
	// policy. field names the part of the turn ("content", "metadata").
	Redact func(field, text string) (string, []memhost.Redaction, error)
}

// redactTurn applies s.Redact to t's content and metadata. Metadata is
// JSON: a secret's marker holds no quote, backslash or control character,
// so it stays JSON, which is checked.
func (s *Store) redactTurn(t *memhost.Turn) ([]memhost.Redaction, error) {
	if s.Redact == nil {
		return nil, nil
	}
	content, red, err := s.Redact("content", t.Content)
	if err != nil {
		return nil, err
	}
	t.Content = content
	if len(t.Metadata) > 0 {
		meta, mred, err := s.Redact("metadata", string(t.Metadata))
		if err != nil {
			return nil, err
		}
		if len(mred) > 0 {
			if !json.Valid([]byte(meta)) {
				return nil, fault.BadInputf("meta", "a secret in the turn's metadata cannot be redacted without breaking its JSON; leave it out")
			}
			t.Metadata = json.RawMessage(meta)
			red = append(red, mred...)
		}
	}
	return red, nil
}

// file is the transcript of a session on disk.
func (s *Store) file(session string) string {
	return filepath.Join(s.Dir, session+".jsonl")
}

// Exists reports whether the session has a transcript; an invalid id is a
// bad-input error.
func (s *Store) Exists(session string) (bool, error) {
	if !ValidID(session) {
		return false, fault.Errorf(fault.BadInput, "session", "unknown session %q", session)
	}
	_, err := os.Stat(s.file(session))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Appended is a turn as written, and what was repaired first.
type Appended struct {
	Turn     memhost.Turn
	Redacted []memhost.Redaction // secrets replaced before the turn was stored
	Repaired string              // an incomplete last line cut off before (see cutTornTail); "" if none
	Existed  bool                // a turn of the id asked for was there already: nothing was written
}

// retryWindow is how far back from the end of a transcript Append looks
// for a turn of the id it was given: a retry comes seconds after the
// first attempt, with at most a few turns of other writers in between.
const retryWindow = 256 << 10

// Append gives t a time and a token count, and an id unless it has one,
// and appends it to the session's transcript as one line, flushed to
// disk, under the file's lock so lines of concurrent writers never
// interleave. If t has an id and a turn of that id is among the last
// retryWindow bytes, that turn is returned and nothing is written.
func (s *Store) Append(ctx context.Context, session string, t memhost.Turn) (Appended, error) {
	if t.ID == "" {
		var id [6]byte
		rand.Read(id[:])
		t.ID = hex.EncodeToString(id[:])
	}
	red, err := s.redactTurn(&t)
	if err != nil {
		return Appended{Turn: t}, err
	}
	t.Timestamp = s.Now().UTC().Format(time.RFC3339Nano)
	t.TokenCount = chunk.EstimateTokens(t.Content)
	line, err := json.Marshal(t)
	if err != nil {
		return Appended{Turn: t}, err
	}
	if len(line) > MaxLine {
		return Appended{Turn: t}, fault.Errorf(fault.BadInput, "text", "the turn is %d MB as stored; a turn takes at most %d MB", (len(line)+1<<20-1)>>20, MaxLine>>20)
	}
	f, repaired, err := s.openAppend(session, true, false)
	if err != nil {
		return Appended{Turn: t}, fmt.Errorf("append to %s: %w", Path(session), err)
	}
	defer f.Close()
	if t.ID != "" {
		if prev, ok, err := findRecent(f, t.ID, int64(len(line))); err != nil {
			return Appended{Turn: t, Repaired: repaired}, fmt.Errorf("append to %s: %w", Path(session), err)
		} else if ok {
			return Appended{Turn: prev, Repaired: repaired, Existed: true}, nil
		}
	}
	if err := writeWhole(f, append(line, '\n')); err != nil {
		return Appended{Turn: t, Repaired: repaired}, fmt.Errorf("append to %s: %w", Path(session), err)
	}
	return Appended{Turn: t, Repaired: repaired, Redacted: red}, nil
}

// Transcript is a session file read whole, for compaction.
type Transcript struct {
	Turns         []memhost.Turn // every entry that parses, in order
	lastCompact   int            // index of the last compaction entry, -1 if none
	LastCompacted string         // time of the last compaction entry
	Compactions   int
}

// Read reads a session's transcript. Malformed lines are left out (sync
// reports them). A missing transcript is a not-found error.
func (s *Store) Read(session string) (Transcript, error) {
	tr := Transcript{lastCompact: -1}
	if !ValidID(session) {
		return tr, fault.Errorf(fault.BadInput, "session", "unknown session %q", session)
	}
	f, err := s.open(session)
	if err != nil {
		return tr, err
	}
	defer f.Close()
	err = ReadLines(f, 1, func(_ int, line []byte) error {
		var t memhost.Turn
		if json.Unmarshal(line, &t) != nil {
			return nil
		}
		if t.Type == "compaction" {
			tr.lastCompact, tr.LastCompacted = len(tr.Turns), t.Timestamp
			tr.Compactions++
		}
		tr.Turns = append(tr.Turns, t)
		return nil
	})
	return tr, err
}

// open opens a session's transcript for reading, beneath the sessions
// folder (a symlink is followed only while it leads inside it, as the
// indexer's scan does) and only when it is a regular file: a FIFO would
// block the reader. A missing transcript is a not-found error, one that is
// not a regular file or leads out a bad-input error.
func (s *Store) open(session string) (*os.File, error) {
	dir, err := fsx.OpenDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fault.Errorf(fault.NotFound, "session", "unknown session %q (no %s)", session, Path(session))
	}
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	f, err := dir.Open(session+".jsonl", fsx.LinksInside)
	var nr *fsx.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fault.Errorf(fault.NotFound, "session", "unknown session %q (no %s)", session, Path(session))
	case errors.As(err, &nr):
		return nil, fault.Errorf(fault.BadInput, "session", "%s: %w", Path(session), nr)
	case errors.Is(err, fsx.ErrOutside):
		return nil, fault.Errorf(fault.BadInput, "session", "%s: a symlink that leads outside sessions/", Path(session))
	case errors.Is(err, syscall.ELOOP):
		return nil, fault.Errorf(fault.BadInput, "session", "%s: a symlink loop", Path(session))
	}
	return f, err
}

// Working returns the turns of the working context: the last compaction's
// summary and everything after it.
func (tr Transcript) Working() []memhost.Turn {
	if tr.lastCompact < 0 {
		return tr.Turns
	}
	return tr.Turns[tr.lastCompact:]
}

// receiptsFile records flushes: one JSON line per flush, in the sessions
// folder (hidden, so never indexed as a transcript).
const receiptsFile = ".flush-receipts.jsonl"

// Receipts reads every flush receipt, oldest first.
func (s *Store) Receipts() ([]memhost.FlushReceipt, error) {
	data, err := fsx.ReadFile(filepath.Join(s.Dir, receiptsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []memhost.FlushReceipt
	err = ReadLines(bytes.NewReader(data), 1, func(_ int, line []byte) error {
		var r memhost.FlushReceipt
		if json.Unmarshal(line, &r) == nil && r.Session != "" {
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// AddReceipt records that a flush was asked of the agent in session now.
func (s *Store) AddReceipt(session string, tokens int) error {
	line, _ := json.Marshal(memhost.FlushReceipt{Session: session, Time: s.Now().UTC().Format(time.RFC3339Nano), Tokens: tokens})
	return appendLocked(filepath.Join(s.Dir, receiptsFile), append(line, '\n'))
}

// lastFlush is the time of the session's last flush receipt, "" if none.
func (s *Store) lastFlush(session string) (string, error) {
	rs, err := s.Receipts()
	last := ""
	for _, r := range rs {
		if r.Session == session && (last == "" || before(last, r.Time)) {
			last = r.Time
		}
	}
	return last, err
}

// before reports whether RFC 3339 time a is before b; "" is before all.
// (Strings do not compare: "…:05Z" sorts after "…:05.1Z".)
func before(a, b string) bool {
	if a == "" || b == "" {
		return a == "" && b != ""
	}
	ta, err1 := time.Parse(time.RFC3339Nano, a)
	tb, err2 := time.Parse(time.RFC3339Nano, b)
	if err1 != nil || err2 != nil {
		return a < b
	}
	return ta.Before(tb)
}

// List describes every transcript, most recent last entry first. Files
// whose name is not a session id are left out.
func (s *Store) List(ctx context.Context) ([]memhost.SessionSummary, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := []memhost.SessionSummary{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !ValidID(id) || !(e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0) {
			continue // a folder, or a FIFO or device, which the indexer reports
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tr, err := s.Read(id)
		if errors.Is(err, fs.ErrNotExist) || fault.KindOf(err) == fault.NotFound {
			continue // removed while we looked
		}
		if fault.KindOf(err) == fault.BadInput {
			continue // not a regular file, or a link out: sync reports it
		}
		if err != nil {
			return nil, err
		}
		sum := memhost.SessionSummary{Session: id, Path: Path(id), Compactions: tr.Compactions}
		if fi, err := e.Info(); err == nil {
			sum.SizeBytes = fi.Size()
		}
		for _, t := range tr.Turns {
			if t.Type != "compaction" {
				sum.Turns++
			}
			if t.Timestamp != "" {
				if sum.First == "" {
					sum.First = t.Timestamp
				}
				sum.Last = t.Timestamp
			}
		}
		out = append(out, sum)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Last != out[j].Last {
			return out[i].Last > out[j].Last
		}
		return out[i].Session < out[j].Session
	})
	return out, nil
}

// findRecent looks for the turn of id among the last retryWindow bytes of
// the transcript f (open, locked), and as many more as the turn's own line
// takes (size).
func findRecent(f *os.File, id string, size int64) (memhost.Turn, bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return memhost.Turn{}, false, err
	}
	from := max(0, fi.Size()-retryWindow-size)
	var found memhost.Turn
	ok := false
	err = ReadLines(io.NewSectionReader(f, from, fi.Size()-from), 1, func(_ int, line []byte) error {
		if !bytes.Contains(line, []byte(id)) {
			return nil
		}
		var t memhost.Turn
		if json.Unmarshal(line, &t) == nil && t.ID == id {
			found, ok = t, true
		}
		return nil
	})
	return found, ok, err
}

// privateFile lists the sessions appended with Private, one JSON line
// each: searchable here, never committed, pushed or exported.
const privateFile = ".private.jsonl"

// MarkPrivate records session as private (again: no change).
func (s *Store) MarkPrivate(session string) error {
	if s.IsPrivate(session) {
		return nil
	}
	line, _ := json.Marshal(map[string]string{"session": session})
	return appendLocked(filepath.Join(s.Dir, privateFile), append(line, '\n'))
}

// IsPrivate reports whether session was appended to with Private.
func (s *Store) IsPrivate(session string) bool {
	data, err := os.ReadFile(filepath.Join(s.Dir, privateFile))
	if err != nil {
		return false
	}
	found := false
	ReadLines(bytes.NewReader(data), 1, func(_ int, line []byte) error {
		var r struct{ Session string }
		if json.Unmarshal(line, &r) == nil && r.Session == session {
			found = true
			return ErrStop
		}
		return nil
	})
	return found
}
