package federation

import (
	"bufio"
	"bytes"
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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memhost/memhost/internal/fsx"
)

// fastForward moves the branch and the work tree from head to target, a
// descendant of head, touching only the files that differ between them:
// `git merge --ff-only` refreshes every entry of the index and compares
// whole trees (a third of a second at 10k pages), this reads the changed
// blobs with one `git cat-file --batch` and rewrites the index itself
// (BenchmarkPullChanged).
//
// The new index is built first and its tree must be target's tree, or
// nothing is touched (errSlowPath). A changed file edited locally since
// head is errDirty, as with git. It applies where fastCommit does, with
// the index holding head's tree.
func (r *Repo) fastForward(ctx context.Context, head, target string, now time.Time) error {
	gd := r.gitDir()
	if err := r.fastPathAllowed(); err != nil {
		return err
	}
	branch, err := headBranch(gd)
	if err != nil {
		return err
	}
	if cur, err := readRef(gd, "refs/heads/"+branch); err != nil || cur != head {
		return slowf("HEAD is not %s", short(head))
	}
	changes, err := r.diffTree(ctx, head, target)
	if err != nil {
		return err
	}
	idx, err := lockIndex(gd)
	if err != nil {
		return err
	}
	defer idx.release()
	// The commits and the new blobs, in one process.
	want := []string{head, target}
	for _, c := range changes {
		if c.newOID != "" {
			want = append(want, c.newOID)
		}
	}
	objs, err := r.catFileBatch(ctx, want)
	if err != nil {
		return err
	}
	headTree, err := treeOf(objs[head])
	if err != nil {
		return err
	}
	targetTree, err := treeOf(objs[target])
	if err != nil {
		return err
	}
	if headTree != hex.EncodeToString(idx.tree.oid[:]) {
		return slowf("the index is not HEAD's tree")
	}
	// Local edits since head are never overwritten.
	home, err := r.openHome()
	if err != nil {
		return err
	}
	defer home.Close()
	for _, c := range changes {
		if err := r.unchangedSince(home, idx.gitIndex, c); err != nil {
			return err
		}
	}
	// The new index, checked against target's tree before any file moves.
	for _, c := range changes {
		if err := applyToIndex(idx.gitIndex, c); err != nil {
			return err
		}
	}
	pruneEmpty(idx.tree)
	if err := r.writeTrees(idx.gitIndex, false); err != nil {
		return err
	}
	if got := hex.EncodeToString(idx.tree.oid[:]); got != targetTree {
		return slowf("the index built for %s has tree %s, the commit %s", short(target), short(got), short(targetTree))
	}
	// The work tree, then the branch, then the index.
	for _, c := range changes {
		if err := r.applyToWorkTree(home, idx.gitIndex, c, objs[c.newOID]); err != nil {
			// Files written so far hold target's content: the next sync
			// commits them as local changes, identical to theirs.
			return err
		}
	}
	// target's commit is stored loose as well, so that the next
	// fastCommit can read its tree.
	if _, err := r.writeObject("commit", objs[target]); err != nil {
		return err
	}
	if err := updateRef(gd, "refs/heads/"+branch, head, target); err != nil {
		return err
	}
	r.appendReflogLine(branch, head, target, "merge "+target+": Fast-forward", now)
	idx.write()
	return nil
}

// treeChange is one file that differs between two commits.
type treeChange struct {
	path           string
	oldMode        uint32
	newMode        uint32
	oldOID, newOID string // "" for none
}

// diffTree lists the files that differ between two commits, all regular
// files at paths git stores (else errSlowPath).
func (r *Repo) diffTree(ctx context.Context, a, b string) ([]treeChange, error) {
	changes, err := r.rawDiff(ctx, a, b, false)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		for _, m := range []uint32{c.oldMode, c.newMode} {
			if m != 0 && m != 0o100644 && m != 0o100755 {
				return nil, slowf("%s is not a regular file", c.path)
			}
		}
		if !validPath(c.path) {
			return nil, slowf("%q is not a path memhost writes", c.path)
		}
	}
	return changes, nil
}

// rawDiff lists what differs between two trees (or commits), as git
// diff-tree -r reports it; with trees, the folders that differ too
// (mode 040000), so that a folder's name is seen even with nothing in it.
func (r *Repo) rawDiff(ctx context.Context, a, b string, trees bool) ([]treeChange, error) {
	args := []string{"diff-tree", "-r", "-z", "--no-renames"}
	if trees {
		args = append(args, "-t")
	}
	out, err := r.Git(ctx, append(args, a, b)...)
	if err != nil {
		return nil, err
	}
	var changes []treeChange
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta, p := fields[i], fields[i+1]
		f := strings.Fields(strings.TrimPrefix(meta, ":"))
		if len(f) != 5 {
			return nil, fmt.Errorf("git diff-tree: unexpected output %q", meta)
		}
		om, err1 := strconv.ParseUint(f[0], 8, 32)
		nm, err2 := strconv.ParseUint(f[1], 8, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("git diff-tree: unexpected output %q", meta)
		}
		c := treeChange{path: p, oldMode: uint32(om), newMode: uint32(nm)}
		if !allZeroHex(f[2]) {
			c.oldOID = f[2]
		}
		if !allZeroHex(f[3]) {
			c.newOID = f[3]
		}
		changes = append(changes, c)
	}
	return changes, nil
}

func allZeroHex(s string) bool { return strings.Trim(s, "0") == "" }

// catFileBatch reads objects by id through one `git cat-file --batch`.
func (r *Repo) catFileBatch(ctx context.Context, ids []string) (map[string][]byte, error) {
	in := strings.Join(ids, "\n") + "\n"
	out, err := r.gitIO(ctx, strings.NewReader(in), nil, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	objs := make(map[string][]byte, len(ids))
	br := bufio.NewReader(bytes.NewReader(out))
	for range ids {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("git cat-file: %s", strings.TrimSpace(line))
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("git cat-file: %s", strings.TrimSpace(line))
		}
		data := make([]byte, size+1)
		if _, err := io.ReadFull(br, data); err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		objs[f[0]] = data[:size]
	}
	return objs, nil
}

// treeOf is the tree a commit object names.
func treeOf(commit []byte) (string, error) {
	t, ok := bytes.CutPrefix(commit, []byte("tree "))
	if !ok || len(t) < 2*oidLen {
		return "", errors.New("not a commit object")
	}
	return string(t[:2*oidLen]), nil
}

// unchangedSince checks that the work tree still holds what head held at
// a path that target changes: the file git tracks, unedited, or no file
// where target adds one (or the very file target adds). The file is read
// beneath home with no symlink followed on its path and no FIFO waited
// on: one of them there (swapped in since apply looked) is the sync's
// one-line error, not a retry.
func (r *Repo) unchangedSince(home *fsx.Dir, idx *gitIndex, c treeChange) error {
	data, err := home.ReadFile(c.path, fsx.NoLinks)
	var nr *fsx.NotRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		if c.oldOID == "" {
			return nil
		}
		return errDirty // deleted locally
	case errors.As(err, &nr):
		return notRegularError(c.path, fsx.KindName(nr.Mode))
	case errors.Is(err, fsx.ErrSymlink):
		return notRegularError(c.path, "a symlink is on its path")
	case err != nil:
		return slowf("%s: %v", c.path, err)
	}
	id := blobID(data)
	switch {
	case c.oldOID == "" && id == c.newOID:
		return nil // already there (an earlier interrupted fast-forward)
	case c.oldOID == "":
		return errDirty // an untracked file where target adds one
	case id != c.oldOID:
		if id == c.newOID {
			return nil
		}
		return errDirty
	}
	if i := idx.find(c.path); i < 0 || hex.EncodeToString(idx.entries[i].oid()) != c.oldOID {
		return slowf("the index does not hold HEAD's %s", c.path)
	}
	return nil
}

// blobID is the object id of a blob holding data.
func blobID(data []byte) string {
	return objectID("blob", data)
}

// applyToIndex changes, adds or removes a path's entry and marks its
// folders (made or removed as needed) for writing.
func applyToIndex(idx *gitIndex, c treeChange) error {
	i := idx.find(c.path)
	switch {
	case c.newOID == "": // removed
		if i < 0 {
			return slowf("%s is not in the index", c.path)
		}
		idx.entries = slices.Delete(idx.entries, i, i+1)
		return adjustTree(idx.tree, c.path, -1)
	case i >= 0: // changed
		e := &idx.entries[i]
		hex.Decode(e.oid(), []byte(c.newOID))
		binary.BigEndian.PutUint32(e.fixed[24:], c.newMode)
		clear(e.fixed[:24]) // stat data: set once the file is written
		clear(e.fixed[28:40])
		return adjustTree(idx.tree, c.path, 0)
	default: // added
		if j := sort.Search(len(idx.entries), func(k int) bool { return idx.entries[k].path >= c.path+"/" }); j < len(idx.entries) && strings.HasPrefix(idx.entries[j].path, c.path+"/") {
			return slowf("%s is a folder in the index", c.path)
		}
		var e indexEntry
		e.path = c.path
		binary.BigEndian.PutUint32(e.fixed[24:], c.newMode)
		hex.Decode(e.oid(), []byte(c.newOID))
		binary.BigEndian.PutUint16(e.fixed[60:], uint16(min(len(c.path), nameMask)))
		i = sort.Search(len(idx.entries), func(k int) bool { return idx.entries[k].path >= c.path })
		idx.entries = slices.Insert(idx.entries, i, e)
		return adjustTree(idx.tree, c.path, 1)
	}
}

// adjustTree marks the folders of p dirty and adds delta to their counts,
// making the nodes of new folders.
func adjustTree(root *cacheTree, p string, delta int) error {
	dirs := strings.Split(p, "/")
	t := root
	for k := 0; ; k++ {
		if t.count < 0 {
			return slowf("no cache tree for the folder of %s", p)
		}
		t.dirty = true
		t.count += delta
		if k == len(dirs)-1 {
			return nil
		}
		s := t.sub(dirs[k])
		if s == nil {
			s = &cacheTree{name: dirs[k]}
			t.subs = append(t.subs, s)
		}
		t = s
	}
}

// pruneEmpty drops the nodes of folders left without files.
func pruneEmpty(t *cacheTree) {
	t.subs = slices.DeleteFunc(t.subs, func(s *cacheTree) bool { return s.count == 0 })
	for _, s := range t.subs {
		pruneEmpty(s)
	}
}

// applyToWorkTree writes (atomically) or removes one file and records
// its stat data in its entry. The file's folder is opened beneath home
// with no symlink on the way (made when missing), and the file renamed
// into it by name: nothing is written or removed through a symlink, even
// one swapped in since checkWorkTree looked.
func (r *Repo) applyToWorkTree(home *fsx.Dir, idx *gitIndex, c treeChange, data []byte) error {
	dir, name := path.Split(c.path)
	dir = strings.TrimSuffix(dir, "/")
	if c.newOID == "" {
		parent, err := home.Sub(dir, false)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		defer parent.Close()
		if err := parent.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		// Folders left empty go too, as git removes them.
		full := filepath.Join(r.Dir, filepath.FromSlash(c.path))
		for d := filepath.Dir(full); d != r.Dir && strings.HasPrefix(d, r.Dir); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				break
			}
		}
		return nil
	}
	parent, err := home.Sub(dir, true)
	if err != nil {
		return err
	}
	defer parent.Close()
	// Never an executable bit (checkMove refuses a target that has one).
	perm := os.FileMode(0o644)
	// Made inside .git (the same file system), so that a killed memhost
	// leaves no stray file in the work tree for the next commit to take.
	tmpDir := filepath.Join(r.gitDir(), "memhost", "tmp")
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return err
	}
	tmps, err := fsx.OpenDir(tmpDir)
	if err != nil {
		return err
	}
	defer tmps.Close()
	tmp, err := os.CreateTemp(tmpDir, "ff-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		// Flushed before it takes the name: a crash must not leave the
		// page empty, which git would read as the person's edit and commit.
		err = tmp.Sync()
	}
	err = errors.Join(err, tmp.Close())
	if err == nil {
		err = tmps.Rename(filepath.Base(tmp.Name()), parent, name)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	// The rename made durable before the index records the new stat.
	if err := parent.Sync(); err != nil {
		return fmt.Errorf("flushing %s: %w", parent.Name(), err)
	}
	f, err := parent.Open(name, fsx.NoLinks)
	if err != nil {
		return err
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if i := idx.find(c.path); i >= 0 {
		putStat(&idx.entries[i], &st)
	}
	return nil
}
