package federation

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/federation/gitrepo"
	"github.com/memhost/memhost/host/federation/worktree"
	"github.com/memhost/memhost/internal/fsx"
)

// What a home shares. A remote is another person's machine, or a
// repository anyone with push access can write to; the home also holds
// plugins that run, settings and a bearer token. So federation shares
// the notebook's pages and the session transcripts and nothing else, and
// memhost enforces it itself, on both sides, whatever the .gitignore
// (which the remote can change) says:
//
//   - commits (commitLocked, gitrepo's FastCommit) only ever add or change shared
//     paths, as regular files (mode 100644, never an executable bit or a
//     symlink); a tracked file of any other kind can only be removed.
//     Files are read beneath the home with no symlink on their path and
//     no FIFO waited on (package worktree). The shared .gitignore neither
//     widens nor narrows this: a remote adding notebook/ to it does not
//     stop local pages from being shared; .git/info/exclude (this
//     machine's, never shared) keeps a page out;
//   - a fetched remote (checkRemote) is merged only when everything it
//     changes since the merge base is a shared path, as a regular file,
//     with no "..", ".", empty, ".git", control-character or backslash
//     component; else the sync fails with ErrRefused naming the commit,
//     the path and the reason, and nothing of it reaches the disk. The
//     tree the work tree moves to is checked again before any file is
//     written (checkMove), and a path it changes where the work tree
//     holds a FIFO, a symlink or a folder stops the sync with one line
//     naming it (gitrepo's CheckWorkTree).
//
// The shared paths are
//
//	NOTEBOOK/…/NAME.md    a page: no hidden folder or name (the indexer skips them)
//	sessions/NAME.jsonl   a transcript, or memhost's records beside them
//	.gitignore            memhost's block and the user's lines (shared; it
//	                      keeps git status tidy, never decides what is shared)
//
// NOTEBOOK is Repo.Notebook ("notebook" by default).

// ErrRefused means the remote changed something federation does not
// share (a plugin, the settings, a file outside the notebook and the
// transcripts, an executable bit, a symlink, a path with ".."): nothing
// of it is merged or pushed, and local changes go on being committed.
// Syncing stays refused until the remote no longer makes that change
// (a commit there removes it).
var ErrRefused = errors.New("the remote changed what is not shared")

// emptyTree is git's id of the tree with nothing in it (known to every
// repository without being stored).
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

const (
	sessionsDir = "sessions"
)

// notebookDir is the notebook folder, home-relative and slash-separated.
func (r *Repo) notebookDir() string {
	if r.Notebook == "" {
		return "notebook"
	}
	return strings.Trim(filepath.ToSlash(filepath.Clean(r.Notebook)), "/")
}

// CheckNotebook reports why dir (home-relative) cannot be the shared
// notebook folder: it must be a folder inside the home that holds nothing
// else memhost keeps (not the home itself, not sessions/, plugins/…).
func CheckNotebook(dir string) error {
	d := filepath.ToSlash(filepath.Clean(dir))
	if !filepath.IsLocal(dir) || d == "." {
		return fmt.Errorf("the notebook folder %q is not a folder inside the home: federation shares the notebook folder and sessions/ only", dir)
	}
	top, _, _ := strings.Cut(d, "/")
	for _, c := range strings.Split(d, "/") {
		why := componentRefusal(c)
		if why == "" && strings.HasPrefix(c, ".") {
			why = "a hidden name in the path"
		}
		if why != "" {
			return fmt.Errorf("the notebook folder %q cannot be shared: %s", dir, why)
		}
	}
	switch top {
	case sessionsDir, "brain", "cache", "models", "plugins", "health":
		return fmt.Errorf("the notebook folder %q is inside %s/, which memhost keeps for itself: federation cannot share it", dir, top)
	}
	return nil
}

// Shares reports whether federation tracks the home-relative,
// slash-separated path p (see the list above).
func (r *Repo) Shares(p string) bool { return r.pathRefusal(p) == "" }

// componentRefusal is why c cannot be a name in a shared path, "" when
// it can.
func componentRefusal(c string) string {
	switch {
	case c == "":
		return "an empty name in the path"
	case c == "." || c == "..":
		return fmt.Sprintf("a %q in the path", c)
	case strings.EqualFold(c, ".git"):
		return "a .git folder in the path"
	case strings.ContainsRune(c, '\\'):
		return "a backslash in the path"
	case strings.ContainsFunc(c, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }):
		return "a control character in the path"
	case !utf8.ValidString(c):
		return "a name that is not UTF-8"
	}
	return ""
}

// componentsRefusal checks every name of p (componentRefusal).
func componentsRefusal(p string) string {
	for _, c := range strings.Split(p, "/") {
		if why := componentRefusal(c); why != "" {
			return why
		}
	}
	return ""
}

// localOnly are the files of sessions/ that stay on their machine: which
// local file each ingested session came from (absolute paths) and the torn
// lines cut off transcripts after a crash (raw bytes kept for a person to
// look at). Flush receipts are shared, as the transcripts they are of.
var localOnly = map[string]bool{".sources.jsonl": true, ".torn-lines.jsonl": true, ".private.jsonl": true}

// pathRefusal is why p is not a shared path, "" when it is.
func (r *Repo) pathRefusal(p string) string {
	if why := componentsRefusal(p); why != "" {
		return why
	}
	nb := r.notebookDir()
	outside := fmt.Sprintf("outside the shared folders %s/ and %s/", nb, sessionsDir)
	switch {
	case p == ".gitignore":
		return ""
	case strings.HasPrefix(p, nb+"/"):
		for _, c := range strings.Split(p[len(nb)+1:], "/") {
			if strings.HasPrefix(c, ".") {
				return "a hidden name in the notebook, which is not a page"
			}
		}
		if !strings.EqualFold(path.Ext(p), ".md") {
			return "not a markdown page (.md) in the notebook"
		}
		return ""
	case strings.HasPrefix(p, sessionsDir+"/"):
		rest := p[len(sessionsDir)+1:]
		if strings.Contains(rest, "/") {
			return "a folder in sessions/, which holds transcripts only"
		}
		if !strings.HasSuffix(rest, ".jsonl") || rest == ".jsonl" {
			return "not a transcript (.jsonl) in sessions/"
		}
		if localOnly[rest] {
			return "a record of this machine's (local paths, bytes cut off after a crash), never shared"
		}
		return ""
	}
	return outside
}

// modeRefusal is why a file of git mode m cannot be shared, "" for a
// regular file (or none: a removal).
func modeRefusal(m uint32) string {
	switch m {
	case 0, gitrepo.ModeFile:
		return ""
	case 0o100755:
		return "an executable file, mode 100755; only regular files (100644) are shared"
	case 0o120000:
		return "a symlink, mode 120000; only regular files (100644) are shared"
	case 0o160000:
		return "a submodule, mode 160000; only regular files (100644) are shared"
	}
	return fmt.Sprintf("mode %06o; only regular files (100644) are shared", m)
}

// changeRefusal is why a remote may not make change c, "" when it may.
// A folder entry (diff-tree -t) is checked for its names only: the files
// in it are checked one by one.
func (r *Repo) changeRefusal(c gitrepo.TreeChange) string {
	if c.NewMode == gitrepo.ModeTree || c.OldMode == gitrepo.ModeTree && c.NewMode == 0 {
		return componentsRefusal(c.Path)
	}
	if why := r.pathRefusal(c.Path); why != "" {
		return why
	}
	return modeRefusal(c.NewMode)
}

// checkRemote refuses theirs unless everything it changes is shared: the
// changes from each merge base of head and theirs (the empty tree when
// they share no history) to theirs. A change that leaves a path as head
// has it already is let through (it writes nothing: a file both sides
// removed, a .gitignore both sides hold), unless its path is malformed.
func (r *Repo) checkRemote(ctx context.Context, head, theirs string) error {
	// Nothing new: the remote tip is the one merged (and checked) last.
	if seen, err := r.g().Rev(ctx, seenRef); err != nil || seen == theirs || head == theirs {
		return err
	}
	bases := []string{emptyTree}
	if head != "" {
		out, err := r.Git(ctx, "merge-base", "--all", head, theirs)
		if err != nil && gitrepo.ExitCode(err) != 1 {
			return err
		}
		if f := strings.Fields(out); len(f) > 0 {
			bases = f
		}
	}
	for _, base := range bases {
		changes, err := r.g().RawDiff(ctx, base, theirs, true)
		if err != nil {
			return err
		}
		var bad []gitrepo.TreeChange
		var why []string
		for _, c := range changes {
			w := r.changeRefusal(c)
			if w == "" && r.Private != nil && c.NewOID != "" && c.NewMode != gitrepo.ModeTree {
				if data, err := r.Git(ctx, "cat-file", "blob", c.NewOID); err == nil && r.Private(c.Path, []byte(data)) {
					w = "a private page or session, which never leaves its machine"
				}
			}
			if w == "" {
				continue
			}
			if head != "" && componentsRefusal(c.Path) == "" && c.NewMode != gitrepo.ModeTree && c.OldMode != gitrepo.ModeTree {
				if same, err := r.sameAt(ctx, head, theirs, c.Path); err != nil {
					return err
				} else if same {
					continue
				}
			}
			bad, why = append(bad, c), append(why, w)
		}
		if len(bad) > 0 {
			return r.refusal(ctx, head, theirs, bad, why)
		}
	}
	return nil
}

// sameAt reports whether commits a and b hold the same entry at p (or
// both none).
func (r *Repo) sameAt(ctx context.Context, a, b, p string) (bool, error) {
	out, err := r.Git(ctx, "diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b, "--", ":(literal)"+p)
	return strings.TrimSpace(out) == "", err
}

// refusal is the error for the refused changes (bad[0] named, the
// number of others told): which remote commit made the change, what it
// does, why it is refused.
func (r *Repo) refusal(ctx context.Context, head, theirs string, bad []gitrepo.TreeChange, why []string) error {
	c := bad[0]
	commit, verb := r.introducedBy(ctx, head, theirs, c)
	more := ""
	if n := len(bad) - 1; n == 1 {
		more = " (and 1 more change)"
	} else if n > 1 {
		more = fmt.Sprintf(" (and %d more changes)", n)
	}
	return &fault.Error{Kind: fault.Conflict, Field: "remote", Err: ErrRefused,
		Message: fmt.Sprintf("remote commit %s %s %s (%s)%s: refused; nothing of it was merged, local changes are kept and committed", gitrepo.Short(commit), verb, worktree.ShowPath(c.Path), why[0], more)}
}

// introducedBy finds the oldest remote commit (not in head) that makes
// change c, for the message; theirs itself when none is found in the
// first hundred that touch its top folder.
func (r *Repo) introducedBy(ctx context.Context, head, theirs string, c gitrepo.TreeChange) (string, string) {
	args := []string{"rev-list", "--reverse", "--topo-order", "--no-merges", theirs}
	if head != "" {
		args = append(args, "--not", head)
	}
	top, _, _ := strings.Cut(c.Path, "/")
	if componentRefusal(top) == "" {
		args = append(args, "--", ":(literal)"+top)
	}
	out, err := r.Git(ctx, args...)
	if err != nil {
		return theirs, verb(c)
	}
	ids := strings.Fields(out)
	for i, id := range ids {
		if i == 100 {
			break
		}
		parent := emptyTree
		if p, err := r.g().Rev(ctx, id+"^1"); err == nil && p != "" {
			parent = p
		}
		changes, err := r.g().RawDiff(ctx, parent, id, true)
		if err != nil {
			continue
		}
		for _, x := range changes {
			if x.Path == c.Path && x.NewMode == c.NewMode && x.NewOID == c.NewOID {
				return id, verb(x)
			}
		}
	}
	return theirs, verb(c)
}

// checkMove refuses to move the work tree from head to target (the
// remote's commit or the merge made with it) if anything that changes
// on the way is not shared: the last check before files are written,
// whatever made target. It returns the changes.
func (r *Repo) checkMove(ctx context.Context, head, target string) ([]gitrepo.TreeChange, error) {
	from := head
	if from == "" {
		from = emptyTree
	}
	changes, err := r.g().RawDiff(ctx, from, target, true)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		if why := r.changeRefusal(c); why != "" {
			return nil, &fault.Error{Kind: fault.Conflict, Field: "remote", Err: ErrRefused,
				Message: fmt.Sprintf("the merge with the remote (%s) %s %s (%s): refused; nothing of it was merged, local changes are kept and committed", gitrepo.Short(target), verb(c), worktree.ShowPath(c.Path), why)}
		}
	}
	return changes, nil
}

// shareable keeps the paths a commit may record: shared paths that are
// regular files on disk (or gone: removed), and any tracked path that is
// gone (a removal only ever narrows what is shared). A symlink, a folder
// or a FIFO at a shared path, or a symlink on its way (worktree.KindAt), is left
// out: its tracked version stays.
func (r *Repo) shareable(home *fsx.Dir, paths []string) []string {
	var out []string
	for _, p := range gitrepo.Dedupe(paths) {
		if componentsRefusal(p) != "" {
			continue
		}
		switch kind, _, err := worktree.KindAt(home, p); {
		case err != nil:
		case kind == worktree.KindGone:
			out = append(out, p) // removed: recorded if tracked
		case kind == worktree.KindRegular && r.Shares(p):
			out = append(out, p)
		}
	}
	return out
}

func isRefused(err error) bool { return errors.Is(err, ErrRefused) }

// verb says what a change does to its path.
func verb(c gitrepo.TreeChange) string {
	switch {
	case c.OldOID == "" && c.OldMode == 0:
		return "adds"
	case c.NewOID == "" && c.NewMode == 0:
		return "deletes"
	case c.OldMode != c.NewMode && c.OldMode != 0 && c.NewMode != 0:
		return "changes the mode of"
	}
	return "changes"
}
