// Package gitindex reads and writes git's index file (.git/index) and
// builds tree objects from it, for the fast commit and fast-forward of
// package gitrepo: no git process, no I/O but the index and its lock.
package gitindex

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memhost/memhost/internal/fsx"
)

// This file reads and writes git's index file (.git/index) for the fast
// commit path (gitrepo's FastCommit and FastForward): versions 2 and 3 without extended flags,
// with the cache-tree extension ("TREE"), which is what `git init` and
// every git command memhost runs produce. Anything else (split or sparse
// indexes, version 4, unmerged entries, intent-to-add entries) is
// ErrSlowPath and git does the commit. The format is git's
// Documentation/gitformat-index.txt.

// ErrSlowPath means the fast path does not apply here; the git binary
// does the work instead. It is never shown to a user.
var ErrSlowPath = errors.New("the fast commit path does not apply")

// Slowf is ErrSlowPath with the reason.
func Slowf(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSlowPath}, a...)...)
}

const (
	EntryFixed   = 62 // stat data, object id and flags, before the path
	flagExtended = 0x4000
	flagStage    = 0x3000
	NameMask     = 0x0fff
	OIDLen       = 20 // SHA-1 repositories only
)

// Entry is one entry: its fixed part as on disk and its path.
type Entry struct {
	Fixed [EntryFixed]byte
	Path  string
}

// Mode is the entry's file mode.
func (e *Entry) Mode() uint32 { return binary.BigEndian.Uint32(e.Fixed[24:]) }

// OID is the entry's object id, in place.
func (e *Entry) OID() []byte { return e.Fixed[40 : 40+OIDLen] }

// Tree is a node of the cache-tree extension: the tree object id
// of a directory as the index holds it, valid when count >= 0.
type Tree struct {
	Name  string
	Count int // index entries under this directory; -1: invalidated
	OID   [OIDLen]byte
	Subs  []*Tree
	Dirty bool // its tree must be written again (fastcommit)
}

// Sub is the node of the subfolder name, nil when there is none.
func (t *Tree) Sub(name string) *Tree {
	for _, s := range t.Subs {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Index is a parsed index file.
type Index struct {
	Version uint32
	Entries []Entry
	Tree    *Tree // nil when the index has no TREE extension
	Size    int   // of the file read: encode's first guess
}

// Parse reads an index file's bytes.
func Parse(data []byte) (*Index, error) {
	if len(data) < 12+OIDLen || string(data[:4]) != "DIRC" {
		return nil, Slowf("not an index file")
	}
	idx := &Index{Version: binary.BigEndian.Uint32(data[4:]), Size: len(data) + 64}
	if idx.Version != 2 && idx.Version != 3 {
		return nil, Slowf("index version %d", idx.Version)
	}
	body, sum := data[:len(data)-OIDLen], data[len(data)-OIDLen:]
	if !allZero(sum) { // index.skipHash writes zeros
		if s := sha1.Sum(body); !bytes.Equal(s[:], sum) {
			return nil, Slowf("index checksum mismatch")
		}
	}
	n := int(binary.BigEndian.Uint32(data[8:]))
	idx.Entries = make([]Entry, n)
	off := 12
	for i := range idx.Entries {
		if off+EntryFixed >= len(body) {
			return nil, Slowf("index entry %d truncated", i)
		}
		e := &idx.Entries[i]
		copy(e.Fixed[:], body[off:])
		flags := binary.BigEndian.Uint16(e.Fixed[60:])
		if flags&(flagExtended|flagStage) != 0 {
			return nil, Slowf("index entry with extended flags or a merge stage")
		}
		end := bytes.IndexByte(body[off+EntryFixed:], 0)
		if end < 0 {
			return nil, Slowf("index entry %d has no end", i)
		}
		e.Path = string(body[off+EntryFixed : off+EntryFixed+end])
		if l := int(flags & NameMask); l != min(len(e.Path), NameMask) {
			return nil, Slowf("index entry %d: name length", i)
		}
		off += entrySize(len(e.Path))
	}
	for off < len(body) {
		if off+8 > len(body) {
			return nil, Slowf("index extension truncated")
		}
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		if off+8+size > len(body) {
			return nil, Slowf("index extension %q truncated", sig)
		}
		ext := body[off+8 : off+8+size]
		off += 8 + size
		if sig[0] < 'A' || sig[0] > 'Z' {
			// A required extension (split or sparse index): git only.
			return nil, Slowf("index extension %q", sig)
		}
		if sig != "TREE" {
			continue // optional extensions are dropped on write: git rebuilds them
		}
		t, rest, err := readCacheTree(ext)
		if err != nil {
			return nil, err
		}
		if len(rest) != 0 {
			return nil, Slowf("cache tree has trailing bytes")
		}
		idx.Tree = t
	}
	return idx, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// entrySize is an entry's length on disk: the fixed part, the path and
// one to eight NULs up to a multiple of eight.
func entrySize(nameLen int) int { return (EntryFixed + nameLen + 8) &^ 7 }

// readCacheTree reads one node and its subtrees (pre-order).
func readCacheTree(b []byte) (*Tree, []byte, error) {
	bad := Slowf("cache tree unreadable")
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, nil, bad
	}
	t := &Tree{Name: string(b[:i])}
	b = b[i+1:]
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil, nil, bad
	}
	countStr, subStr, ok := bytes.Cut(b[:nl], []byte(" "))
	if !ok {
		return nil, nil, bad
	}
	count, err1 := strconv.Atoi(string(countStr))
	nsub, err2 := strconv.Atoi(string(subStr))
	if err1 != nil || err2 != nil || nsub < 0 || count < -1 {
		return nil, nil, bad
	}
	t.Count = count
	b = b[nl+1:]
	if count >= 0 {
		if len(b) < OIDLen {
			return nil, nil, bad
		}
		copy(t.OID[:], b)
		b = b[OIDLen:]
	}
	for range nsub {
		s, rest, err := readCacheTree(b)
		if err != nil {
			return nil, nil, err
		}
		t.Subs = append(t.Subs, s)
		b = rest
	}
	return t, b, nil
}

// Write appends the node and its subtrees as the TREE extension holds them.
func (t *Tree) Write(buf *bytes.Buffer) {
	buf.WriteString(t.Name)
	buf.WriteByte(0)
	fmt.Fprintf(buf, "%d %d\n", t.Count, len(t.Subs))
	if t.Count >= 0 {
		buf.Write(t.OID[:])
	}
	for _, s := range t.Subs {
		s.Write(buf)
	}
}

// Encode writes the index file's bytes: entries, the cache tree, the
// checksum. Optional extensions read from the old file are not kept.
func (idx *Index) Encode() []byte {
	var buf bytes.Buffer
	buf.Grow(idx.Size)
	buf.WriteString("DIRC")
	binary.Write(&buf, binary.BigEndian, idx.Version)
	binary.Write(&buf, binary.BigEndian, uint32(len(idx.Entries)))
	var pad [8]byte
	for i := range idx.Entries {
		e := &idx.Entries[i]
		buf.Write(e.Fixed[:])
		buf.WriteString(e.Path)
		buf.Write(pad[:entrySize(len(e.Path))-EntryFixed-len(e.Path)])
	}
	if idx.Tree != nil {
		var ext bytes.Buffer
		idx.Tree.Write(&ext)
		buf.WriteString("TREE")
		binary.Write(&buf, binary.BigEndian, uint32(ext.Len()))
		buf.Write(ext.Bytes())
	}
	sum := sha1.Sum(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes()
}

// Find returns the position of path's entry, or -1.
func (idx *Index) Find(path string) int {
	i := sort.Search(len(idx.Entries), func(i int) bool { return idx.Entries[i].Path >= path })
	if i < len(idx.Entries) && idx.Entries[i].Path == path {
		return i
	}
	return -1
}

// Locked is the index read under git's index lock (.git/index.lock,
// made exclusively: no git process changes the index meanwhile), with a
// valid cache tree; write replaces the index, release drops the lock
// when write did not.
type Locked struct {
	*Index
	gd    string
	lock  *os.File
	done  bool
	mtime time.Time // of the index file read (Racy)
}

// Lock reads the index under git's index lock (Locked).
func Lock(gd string) (*Locked, error) {
	lock, err := os.OpenFile(filepath.Join(gd, "index.lock"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, Slowf("index is locked")
	}
	li := &Locked{gd: gd, lock: lock}
	data, mtime, err := readIndex(filepath.Join(gd, "index"))
	if err != nil {
		li.Release()
		return nil, Slowf("no index: %v", err)
	}
	li.mtime = mtime
	if li.Index, err = Parse(data); err != nil {
		li.Release()
		return nil, err
	}
	if li.Tree == nil || li.Tree.Count != len(li.Entries) {
		li.Release()
		return nil, Slowf("no valid cache tree")
	}
	return li, nil
}

// readIndex reads an index file and its mtime, from one descriptor.
func readIndex(p string) ([]byte, time.Time, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	data, err := io.ReadAll(f)
	return data, fi.ModTime(), err
}

// Racy reports whether an entry's stat data cannot vouch for its file,
// which git calls racily clean: its mtime is not older than the index
// file read, so the file may have changed after it was hashed, in the
// same tick, keeping the size and mtime recorded. Seconds are compared,
// as by a git built without nanosecond timestamps; that takes in every
// entry a git comparing nanoseconds would also find racy. Submodules
// (mode 160000) never are: git compares them by commit, not stat data.
func (li *Locked) Racy(e *Entry) bool {
	sec := uint32(li.mtime.Unix()) // git's 32-bit seconds, as PutStat stores them
	return sec != 0 && e.Mode() != 0o160000 && binary.BigEndian.Uint32(e.Fixed[8:]) >= sec
}

// Smudge records size 0 in an entry, as git does to a racily clean entry
// whose file changed: git then compares the file's content whatever the
// rest of its stat data says, until a refresh records them again.
func Smudge(e *Entry) { binary.BigEndian.PutUint32(e.Fixed[36:], 0) }

// Size is the file size recorded in an entry (its low 32 bits).
func (e *Entry) Size() uint32 { return binary.BigEndian.Uint32(e.Fixed[36:]) }

// Write replaces .git/index with the entries and cache tree held. A
// failure leaves the old index: it only looks staged to git status, and
// the next git command that refreshes it puts it right.
func (li *Locked) Write() {
	if _, err := li.lock.Write(li.Encode()); err == nil && li.lock.Sync() == nil && li.lock.Close() == nil {
		li.done = fsx.Rename(filepath.Join(li.gd, "index.lock"), filepath.Join(li.gd, "index")) == nil
	}
}

// Release drops the lock, unless Write replaced the index with it.
func (li *Locked) Release() {
	if !li.done {
		li.lock.Close()
		os.Remove(filepath.Join(li.gd, "index.lock"))
		li.done = true
	}
}

// PutStat stores stat data in an entry, as git does (32-bit fields).
func PutStat(e *Entry, st *syscall.Stat_t) {
	put := func(off int, v uint32) {
		e.Fixed[off], e.Fixed[off+1], e.Fixed[off+2], e.Fixed[off+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	put(0, uint32(st.Ctim.Sec))
	put(4, uint32(st.Ctim.Nsec))
	put(8, uint32(st.Mtim.Sec))
	put(12, uint32(st.Mtim.Nsec))
	put(16, uint32(st.Dev))
	put(20, uint32(st.Ino))
	put(28, st.Uid)
	put(32, st.Gid)
	put(36, uint32(st.Size))
}

// MarkDirty marks the folders holding p for writing and adds added to
// their entry counts; each must have a valid cache-tree node (a file in
// a new folder is git's to commit).
func MarkDirty(root *Tree, p string, added int) error {
	dirs := strings.Split(p, "/")
	chain := []*Tree{root}
	t := root
	for _, d := range dirs[:len(dirs)-1] {
		t = t.Sub(d)
		if t == nil || t.Count < 0 {
			return Slowf("no cache tree for the folder of %s", p)
		}
		chain = append(chain, t)
	}
	for _, t := range chain {
		t.Dirty = true
		t.Count += added
	}
	return nil
}

// TreeObject is the tree of the folder prefix: its files from the index,
// its subfolders from the cache tree (index order is tree order).
func TreeObject(idx *Index, t *Tree, prefix string) ([]byte, error) {
	var b bytes.Buffer
	i := sort.Search(len(idx.Entries), func(i int) bool { return idx.Entries[i].Path >= prefix })
	start := i
	for i < len(idx.Entries) && strings.HasPrefix(idx.Entries[i].Path, prefix) {
		e := &idx.Entries[i]
		rest := e.Path[len(prefix):]
		if d, _, ok := strings.Cut(rest, "/"); ok {
			s := t.Sub(d)
			if s == nil || s.Count <= 0 || s.Dirty {
				return nil, Slowf("no cache tree for %s%s", prefix, d)
			}
			fmt.Fprintf(&b, "40000 %s\x00", d)
			b.Write(s.OID[:])
			i += s.Count
			continue
		}
		fmt.Fprintf(&b, "%o %s\x00", e.Mode(), rest)
		b.Write(e.OID())
		i++
	}
	if i-start != t.Count {
		return nil, Slowf("cache tree of %q counts %d entries, the index %d", prefix, t.Count, i-start)
	}
	return b.Bytes(), nil
}

// ObjectID is the id of an object of kind holding data.
func ObjectID(kind string, data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// AdjustTree marks the folders of p dirty and adds delta to their counts,
// making the nodes of new folders.
func AdjustTree(root *Tree, p string, delta int) error {
	dirs := strings.Split(p, "/")
	t := root
	for k := 0; ; k++ {
		if t.Count < 0 {
			return Slowf("no cache tree for the folder of %s", p)
		}
		t.Dirty = true
		t.Count += delta
		if k == len(dirs)-1 {
			return nil
		}
		s := t.Sub(dirs[k])
		if s == nil {
			s = &Tree{Name: dirs[k]}
			t.Subs = append(t.Subs, s)
		}
		t = s
	}
}

// PruneEmpty drops the nodes of folders left without files.
func PruneEmpty(t *Tree) {
	t.Subs = slices.DeleteFunc(t.Subs, func(s *Tree) bool { return s.Count == 0 })
	for _, s := range t.Subs {
		PruneEmpty(s)
	}
}
