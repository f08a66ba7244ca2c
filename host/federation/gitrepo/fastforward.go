package gitrepo

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

	"github.com/memhost/memhost/host/federation/gitrepo/gitindex"
	"github.com/memhost/memhost/host/federation/worktree"
	"github.com/memhost/memhost/internal/fsx"
)

// FastForward moves the branch and the work tree from head to target, a
// descendant of head, touching only the files that differ between them:
// `git merge --ff-only` refreshes every entry of the index and compares
// whole trees (a third of a second at 10k pages), this reads the changed
// blobs with one `git cat-file --batch` and rewrites the index itself
// (BenchmarkPullChanged).
//
// The new index is built first and its tree must be target's tree, or
// nothing is touched (gitindex.ErrSlowPath). A changed file edited locally since
// head is ErrDirty, as with git. It applies where FastCommit does, with
// the index holding head's tree.
func (r *Repo) FastForward(ctx context.Context, head, target string, now time.Time) error {
	gd := r.GitDir()
	if err := r.fastPathAllowed(); err != nil {
		return err
	}
	branch, err := HeadBranch(gd)
	if err != nil {
		return err
	}
	if cur, err := readRef(gd, "refs/heads/"+branch); err != nil || cur != head {
		return gitindex.Slowf("HEAD is not %s", Short(head))
	}
	changes, err := r.diffTree(ctx, head, target)
	if err != nil {
		return err
	}
	idx, err := gitindex.Lock(gd)
	if err != nil {
		return err
	}
	defer idx.Release()
	// The commits and the new blobs, in one process.
	want := []string{head, target}
	for _, c := range changes {
		if c.NewOID != "" {
			want = append(want, c.NewOID)
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
	if headTree != hex.EncodeToString(idx.Tree.OID[:]) {
		return gitindex.Slowf("the index is not HEAD's tree")
	}
	// Local edits since head are never overwritten.
	home, err := r.OpenHome()
	if err != nil {
		return err
	}
	defer home.Close()
	for _, c := range changes {
		if err := r.unchangedSince(home, idx.Index, c); err != nil {
			return err
		}
	}
	// The new index, checked against target's tree before any file moves.
	for _, c := range changes {
		if err := applyToIndex(idx.Index, c); err != nil {
			return err
		}
	}
	gitindex.PruneEmpty(idx.Tree)
	if err := r.writeTrees(idx.Index, false); err != nil {
		return err
	}
	if got := hex.EncodeToString(idx.Tree.OID[:]); got != targetTree {
		return gitindex.Slowf("the index built for %s has tree %s, the commit %s", Short(target), Short(got), Short(targetTree))
	}
	// The work tree, then the branch, then the index.
	for _, c := range changes {
		if err := r.applyToWorkTree(home, idx.Index, c, objs[c.NewOID]); err != nil {
			// Files written so far hold target's content: the next sync
			// commits them as local changes, identical to theirs.
			return err
		}
	}
	// target's commit is stored loose as well, so that the next
	// FastCommit can read its tree.
	if _, err := r.writeObject("commit", objs[target]); err != nil {
		return err
	}
	if err := updateRef(gd, "refs/heads/"+branch, head, target); err != nil {
		return err
	}
	r.appendReflogLine(branch, head, target, "merge "+target+": Fast-forward", now)
	smudgeRacy(home, idx)
	idx.Write()
	return nil
}

// TreeChange is one file that differs between two commits.
type TreeChange struct {
	Path           string
	OldMode        uint32
	NewMode        uint32
	OldOID, NewOID string // "" for none
}

// diffTree lists the files that differ between two commits, all regular
// files at paths git stores (else gitindex.ErrSlowPath).
func (r *Repo) diffTree(ctx context.Context, a, b string) ([]TreeChange, error) {
	changes, err := r.RawDiff(ctx, a, b, false)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		for _, m := range []uint32{c.OldMode, c.NewMode} {
			if m != 0 && m != 0o100644 && m != 0o100755 {
				return nil, gitindex.Slowf("%s is not a regular file", c.Path)
			}
		}
		if !validPath(c.Path) {
			return nil, gitindex.Slowf("%q is not a path memhost writes", c.Path)
		}
	}
	return changes, nil
}

// RawDiff lists what differs between two trees (or commits), as git
// diff-tree -r reports it; with trees, the folders that differ too
// (mode 040000), so that a folder's name is seen even with nothing in it.
func (r *Repo) RawDiff(ctx context.Context, a, b string, trees bool) ([]TreeChange, error) {
	args := []string{"diff-tree", "-r", "-z", "--no-renames"}
	if trees {
		args = append(args, "-t")
	}
	out, err := r.Git(ctx, append(args, a, b)...)
	if err != nil {
		return nil, err
	}
	var changes []TreeChange
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
		c := TreeChange{Path: p, OldMode: uint32(om), NewMode: uint32(nm)}
		if !allZeroHex(f[2]) {
			c.OldOID = f[2]
		}
		if !allZeroHex(f[3]) {
			c.NewOID = f[3]
		}
		changes = append(changes, c)
	}
	return changes, nil
}

func allZeroHex(s string) bool { return strings.Trim(s, "0") == "" }

// catFileBatch reads objects by id through one `git cat-file --batch`.
func (r *Repo) catFileBatch(ctx context.Context, ids []string) (map[string][]byte, error) {
	in := strings.Join(ids, "\n") + "\n"
	out, err := r.GitIO(ctx, strings.NewReader(in), nil, "cat-file", "--batch")
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
	if !ok || len(t) < 2*gitindex.OIDLen {
		return "", errors.New("not a commit object")
	}
	return string(t[:2*gitindex.OIDLen]), nil
}

// unchangedSince checks that the work tree still holds what head held at
// a path that target changes: the file git tracks, unedited, or no file
// where target adds one (or the very file target adds). The file is read
// beneath home with no symlink followed on its path and no FIFO waited
// on: one of them there (swapped in since apply looked) is the sync's
// one-line error, not a retry.
func (r *Repo) unchangedSince(home *fsx.Dir, idx *gitindex.Index, c TreeChange) error {
	data, err := home.ReadFile(c.Path, fsx.NoLinks)
	var nr *fsx.NotRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		if c.OldOID == "" {
			return nil
		}
		return ErrDirty // deleted locally
	case errors.As(err, &nr):
		return worktree.NotRegularError(c.Path, fsx.KindName(nr.Mode))
	case errors.Is(err, fsx.ErrSymlink):
		return worktree.NotRegularError(c.Path, "a symlink is on its path")
	case err != nil:
		return gitindex.Slowf("%s: %v", c.Path, err)
	}
	id := BlobID(data)
	switch {
	case c.OldOID == "" && id == c.NewOID:
		return nil // already there (an earlier interrupted fast-forward)
	case c.OldOID == "":
		return ErrDirty // an untracked file where target adds one
	case id != c.OldOID:
		if id == c.NewOID {
			return nil
		}
		return ErrDirty
	}
	if i := idx.Find(c.Path); i < 0 || hex.EncodeToString(idx.Entries[i].OID()) != c.OldOID {
		return gitindex.Slowf("the index does not hold HEAD's %s", c.Path)
	}
	return nil
}

// BlobID is the object id of a blob holding data.
func BlobID(data []byte) string {
	return gitindex.ObjectID("blob", data)
}

// applyToIndex changes, adds or removes a path's entry and marks its
// folders (made or removed as needed) for writing.
func applyToIndex(idx *gitindex.Index, c TreeChange) error {
	i := idx.Find(c.Path)
	switch {
	case c.NewOID == "": // removed
		if i < 0 {
			return gitindex.Slowf("%s is not in the index", c.Path)
		}
		idx.Entries = slices.Delete(idx.Entries, i, i+1)
		return gitindex.AdjustTree(idx.Tree, c.Path, -1)
	case i >= 0: // changed
		e := &idx.Entries[i]
		hex.Decode(e.OID(), []byte(c.NewOID))
		binary.BigEndian.PutUint32(e.Fixed[24:], c.NewMode)
		clear(e.Fixed[:24]) // stat data: set once the file is written
		clear(e.Fixed[28:40])
		return gitindex.AdjustTree(idx.Tree, c.Path, 0)
	default: // added
		if j := sort.Search(len(idx.Entries), func(k int) bool { return idx.Entries[k].Path >= c.Path+"/" }); j < len(idx.Entries) && strings.HasPrefix(idx.Entries[j].Path, c.Path+"/") {
			return gitindex.Slowf("%s is a folder in the index", c.Path)
		}
		var e gitindex.Entry
		e.Path = c.Path
		binary.BigEndian.PutUint32(e.Fixed[24:], c.NewMode)
		hex.Decode(e.OID(), []byte(c.NewOID))
		binary.BigEndian.PutUint16(e.Fixed[60:], uint16(min(len(c.Path), gitindex.NameMask)))
		i = sort.Search(len(idx.Entries), func(k int) bool { return idx.Entries[k].Path >= c.Path })
		idx.Entries = slices.Insert(idx.Entries, i, e)
		return gitindex.AdjustTree(idx.Tree, c.Path, 1)
	}
}

// applyToWorkTree writes (atomically) or removes one file and records
// its stat data in its entry. The file's folder is opened beneath home
// with no symlink on the way (made when missing), and the file renamed
// into it by name: nothing is written or removed through a symlink, even
// one swapped in since CheckWorkTree looked.
func (r *Repo) applyToWorkTree(home *fsx.Dir, idx *gitindex.Index, c TreeChange, data []byte) error {
	dir, name := path.Split(c.Path)
	dir = strings.TrimSuffix(dir, "/")
	if c.NewOID == "" {
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
		full := filepath.Join(r.Dir, filepath.FromSlash(c.Path))
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
	perm := os.FileMode(0o600)
	// Made inside .git (the same file system), so that a killed memhost
	// leaves no stray file in the work tree for the next commit to take.
	tmpDir := filepath.Join(r.GitDir(), "memhost", "tmp")
	if err := os.MkdirAll(tmpDir, 0o700); err != nil {
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
	if i := idx.Find(c.Path); i >= 0 {
		gitindex.PutStat(&idx.Entries[i], &st)
	}
	return nil
}
