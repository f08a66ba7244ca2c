// Package notebook reads and writes the markdown pages that are memhost's
// source of truth.
//
// Every path is relative to the notebook root and checked before use: "..",
// absolute paths and symlinks that lead out of the notebook are refused, and
// so are paths that could not be listed or found as a page: names with
// control characters, hidden names (which the indexer skips) and folders.
// Every write goes to a temporary file in the page's folder and is renamed
// over the page, so an error never leaves a truncated page behind. Updates
// (read, change, write) hold an exclusive lock on a lock file, so two
// memhost processes adding to one page at once both land.
package notebook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memhost/memhost/host/fault"
)

var (
	// ErrNotFound means the page does not exist.
	ErrNotFound = errors.New("no such page")
	// ErrOutsideNotebook means a path leads out of the notebook.
	ErrOutsideNotebook = errors.New("path is outside the notebook")
	// ErrBadPath means a path cannot name a page.
	ErrBadPath = errors.New("invalid page path")
)

// PathError names the page a path error is about.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Err.Error() + ": " + ShowPath(e.Path) }
func (e *PathError) Unwrap() error { return e.Err }

// ShowPath returns a path as messages show it: as it is, or quoted with
// escapes when it holds a character that would not print as itself (a line
// break, a tab, bytes that are not UTF-8), so that an error about it stays
// one readable line.
func ShowPath(p string) string {
	if !utf8.ValidString(p) || strings.IndexFunc(p, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		return strconv.Quote(p)
	}
	return p
}

// badPath is a bad-input error about the page path p, for field "path".
func badPath(p, format string, args ...any) error {
	return &PathError{p, fault.BadInputf("path", "%w: "+format, append([]any{ErrBadPath}, args...)...)}
}

// CheckName checks one name of a page path (a page or folder name, without
// slashes) for what Clean refuses: control characters and hidden names.
func CheckName(name string) error {
	switch {
	case strings.ContainsFunc(name, controlChar):
		return errControl
	case strings.HasPrefix(name, "."):
		return errHidden
	}
	return nil
}

var (
	errControl = errors.New("it holds a line break, a tab or another control character")
	errSpace   = errors.New("a name in it starts or ends with white space")
	errHidden  = errors.New("it is hidden (a name starting with \".\"), and hidden files and folders are not indexed")
)

// controlChar reports a character a page or section name must not hold:
// control characters (line breaks, tabs, escapes) and the Unicode line and
// paragraph separators. Such a name breaks the one-line-per-page output of
// recall and files, and in a heading it starts a new line.
func controlChar(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// FaultKind tells the error's kind: not-found, outside or bad-input.
func (e *PathError) FaultKind() fault.Kind {
	var k fault.Kinded
	switch {
	case errors.As(e.Err, &k): // a cause that knows its kind (an error from a server)
		return k.FaultKind()
	case errors.Is(e.Err, ErrNotFound):
		return fault.NotFound
	case errors.Is(e.Err, ErrOutsideNotebook):
		return fault.Outside
	case errors.Is(e.Err, ErrBadPath):
		return fault.BadInput
	}
	return fault.Internal
}

// Notebook is a folder of markdown pages. It is safe for concurrent use.
type Notebook struct {
	root     string // absolute, symlinks resolved
	lockPath string
	mu       sync.Mutex // serialises updates within this process; flock does it across processes
}

// Open returns the notebook at root, creating root and its standard folders
// when missing. lockPath is the file that serialises updates across
// processes; it should live outside the notebook.
func Open(root, lockPath string) (*Notebook, error) {
	for _, dir := range []string{"", "lists", "reference", "knowledge", "daily"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			return nil, fmt.Errorf("notebook %s: %w", root, err)
		}
	}
	abs, err := filepath.Abs(root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("notebook %s: %w", root, err)
	}
	return &Notebook{root: abs, lockPath: lockPath}, nil
}

// Root is the notebook's absolute path.
func (n *Notebook) Root() string { return n.root }

// Clean checks a page path given by a user and returns it in canonical form:
// slash-separated, relative to the root, ending in ".md" (added when the
// path has no extension).
func (n *Notebook) Clean(p string) (string, error) {
	orig := p
	p = strings.TrimSpace(p)
	if p == "" {
		return "", &PathError{orig, ErrBadPath}
	}
	if strings.ContainsFunc(p, controlChar) {
		return "", badPath(orig, "%v", errControl)
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return "", &PathError{orig, ErrOutsideNotebook}
	}
	p = filepath.ToSlash(p)
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", &PathError{orig, ErrOutsideNotebook}
		}
	}
	// "knowledge/" would otherwise clean to "knowledge" and become the page
	// knowledge.md: the caller named a folder.
	folder := strings.HasSuffix(p, "/")
	p = path.Clean(p)
	if p == "." {
		return "", badPath(orig, "it names the notebook folder, not a page")
	}
	if folder {
		return "", badPath(orig, "it names a folder, not a page (give a page such as %s/notes.md)", p)
	}
	// What follows checks the cleaned path, the one returned: path.Clean
	// drops "./" and "//", which can bring a backslash or a space to the
	// front of a name ("./\\x", "./ x"), and Clean(Clean(p)) must be
	// Clean(p).
	if strings.HasPrefix(p, `\`) {
		return "", &PathError{orig, ErrOutsideNotebook}
	}
	for _, part := range strings.Split(p, "/") {
		if strings.HasPrefix(part, ".") {
			// The indexer skips hidden names (.git, .obsidian, temporary
			// files): such a page could be written but never found.
			return "", badPath(orig, "%v", errHidden)
		}
		if strings.TrimSpace(part) != part {
			// The path as a whole is trimmed, so " a.md" would name a.md
			// next time; and such names are hard to tell apart.
			return "", badPath(orig, "%v", errSpace)
		}
	}
	ext := path.Ext(p)
	switch {
	case ext == "":
		p += ".md"
	case strings.EqualFold(ext, ".md"):
	default:
		return "", &PathError{orig, fmt.Errorf("%w: pages are markdown files ending in .md", ErrBadPath)}
	}
	if err := n.checkLinks(p); err != nil {
		return "", &PathError{orig, err}
	}
	// "knowledge" names the folder, unless knowledge.md exists beside it.
	if dir := strings.TrimSuffix(p, ".md"); ext == "" && n.isDir(dir) && !n.isFile(p) {
		return "", badPath(orig, "it names a folder, not a page (give a page such as %s/notes.md)", dir)
	}
	return p, nil
}

func (n *Notebook) isDir(rel string) bool {
	fi, err := os.Stat(n.Abs(rel))
	return err == nil && fi.IsDir()
}

func (n *Notebook) isFile(rel string) bool {
	fi, err := os.Stat(n.Abs(rel))
	return err == nil && fi.Mode().IsRegular()
}

// Inside reports whether rel, a page or folder path relative to the root,
// stays inside the notebook: ErrOutsideNotebook when it leads out through
// ".." or through a symlink (in its existing part), nil otherwise. It is
// the rule the indexer's scan follows, for readers that walk folders
// themselves: a symlink is followed only when it leads inside.
func (n *Notebook) Inside(rel string) error {
	if !within(n.root, filepath.Join(n.root, filepath.FromSlash(rel))) {
		return ErrOutsideNotebook
	}
	return n.checkLinks(rel)
}

// checkLinks refuses a path whose existing part resolves outside the root
// through a symlink.
func (n *Notebook) checkLinks(rel string) error {
	full := filepath.Join(n.root, filepath.FromSlash(rel))
	// Resolve the longest existing prefix.
	p := full
	for {
		resolved, err := filepath.EvalSymlinks(p)
		if err == nil {
			if !within(n.root, resolved) {
				return ErrOutsideNotebook
			}
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		parent := filepath.Dir(p)
		if parent == p || !within(n.root, parent) {
			return nil
		}
		if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return ErrOutsideNotebook // a dangling link: do not write through it
		}
		p = parent
	}
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// Abs returns the absolute path of a cleaned page path.
func (n *Notebook) Abs(rel string) string { return filepath.Join(n.root, filepath.FromSlash(rel)) }

// Read returns a page's content.
func (n *Notebook) Read(rel string) ([]byte, error) {
	b, err := os.ReadFile(n.Abs(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &PathError{rel, ErrNotFound}
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && errors.Is(pe.Err, syscall.EISDIR) {
			return nil, &PathError{rel, fmt.Errorf("%w: it is a folder", ErrBadPath)}
		}
	}
	return b, err
}

// Update reads a page (nil and exists=false when missing), lets fn compute
// its new content, and writes it atomically, all under the update lock.
// Returning ErrUnchanged from fn leaves the page alone.
func (n *Notebook) Update(ctx context.Context, rel string, fn func(old []byte, exists bool) ([]byte, error)) error {
	unlock, err := n.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	old, err := n.Read(rel)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	data, err := fn(old, exists)
	if err != nil {
		return err
	}
	return n.writeAtomic(rel, data)
}

// ErrUnchanged may be returned by an Update function to skip the write.
var ErrUnchanged = errors.New("page unchanged")

// Remove deletes a page.
func (n *Notebook) Remove(ctx context.Context, rel string) error {
	unlock, err := n.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	fi, err := os.Lstat(n.Abs(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return &PathError{rel, ErrNotFound}
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return &PathError{rel, fmt.Errorf("%w: it is a folder", ErrBadPath)}
	}
	return os.Remove(n.Abs(rel))
}

// TempPrefix starts the name of every temporary file a write makes; the
// scanner skips such files.
const TempPrefix = ".memhost-tmp-"

// writeAtomic writes a page through a temporary file renamed into place.
// The caller holds the notebook lock, so a temporary file already in the
// folder is a dead writer's (killed before its rename) and is removed.
func (n *Notebook) writeAtomic(rel string, data []byte) error {
	full := n.Abs(rel)
	dir := filepath.Dir(full)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if stale, _ := filepath.Glob(filepath.Join(dir, TempPrefix+"*")); len(stale) > 0 {
		for _, p := range stale {
			os.Remove(p)
		}
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(full); err == nil {
		if fi.IsDir() {
			return &PathError{rel, fmt.Errorf("%w: it is a folder", ErrBadPath)}
		}
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, TempPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", rel, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, full); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", rel, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // make the rename durable; best effort
		d.Close()
	}
	return nil
}

// Leftovers lists the temporary files of page writes killed before their
// rename, anywhere in the notebook; with remove, it removes them first,
// under the notebook lock (no live writer has one then).
func (n *Notebook) Leftovers(ctx context.Context, remove bool) ([]string, error) {
	if remove {
		unlock, err := n.lock(ctx)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	var out []string
	err := filepath.WalkDir(n.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), TempPrefix) {
			if remove {
				if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// lock takes the in-process mutex and an exclusive flock on the lock file.
func (n *Notebook) lock(ctx context.Context) (func(), error) {
	n.mu.Lock()
	if err := os.MkdirAll(filepath.Dir(n.lockPath), 0o755); err != nil {
		n.mu.Unlock()
		return nil, err
	}
	f, err := os.OpenFile(n.lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		n.mu.Unlock()
		return nil, fmt.Errorf("lock %s: %w", n.lockPath, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			n.mu.Unlock()
			return nil, fmt.Errorf("lock %s: %w", n.lockPath, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			n.mu.Unlock()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		n.mu.Unlock()
	}, nil
}
