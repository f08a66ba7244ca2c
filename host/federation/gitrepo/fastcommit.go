package gitrepo

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memhost/memhost/host/federation/gitrepo/gitindex"
	"github.com/memhost/memhost/host/federation/worktree"
	"github.com/memhost/memhost/internal/fsx"
)

// FastCommit commits the current content of paths, files git already
// tracks, on top of HEAD without starting git: it writes the blobs, the
// trees along their folders and the commit as loose objects, moves the
// branch under git's ref lock and rewrites the index under git's index
// lock, as `git commit --only -- PATHS` would. A git process costs at
// least 6 ms to start on this machine and `git commit` refreshes every
// entry of the index (100 ms of CPU at 10k pages); this costs about a
// millisecond plus the size of the folders written (BenchmarkRememberCommit).
//
// It applies only when the index is exactly HEAD's tree (its cache tree
// is valid and names HEAD's tree), HEAD is a branch, and every path is a
// regular file beneath home with no symlink on its path (a new file is
// added unless .git/info/exclude keeps it here, when its folder is
// tracked already); anything else is gitindex.ErrSlowPath, before
// the branch moves, and the caller runs git. The commit id is returned,
// "" when the files hold what HEAD holds.
func (r *Repo) FastCommit(home *fsx.Dir, msg string, paths []string, now time.Time) (string, error) {
	if len(paths) == 0 {
		return "", gitindex.Slowf("no paths")
	}
	gd := r.GitDir()
	if err := r.fastPathAllowed(); err != nil {
		return "", err
	}
	branch, err := HeadBranch(gd)
	if err != nil {
		return "", err
	}
	idx, err := gitindex.Lock(gd)
	if err != nil {
		return "", err
	}
	defer idx.Release()
	head, err := readRef(gd, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	headTree, err := commitTree(gd, head)
	if err != nil {
		return "", err
	}
	if headTree != hex.EncodeToString(idx.Tree.OID[:]) {
		return "", gitindex.Slowf("the index is not HEAD's tree")
	}

	// Stage each path: its blob, its entry's stat data, its folders dirty.
	changed := false
	var added []string
	for _, p := range Dedupe(paths) {
		i := idx.Find(p)
		if i < 0 {
			added = append(added, p)
			continue
		}
		e := &idx.Entries[i]
		oid, st, err := r.hashFile(home, p, e.Mode())
		if err != nil {
			return "", err
		}
		if !bytes.Equal(e.OID(), oid) {
			changed = true
			if err := gitindex.MarkDirty(idx.Tree, p, 0); err != nil {
				return "", err
			}
		}
		copy(e.OID(), oid)
		gitindex.PutStat(e, st)
	}
	if len(added) > 0 {
		if err := r.addEntries(home, idx.Index, added); err != nil {
			return "", err
		}
		changed = true
	}
	if !changed {
		// Nothing to commit: the refreshed stat data is kept.
		smudgeRacy(home, idx)
		idx.Write()
		return "", nil
	}
	if err := r.writeTrees(idx.Index, true); err != nil {
		return "", err
	}
	tree := hex.EncodeToString(idx.Tree.OID[:])
	commit, err := r.writeObject("commit", r.commitObject(tree, head, msg, now))
	if err != nil {
		return "", err
	}
	if err := updateRef(gd, "refs/heads/"+branch, head, commit); err != nil {
		return "", err
	}
	// The commit is made: from here on nothing is reported as failed.
	r.appendReflog(branch, head, commit, msg, now)
	smudgeRacy(home, idx)
	idx.Write()
	return commit, nil
}

// smudgeRacy does what git does before it writes an index: each racily
// clean entry (gitindex.Locked.Racy) whose file no longer holds the blob
// recorded gets size 0 (gitindex.Smudge). The index written next is newer
// than the change, so the entry would no longer look racy and git would
// trust its stat data: a file rewritten with the same size in the same
// tick would never show as modified. The files just hashed are read again
// too, as git does, since one may have changed after it was hashed. A
// file that cannot be read as a regular file beneath home, or an entry
// that is no regular file, is smudged: git looks at it either way.
func smudgeRacy(home *fsx.Dir, idx *gitindex.Locked) {
	for i := range idx.Entries {
		e := &idx.Entries[i]
		if e.Size() == 0 || !idx.Racy(e) {
			continue // already smudged (or empty), or its stat data vouches for it
		}
		if m := e.Mode(); m == ModeFile || m == 0o100755 {
			data, err := home.ReadFile(e.Path, fsx.NoLinks)
			if err == nil && BlobID(data) == hex.EncodeToString(e.OID()) {
				continue
			}
		}
		gitindex.Smudge(e)
	}
}

// fastPathAllowed refuses repositories whose files git would transform
// or that are not laid out as `git init` makes them.
func (r *Repo) fastPathAllowed() error {
	gd := r.GitDir()
	if fi, err := os.Stat(gd); err != nil || !fi.IsDir() {
		return gitindex.Slowf(".git is not a folder")
	}
	for _, p := range []string{"reftable", "MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD", "info/attributes", "shallow", "objects/info/alternates"} {
		if _, err := os.Lstat(filepath.Join(gd, p)); err == nil {
			return gitindex.Slowf(".git/%s exists", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(r.Dir, ".gitattributes")); err == nil {
		return gitindex.Slowf(".gitattributes exists")
	}
	cfg, err := os.ReadFile(filepath.Join(gd, "config"))
	if err != nil {
		return gitindex.Slowf("no .git/config")
	}
	// Settings that make a blob differ from the file, change the object
	// format or the index layout. Matching the text may refuse a harmless
	// setting; it never lets a relevant one through.
	low := strings.ToLower(string(cfg))
	for _, s := range []string{"[filter", "autocrlf = true", "autocrlf=true", "autocrlf = input", "autocrlf=input", "eol", "objectformat", "splitindex", "sparse", "[include", "worktree"} {
		if strings.Contains(low, s) {
			return gitindex.Slowf(".git/config sets %q", s)
		}
	}
	return nil
}

// Head is HEAD's commit, abbreviated to 12 digits, read from .git without
// starting git when it can (status and the dashboard show it); "" before
// the first commit.
func (r *Repo) Head(ctx context.Context) string {
	if branch, err := HeadBranch(r.GitDir()); err == nil {
		if id, err := readRef(r.GitDir(), "refs/heads/"+branch); err == nil {
			return id[:12]
		}
	}
	out, err := r.Git(ctx, "rev-parse", "--verify", "--quiet", "--short=12", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// HeadBranch is the branch HEAD names.
func HeadBranch(gd string) (string, error) {
	b, err := os.ReadFile(filepath.Join(gd, "HEAD"))
	if err != nil {
		return "", gitindex.Slowf("no HEAD")
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: refs/heads/")
	if !ok || ref == "" {
		return "", gitindex.Slowf("HEAD is not a branch")
	}
	return ref, nil
}

// readRef is a ref's commit id, loose or packed.
func readRef(gd, name string) (string, error) {
	if b, err := os.ReadFile(filepath.Join(gd, filepath.FromSlash(name))); err == nil {
		id := strings.TrimSpace(string(b))
		if !isOID(id) {
			return "", gitindex.Slowf("%s is not an object id", name)
		}
		return id, nil
	}
	b, err := os.ReadFile(filepath.Join(gd, "packed-refs"))
	if err != nil {
		return "", gitindex.Slowf("%s does not exist", name)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if id, ref, ok := strings.Cut(l, " "); ok && ref == name && isOID(id) {
			return id, nil
		}
	}
	return "", gitindex.Slowf("%s does not exist", name)
}

func isOID(s string) bool {
	if len(s) != 2*gitindex.OIDLen {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// commitTree is the tree of a commit stored as a loose object (git
// commit writes them loose; a commit in a pack is gitindex.ErrSlowPath).
func commitTree(gd, commit string) (string, error) {
	f, err := os.Open(filepath.Join(gd, "objects", commit[:2], commit[2:]))
	if err != nil {
		return "", gitindex.Slowf("commit %s is not a loose object", Short(commit))
	}
	defer f.Close()
	z, err := zlib.NewReader(f)
	if err != nil {
		return "", gitindex.Slowf("commit %s unreadable", Short(commit))
	}
	var head [64]byte
	n, _ := io.ReadFull(z, head[:])
	hdr, body, ok := bytes.Cut(head[:n], []byte{0})
	if !ok || !bytes.HasPrefix(hdr, []byte("commit ")) || !bytes.HasPrefix(body, []byte("tree ")) || len(body) < 5+2*gitindex.OIDLen {
		return "", gitindex.Slowf("commit %s unreadable", Short(commit))
	}
	return string(body[5 : 5+2*gitindex.OIDLen]), nil
}

// hashFile writes the blob of a file's content and returns its id and
// the file's stat data. The file must be a regular file beneath home,
// reached with no symlink on its path (worktree.ReadWorkFile: a page or a folder
// swapped for a symlink is refused, never read through), and not change
// while read; its executable bit is never recorded (entries are 100644,
// see federation's shared.go).
func (r *Repo) hashFile(home *fsx.Dir, p string, mode uint32) ([]byte, *syscall.Stat_t, error) {
	if mode != ModeFile {
		return nil, nil, gitindex.Slowf("%s is not a regular file (100644) in the index", p)
	}
	data, st, err := worktree.ReadWorkFile(home, p)
	if err != nil {
		return nil, nil, gitindex.Slowf("%s: %v", p, err)
	}
	id, err := r.writeObject("blob", data)
	if err != nil {
		return nil, nil, err
	}
	oid, _ := hex.DecodeString(id)
	return oid, st, nil
}

// addEntries adds files git does not track yet to the index, unless
// this machine keeps one to itself (.git/info/exclude, never the shared
// .gitignore: see Excluded).
func (r *Repo) addEntries(home *fsx.Dir, idx *gitindex.Index, added []string) error {
	ex, err := r.Excluded(context.Background(), added)
	if err != nil {
		return gitindex.Slowf("which of %v are excluded: %v", added, err)
	}
	if len(ex) > 0 {
		return gitindex.Slowf("an excluded file among %v", added)
	}
	for _, p := range added {
		if !validPath(p) {
			return gitindex.Slowf("%q is not a path git stores", p)
		}
		// A folder of that name in the index (deleted from disk, not
		// committed yet) is git's to sort out.
		if j := sort.Search(len(idx.Entries), func(i int) bool { return idx.Entries[i].Path >= p+"/" }); j < len(idx.Entries) && strings.HasPrefix(idx.Entries[j].Path, p+"/") {
			return gitindex.Slowf("%s is a folder in the index", p)
		}
		var e gitindex.Entry
		mode := uint32(ModeFile)
		oid, stat, err := r.hashFile(home, p, mode)
		if err != nil {
			return err
		}
		binary.BigEndian.PutUint32(e.Fixed[24:], mode)
		copy(e.OID(), oid)
		gitindex.PutStat(&e, stat)
		binary.BigEndian.PutUint16(e.Fixed[60:], uint16(min(len(p), gitindex.NameMask)))
		e.Path = p
		if err := gitindex.MarkDirty(idx.Tree, p, 1); err != nil {
			return err
		}
		i := sort.Search(len(idx.Entries), func(i int) bool { return idx.Entries[i].Path >= p })
		idx.Entries = slices.Insert(idx.Entries, i, e)
	}
	return nil
}

// validPath: what git accepts in an index: relative, no empty, "." or
// ".." component, no .git folder, no NUL.
func validPath(p string) bool {
	if p == "" || strings.ContainsRune(p, 0) {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
			return false
		}
	}
	return true
}

// writeTrees writes the tree of every dirty folder, deepest first, and
// stores its id in the cache tree; without store, the ids are computed
// and nothing is written (trees the object store holds already).
func (r *Repo) writeTrees(idx *gitindex.Index, store bool) error {
	type node struct {
		t      *gitindex.Tree
		prefix string // "" for the root, else "a/b/"
		depth  int
	}
	var dirty []node
	var walk func(t *gitindex.Tree, prefix string, depth int)
	walk = func(t *gitindex.Tree, prefix string, depth int) {
		if !t.Dirty {
			return
		}
		dirty = append(dirty, node{t, prefix, depth})
		for _, s := range t.Subs {
			walk(s, prefix+s.Name+"/", depth+1)
		}
	}
	walk(idx.Tree, "", 0)
	sort.SliceStable(dirty, func(i, j int) bool { return dirty[i].depth > dirty[j].depth })
	for _, n := range dirty {
		data, err := gitindex.TreeObject(idx, n.t, n.prefix)
		if err != nil {
			return err
		}
		id := gitindex.ObjectID("tree", data)
		if store {
			if _, err := r.writeObject("tree", data); err != nil {
				return err
			}
		}
		hex.Decode(n.t.OID[:], []byte(id))
		n.t.Dirty = false
	}
	return nil
}

// zlibWriters are reused: a new writer allocates over half a megabyte.
// Objects are compressed at zlib's fastest level (git reads any level).
var zlibWriters = sync.Pool{New: func() any {
	z, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return z
}}

// writeObject stores a loose object (zlib, as git does) and returns its
// id; an object already stored loose is not written again.
func (r *Repo) writeObject(kind string, data []byte) (string, error) {
	hdr := fmt.Sprintf("%s %d\x00", kind, len(data))
	id := gitindex.ObjectID(kind, data)
	dir := filepath.Join(r.GitDir(), "objects", id[:2])
	final := filepath.Join(dir, id[2:])
	if _, err := os.Stat(final); err == nil {
		return id, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return "", err
	}
	z := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(z)
	z.Reset(tmp)
	z.Write([]byte(hdr))
	z.Write(data)
	err = z.Close()
	if err == nil {
		err = tmp.Sync()
	}
	err = errors.Join(err, tmp.Close())
	if err == nil {
		os.Chmod(tmp.Name(), 0o444)
		err = fsx.Rename(tmp.Name(), final)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return id, nil
}

// commitObject is the text of a commit of tree on parent, with git's
// whitespace clean-up of the message (what `git commit -m` stores).
func (r *Repo) commitObject(tree, parent, msg string, now time.Time) []byte {
	name, email := r.author()
	who := fmt.Sprintf("%s <%s> %d %s", name, email, now.Unix(), now.Format("-0700"))
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\nparent %s\nauthor %s\ncommitter %s\n\n%s", tree, parent, who, who, CleanMessage(msg))
	return b.Bytes()
}

// CleanMessage is git's "whitespace" clean-up: trailing spaces off every
// line, runs of blank lines made one, none at either end, a final newline.
func CleanMessage(msg string) string {
	var out []string
	blank := false
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

// updateRef moves ref from old to new under git's lock file protocol
// (ref.lock made exclusively, checked, renamed over the ref).
func updateRef(gd, ref, old, next string) error {
	p := filepath.Join(gd, filepath.FromSlash(ref))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(p+".lock", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return gitindex.Slowf("%s is locked", ref)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(p + ".lock")
		}
	}()
	if cur, err := readRef(gd, ref); err != nil || cur != old {
		return gitindex.Slowf("%s moved", ref)
	}
	if _, err := f.WriteString(next + "\n"); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fsx.Rename(p+".lock", p); err != nil {
		return err
	}
	ok = true
	return nil
}

// appendReflog adds the commit to the branch's and HEAD's reflogs when
// they are kept, in git's format.
func (r *Repo) appendReflog(branch, old, next, msg string, now time.Time) {
	subject, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	r.appendReflogLine(branch, old, next, "commit: "+subject, now)
}

// appendReflogLine adds a move of branch (and HEAD) saying what to the
// reflogs that are kept.
func (r *Repo) appendReflogLine(branch, old, next, what string, now time.Time) {
	name, email := r.author()
	line := fmt.Sprintf("%s %s %s <%s> %d %s\t%s\n", old, next, name, email, now.Unix(), now.Format("-0700"), what)
	for _, p := range []string{path.Join("logs", "refs", "heads", branch), "logs/HEAD"} {
		f, err := os.OpenFile(filepath.Join(r.GitDir(), filepath.FromSlash(p)), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			continue // reflogs not kept
		}
		f.WriteString(line)
		f.Close()
	}
}
