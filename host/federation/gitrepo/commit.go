package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/memhost/memhost/host/federation/worktree"
	"github.com/memhost/memhost/internal/fsx"
)

// Commit commits, on top of HEAD, the files at paths as they are on
// disk beneath home (as regular files, mode 100644; a path gone from disk
// removed) and removes the paths in remove, through a separate index
// built from HEAD's tree: nothing else the index holds (staged by hand)
// gets in, and no executable bit or symlink is recorded. Files are read
// by memhost with no symlink followed on their path and no FIFO waited on
// (worktree.ReadWorkFile; git would follow both): a symlink, a FIFO or a folder at
// a path is left out, its tracked version kept. A new file
// .git/info/exclude keeps on this machine stays out; the shared
// .gitignore is not consulted. Paths must be what the caller shares. Then the
// index is reset to the new HEAD (the work tree untouched). With
// allowEmpty a commit is made even when the tree does not change.
func (r *Repo) Commit(ctx context.Context, home *fsx.Dir, msg string, paths, remove []string, allowEmpty bool) (bool, error) {
	head, err := r.Rev(ctx, "HEAD")
	if err != nil {
		return false, err
	}
	tmp := filepath.Join(r.GitDir(), "memhost", "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return false, err
	}
	ex, err := r.Excluded(ctx, paths)
	if err != nil {
		return false, err
	}
	// Each file's content is copied into .git (git hash-object then
	// stores them all, in one process and the repository's object format).
	blobs, err := os.MkdirTemp(tmp, "blobs-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(blobs)
	var present, copies []string
	for _, p := range paths {
		if ex[p] {
			continue
		}
		data, err := worktree.ReadStable(home, p)
		switch {
		case err == nil:
			c := filepath.Join(blobs, strconv.Itoa(len(copies)))
			if err := os.WriteFile(c, data, 0o600); err != nil {
				return false, err
			}
			present, copies = append(present, p), append(copies, c)
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			remove = append(remove, p)
		case errors.Is(err, fsx.ErrSymlink), errors.Is(err, fsx.ErrNotRegular), errors.Is(err, syscall.EISDIR):
			// Not a regular file in the home: the tracked version stays.
		default:
			return false, err
		}
	}
	var lines []string
	if len(present) > 0 {
		out, err := r.GitIO(ctx, strings.NewReader(strings.Join(copies, "\n")+"\n"), nil, "hash-object", "-w", "--no-filters", "--stdin-paths")
		if err != nil {
			return false, err
		}
		oids := strings.Fields(string(out))
		if len(oids) != len(present) {
			return false, fmt.Errorf("git hash-object: %d ids for %d files", len(oids), len(present))
		}
		for i, p := range present {
			lines = append(lines, "100644 "+oids[i]+"\t"+p)
		}
	}
	for _, p := range remove {
		lines = append(lines, "0 "+strings.Repeat("0", 40)+"\t"+p)
	}
	idx, drop, err := r.TempIndex()
	if err != nil {
		return false, err
	}
	defer drop()
	env := []string{"GIT_INDEX_FILE=" + idx}
	readTree := []string{"read-tree", "--empty"}
	if head != "" {
		readTree = []string{"read-tree", head}
	}
	if _, err := r.GitIO(ctx, nil, env, readTree...); err != nil {
		return false, err
	}
	if len(lines) > 0 {
		if _, err := r.GitIO(ctx, strings.NewReader(strings.Join(lines, "\n")+"\n"), env, "update-index", "--index-info"); err != nil {
			return false, err
		}
	}
	out, err := r.GitIO(ctx, nil, env, "write-tree")
	if err != nil {
		return false, err
	}
	tree := strings.TrimSpace(string(out))
	if head != "" && !allowEmpty {
		if ht, err := r.Git(ctx, "rev-parse", head+"^{tree}"); err != nil {
			return false, err
		} else if strings.TrimSpace(ht) == tree {
			// Nothing to commit; an index an earlier commit could not
			// bring to HEAD (git held index.lock) is brought there now,
			// without reading the work tree (it may hold a FIFO).
			return false, r.IndexToHead(ctx, head, false)
		}
	}
	args := []string{"commit-tree", tree, "-F", "-"}
	if head != "" {
		args = append(args, "-p", head)
	}
	out, err = r.GitIO(ctx, strings.NewReader(CleanMessage(msg)), nil, args...)
	if err != nil {
		return false, err
	}
	commit := strings.TrimSpace(string(out))
	subject, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	if _, err := r.Git(ctx, "update-ref", "-m", "commit: "+subject, "HEAD", commit, head); err != nil {
		return false, err
	}
	if err := r.IndexToHead(ctx, commit, true); err != nil {
		return true, fmt.Errorf("commit %s made, but the index was not reset to it: %w", Short(commit), err)
	}
	return true, nil
}

// IndexToHead makes the index hold HEAD's tree (head): with refresh, its
// stat data refreshed (reset) and its cache tree whole (write-tree stores
// it), as the next fast commit needs, after a commit; without, by
// read-tree alone, which never reads the work tree, for an index found
// behind HEAD when there was nothing to commit (the next commit's reset
// refreshes it). Any git may hold index.lock for a moment (a person's git
// status, an editor's): it waits for it and tries again, since an index
// left behind HEAD reads as staged changes that no later commit cleared.
func (r *Repo) IndexToHead(ctx context.Context, head string, refresh bool) error {
	steps := [][]string{{"reset", "-q"}, {"write-tree"}}
	if !refresh {
		// Compared without the work tree and without writing an object.
		if _, err := r.Git(ctx, "diff-index", "--cached", "--quiet", head); err == nil {
			return nil
		}
		steps = [][]string{{"read-tree", head}}
	}
	var err error
	for range 5 {
		if _, err = r.WaitIndexLock(ctx); err != nil {
			return err
		}
		err = nil
		for _, args := range steps {
			if _, err = r.Git(ctx, args...); err != nil {
				break
			}
		}
		if err == nil {
			return nil
		}
	}
	return err
}

// TempIndex is the path of a private index file (GIT_INDEX_FILE) in a
// folder of its own under .git/memhost/tmp, and the function that removes
// that folder. A git killed while it wrote the index leaves its
// index.lock there, in a folder no later run uses: a fixed name
// (commit-index, merge-index) stopped every later commit or sync with
// "Unable to create ...index.lock: File exists".
func (r *Repo) TempIndex() (string, func(), error) {
	tmp := filepath.Join(r.GitDir(), "memhost", "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp(tmp, "index-")
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(dir, "index"), func() { os.RemoveAll(dir) }, nil
}
