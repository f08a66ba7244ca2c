package federation

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// This file reads and writes git's index file (.git/index) for the fast
// commit path (fastcommit.go): versions 2 and 3 without extended flags,
// with the cache-tree extension ("TREE"), which is what `git init` and
// every git command memhost runs produce. Anything else (split or sparse
// indexes, version 4, unmerged entries, intent-to-add entries) is
// errSlowPath and git does the commit. The format is git's
// Documentation/gitformat-index.txt.

// errSlowPath means the fast path does not apply here; the git binary
// does the work instead. It is never shown to a user.
var errSlowPath = errors.New("the fast commit path does not apply")

func slowf(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errSlowPath}, a...)...)
}

const (
	entryFixed   = 62 // stat data, object id and flags, before the path
	flagExtended = 0x4000
	flagStage    = 0x3000
	nameMask     = 0x0fff
	oidLen       = 20 // SHA-1 repositories only
)

// indexEntry is one entry: its fixed part as on disk and its path.
type indexEntry struct {
	fixed [entryFixed]byte
	path  string
}

func (e *indexEntry) mode() uint32 { return binary.BigEndian.Uint32(e.fixed[24:]) }

func (e *indexEntry) oid() []byte { return e.fixed[40 : 40+oidLen] }

// cacheTree is a node of the cache-tree extension: the tree object id
// of a directory as the index holds it, valid when count >= 0.
type cacheTree struct {
	name  string
	count int // index entries under this directory; -1: invalidated
	oid   [oidLen]byte
	subs  []*cacheTree
	dirty bool // its tree must be written again (fastcommit)
}

func (t *cacheTree) sub(name string) *cacheTree {
	for _, s := range t.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

// gitIndex is a parsed index file.
type gitIndex struct {
	version uint32
	entries []indexEntry
	tree    *cacheTree // nil when the index has no TREE extension
	size    int        // of the file read: encode's first guess
}

// parseIndex reads an index file's bytes.
func parseIndex(data []byte) (*gitIndex, error) {
	if len(data) < 12+oidLen || string(data[:4]) != "DIRC" {
		return nil, slowf("not an index file")
	}
	idx := &gitIndex{version: binary.BigEndian.Uint32(data[4:]), size: len(data) + 64}
	if idx.version != 2 && idx.version != 3 {
		return nil, slowf("index version %d", idx.version)
	}
	body, sum := data[:len(data)-oidLen], data[len(data)-oidLen:]
	if !allZero(sum) { // index.skipHash writes zeros
		if s := sha1.Sum(body); !bytes.Equal(s[:], sum) {
			return nil, slowf("index checksum mismatch")
		}
	}
	n := int(binary.BigEndian.Uint32(data[8:]))
	idx.entries = make([]indexEntry, n)
	off := 12
	for i := range idx.entries {
		if off+entryFixed >= len(body) {
			return nil, slowf("index entry %d truncated", i)
		}
		e := &idx.entries[i]
		copy(e.fixed[:], body[off:])
		flags := binary.BigEndian.Uint16(e.fixed[60:])
		if flags&(flagExtended|flagStage) != 0 {
			return nil, slowf("index entry with extended flags or a merge stage")
		}
		end := bytes.IndexByte(body[off+entryFixed:], 0)
		if end < 0 {
			return nil, slowf("index entry %d has no end", i)
		}
		e.path = string(body[off+entryFixed : off+entryFixed+end])
		if l := int(flags & nameMask); l != min(len(e.path), nameMask) {
			return nil, slowf("index entry %d: name length", i)
		}
		off += entrySize(len(e.path))
	}
	for off < len(body) {
		if off+8 > len(body) {
			return nil, slowf("index extension truncated")
		}
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		if off+8+size > len(body) {
			return nil, slowf("index extension %q truncated", sig)
		}
		ext := body[off+8 : off+8+size]
		off += 8 + size
		if sig[0] < 'A' || sig[0] > 'Z' {
			// A required extension (split or sparse index): git only.
			return nil, slowf("index extension %q", sig)
		}
		if sig != "TREE" {
			continue // optional extensions are dropped on write: git rebuilds them
		}
		t, rest, err := readCacheTree(ext)
		if err != nil {
			return nil, err
		}
		if len(rest) != 0 {
			return nil, slowf("cache tree has trailing bytes")
		}
		idx.tree = t
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
func entrySize(nameLen int) int { return (entryFixed + nameLen + 8) &^ 7 }

// readCacheTree reads one node and its subtrees (pre-order).
func readCacheTree(b []byte) (*cacheTree, []byte, error) {
	bad := slowf("cache tree unreadable")
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, nil, bad
	}
	t := &cacheTree{name: string(b[:i])}
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
	t.count = count
	b = b[nl+1:]
	if count >= 0 {
		if len(b) < oidLen {
			return nil, nil, bad
		}
		copy(t.oid[:], b)
		b = b[oidLen:]
	}
	for range nsub {
		s, rest, err := readCacheTree(b)
		if err != nil {
			return nil, nil, err
		}
		t.subs = append(t.subs, s)
		b = rest
	}
	return t, b, nil
}

func (t *cacheTree) write(buf *bytes.Buffer) {
	buf.WriteString(t.name)
	buf.WriteByte(0)
	fmt.Fprintf(buf, "%d %d\n", t.count, len(t.subs))
	if t.count >= 0 {
		buf.Write(t.oid[:])
	}
	for _, s := range t.subs {
		s.write(buf)
	}
}

// encode writes the index file's bytes: entries, the cache tree, the
// checksum. Optional extensions read from the old file are not kept.
func (idx *gitIndex) encode() []byte {
	var buf bytes.Buffer
	buf.Grow(idx.size)
	buf.WriteString("DIRC")
	binary.Write(&buf, binary.BigEndian, idx.version)
	binary.Write(&buf, binary.BigEndian, uint32(len(idx.entries)))
	var pad [8]byte
	for i := range idx.entries {
		e := &idx.entries[i]
		buf.Write(e.fixed[:])
		buf.WriteString(e.path)
		buf.Write(pad[:entrySize(len(e.path))-entryFixed-len(e.path)])
	}
	if idx.tree != nil {
		var ext bytes.Buffer
		idx.tree.write(&ext)
		buf.WriteString("TREE")
		binary.Write(&buf, binary.BigEndian, uint32(ext.Len()))
		buf.Write(ext.Bytes())
	}
	sum := sha1.Sum(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes()
}

// find returns the position of path's entry, or -1.
func (idx *gitIndex) find(path string) int {
	i := sort.Search(len(idx.entries), func(i int) bool { return idx.entries[i].path >= path })
	if i < len(idx.entries) && idx.entries[i].path == path {
		return i
	}
	return -1
}
