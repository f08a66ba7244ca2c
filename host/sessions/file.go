package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/internal/fsx"
)

// Transcripts are append-only files that a crash may cut at any byte: a
// kill during write(2) can leave part of a line (Linux stops copying when
// a fatal signal is pending). Every writer therefore
//   - opens the file with O_NOFOLLOW (a transcript is never a symlink, so a
//     link planted in sessions/ cannot make memhost write elsewhere),
//   - takes an exclusive flock for as long as it writes,
//   - repairs a torn tail before its first write (cutTornTail), and
//   - writes whole lines only, each batch in one write followed by fsync,
//     cutting the file back to where it was if the write fails part way.
// Readers leave out a last line without its newline unless it is whole
// JSON (an editor's save), so a line being written is never half-read.

// tornFile keeps the bytes cut off torn transcripts, one JSON line each,
// in the sessions folder (hidden, so never indexed as a transcript).
const tornFile = ".torn-lines.jsonl"

// tornRecord is one line of tornFile.
type tornRecord struct {
	Path   string `json:"path"`   // sessions/ID.jsonl
	Offset int64  `json:"offset"` // where the torn line started
	Time   string `json:"time"`
	Bytes  string `json:"bytes"` // the torn line, invalid UTF-8 replaced
}

// beforeLock, set by tests, runs between opening a transcript and locking
// it: where another writer may lock it first.
var beforeLock func(session string)

// openAppend opens the transcript of session for appending and locks it;
// with create, a missing one is created (O_EXCL when excl is also set, so
// that of two writers making a new session only one succeeds). A torn
// last line is cut off first; repaired then says what was cut.
func (s *Store) openAppend(session string, create, excl bool) (f *os.File, repaired string, err error) {
	flags := os.O_RDWR | os.O_APPEND | syscall.O_NOFOLLOW
	if create {
		flags |= os.O_CREATE
	}
	if excl {
		flags |= os.O_EXCL
	}
	f, err = fsx.OpenFile(s.file(session), flags, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, "", fmt.Errorf("%s is a symlink: memhost appends only to regular files in sessions/", Path(session))
	}
	var nr *fsx.NotRegularError
	if errors.As(err, &nr) {
		return nil, "", fault.Errorf(fault.BadInput, "session", "%s: %w", Path(session), nr)
	}
	if err != nil {
		return nil, "", err
	}
	if beforeLock != nil {
		beforeLock(session)
	}
	if err := fsx.LockFile(context.Background(), f); err != nil {
		f.Close()
		return nil, "", err
	}
	// Rewrite replaces a transcript by a new file under this lock: a
	// writer that opened the old one waited for the lock on a file no
	// longer at the path, and opens the new one.
	if moved, err := replaced(f, s.file(session)); err != nil || moved {
		f.Close()
		if err != nil {
			return nil, "", err
		}
		return s.openAppend(session, create, false)
	}
	repaired, err = s.cutTornTail(f, session)
	if err != nil {
		f.Close()
		return nil, "", fmt.Errorf("%s: repairing its last line: %w", Path(session), err)
	}
	return f, repaired, nil
}

// cutTornTail makes the locked transcript f end with a newline. A last
// line that is whole JSON only lacks its newline and gets one; anything
// else is a line cut by a crash, never acknowledged to its writer: it is
// moved to tornFile and the file cut back to the line before.
func (s *Store) cutTornTail(f *os.File, session string) (string, error) {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return "", err
	}
	size := fi.Size()
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return "", err
	}
	if last[0] == '\n' {
		return "", nil
	}
	start := int64(0)
	buf := make([]byte, 64<<10)
	for off := size; off > 0; {
		n := min(off, int64(len(buf)))
		off -= n
		if _, err := f.ReadAt(buf[:n], off); err != nil {
			return "", err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			start = off + int64(i) + 1
			break
		}
	}
	tail := make([]byte, size-start)
	if _, err := f.ReadAt(tail, start); err != nil {
		return "", err
	}
	if json.Valid(tail) {
		return "", writeWhole(f, []byte("\n"))
	}
	rec, _ := json.Marshal(tornRecord{Path: Path(session), Offset: start, Time: s.Now().UTC().Format(time.RFC3339Nano), Bytes: string(bytes.ToValidUTF8(tail, []byte("\uFFFD")))})
	if err := appendLocked(filepath.Join(s.Dir, tornFile), append(rec, '\n')); err != nil {
		return "", err
	}
	if err := f.Truncate(start); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: cut off an incomplete last line (%d bytes at byte %d, left by an interrupted write; kept in sessions/%s)",
		Path(session), len(tail), start, tornFile), nil
}

// RepairTail cuts off the incomplete last line of a session's transcript
// (see cutTornTail), as the next append would, and says what it cut ("" if
// nothing).
func (s *Store) RepairTail(session string) (string, error) {
	if !ValidID(session) {
		return "", fmt.Errorf("unknown session %q", session)
	}
	f, repaired, err := s.openAppend(session, false, false)
	if err != nil {
		return "", err
	}
	return repaired, f.Close()
}

// writeWhole appends data (whole lines) to f and flushes it to disk; if
// the write fails part way, the file is cut back to its size before, so it
// never ends in part of a line.
func writeWhole(f *os.File, data []byte) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		if terr := f.Truncate(fi.Size()); terr != nil {
			return fmt.Errorf("%w (and cutting back the partial write failed: %v)", err, terr)
		}
		return err
	}
	return f.Sync()
}

// appendLocked appends data to a memhost file (receipts, torn lines) under
// an exclusive flock and flushes it to disk.
func appendLocked(path string, data []byte) error {
	f, err := fsx.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := fsx.LockFile(context.Background(), f); err != nil {
		return err
	}
	return writeWhole(f, data)
}

// CompleteLines is data without a last line that lacks its newline and is
// not whole JSON: a line still being written, or cut by a crash.
func CompleteLines(data []byte) []byte {
	if len(data) == 0 || data[len(data)-1] == '\n' {
		return data
	}
	i := bytes.LastIndexByte(data, '\n')
	if json.Valid(data[i+1:]) {
		return data
	}
	return data[:i+1]
}

// replaced reports whether the file at path is no longer f (a Rewrite
// renamed a new one there).
func replaced(f *os.File, path string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return !os.SameFile(a, b), nil
}

// Rewrite replaces a session's transcript by fn of its bytes, under its
// lock, through a flushed temporary file and a rename, so that a reader
// sees the old file or the new one and an appender waiting for the lock
// appends to the new one (openAppend). fn returning nil leaves it as it
// is. Rewriting is for redacting secrets already stored; transcripts are
// otherwise only appended to.
func (s *Store) Rewrite(session string, fn func(data []byte) []byte) (bool, error) {
	f, _, err := s.openAppend(session, false, false)
	if err != nil {
		return false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<62))
	if err != nil {
		return false, err
	}
	out := fn(data)
	if out == nil {
		return false, nil
	}
	if err := fsx.WriteFileAtomic(s.file(session), out, 0o600); err != nil {
		return false, fmt.Errorf("rewrite %s: %w", Path(session), err)
	}
	return true, nil
}
