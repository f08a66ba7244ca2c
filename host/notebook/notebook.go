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
//
// The checks are not what keeps a page inside: a folder may be swapped for
// a symlink between a check and the use. Every read and write opens its
// path beneath the notebook's root descriptor with package fsx, which
// resolves it without that window. The root itself is resolved and opened
// once, at Open (it may be a symlink the user made), and held until Close:
// each operation works on a duplicate of that descriptor, never on the
// path opened again. Before each, the path is checked to lead to the
// folder held still; when the folder there is another one (the notebook
// moved aside, or it or a folder above it replaced by a symlink), the
// operation is refused naming the folder (fault.Unavailable), rather than
// acting on a folder the user no longer sees there or on the new one,
// which the rest of memhost has not opened. Beneath it:
//   - writes (Update, Remove, Rename) never pass through a symlink: a page
//     or folder on the way that is one is bad input; Remove and Rename
//     act on a symlink page as the name it is, never on its target;
//   - reads (Read, and the indexer's scan and the context block, which
//     read through Read) follow a symlink while it leads inside the
//     notebook, as Inside says; one that leads out or dangles is refused,
//     a loop is bad input;
//   - only regular files are read or written: a FIFO, socket or device is
//     refused at once as bad input ("not a regular file (a FIFO)"), never
//     opened in a way that blocks.
package notebook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/internal/fsx"
)

var (
	// ErrNotFound means the page does not exist.
	ErrNotFound = errors.New("no such page")
	// ErrOutsideNotebook means a path leads out of the notebook.
	ErrOutsideNotebook = errors.New("path is outside the notebook")
	// ErrBadPath means a path cannot name a page.
	ErrBadPath = errors.New("invalid page path")
	// ErrClosed means the Notebook was closed.
	ErrClosed = errors.New("the notebook is closed")
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
	if len(p) > maxShownPath { // a refused path of megabytes
		p = Shorten(p[:maxShownPath], 60)
	}
	if !utf8.ValidString(p) || strings.IndexFunc(p, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		return strconv.Quote(p)
	}
	return p
}

// badPath is a bad-input error about the page path p, for field "path".
func badPath(p, format string, args ...any) error {
	return &PathError{p, fault.BadInputf("path", "%w: "+format, append([]any{ErrBadPath}, args...)...)}
}

// maxShownPath is the longest path ShowPath shows whole (bytes).
const maxShownPath = 512

// maxName is the longest name of a page or folder, in bytes: Linux's
// NAME_MAX.
const maxName = 255

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

// CheckPath checks a page path found on disk (slash-separated, relative
// to the root) for the names Clean refuses, without touching the disk:
// control characters, hidden names, names that start or end with white
// space. A scan leaves such pages out and reports why, so that no listing
// names a page that reading it by that name would refuse.
func CheckPath(rel string) error {
	if strings.ContainsFunc(rel, controlChar) {
		return errControl
	}
	for _, part := range strings.Split(rel, "/") {
		if err := CheckName(part); err != nil {
			return err
		}
		if strings.TrimSpace(part) != part {
			return errSpace
		}
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
	// sem serialises updates within this process (a one-slot semaphore,
	// so that waiting honours a context); flock does it across processes.
	sem chan struct{}
	// mu guards dir against Close: an operation duplicates dir under the
	// read lock, so that it never duplicates a closed descriptor's number
	// (which another file may have taken since).
	mu  sync.RWMutex
	dir *fsx.Dir // the root, opened at Open; nil once closed
}

// standardFolders are the folders a notebook memhost creates starts with.
var standardFolders = []string{Lists, Reference, Knowledge, "daily"}

// Open returns the notebook at root. A missing root is created with the
// standard folders; an existing one (a folder of the user's notes) is
// left as it is: a folder appears there when a page is written into it.
// lockPath is the file that serialises updates across processes; it
// should live outside the notebook. The root is opened here and held
// until Close.
func Open(root, lockPath string) (*Notebook, error) {
	if err := create(root); err != nil {
		return nil, fmt.Errorf("notebook %s: %w", root, err)
	}
	abs, err := filepath.Abs(root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("notebook %s: %w", root, err)
	}
	dir, err := fsx.OpenDir(abs)
	if err != nil {
		return nil, fmt.Errorf("notebook %s: %w", root, err)
	}
	return &Notebook{root: abs, lockPath: lockPath, sem: make(chan struct{}, 1), dir: dir}, nil
}

// create makes a missing root and its standard folders; an existing root
// is not touched.
func create(root string) error {
	if _, err := os.Stat(root); !errors.Is(err, fs.ErrNotExist) {
		return nil // there, or unreadable: opening it says which
	}
	for _, dir := range append([]string{""}, standardFolders...) {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o700); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the notebook's root; operations after it fail with
// ErrClosed. A second Close does nothing.
func (n *Notebook) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dir == nil {
		return nil
	}
	err := n.dir.Close()
	n.dir = nil
	return err
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
	for _, part := range strings.Split(p, "/") {
		if len(part) > maxName {
			return "", badPath(orig, "a name of %d bytes; a page or folder name takes at most %d (.md included)", len(part), maxName)
		}
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

// checkLinks refuses a path whose existing part leads outside the root
// through a symlink, or dangles (ErrOutsideNotebook), or loops.
func (n *Notebook) checkLinks(rel string) error {
	d, err := n.open()
	if err != nil {
		return err
	}
	defer d.Close()
	switch err := d.Inside(rel); {
	case errors.Is(err, fsx.ErrOutside):
		return ErrOutsideNotebook
	case err != nil:
		var pe *PathError
		if errors.As(n.fault(rel, err), &pe) {
			return pe.Err
		}
		return err
	}
	return nil
}

// open returns the notebook's root folder as opened at Open (a duplicate
// of its descriptor, which the caller closes), when the notebook's path
// still leads to it.
func (n *Notebook) open() (*fsx.Dir, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.dir == nil {
		return nil, fmt.Errorf("notebook %s: %w", n.root, ErrClosed)
	}
	if err := n.dir.Here(); err != nil {
		if errors.Is(err, fsx.ErrMoved) {
			return nil, fault.Errorf(fault.Unavailable, "", "notebook %s: %w; memhost reads and writes only the folder it opened: move it back, or restart memhost serve to use the folder there now", n.root, err)
		}
		return nil, fmt.Errorf("notebook %s: %w", n.root, err)
	}
	d, err := n.dir.Dup()
	if err != nil {
		return nil, fmt.Errorf("notebook %s: %w", n.root, err)
	}
	return d, nil
}

// fault turns an error of fsx or the system about the page rel into a
// *PathError of the kind it is: not found, outside, or bad input (a
// folder, a symlink where none is followed, a loop, a FIFO or device);
// anything else is returned as it is.
func (n *Notebook) fault(rel string, err error) error {
	var nr *fsx.NotRegularError
	var pe *PathError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe):
		return err
	case errors.Is(err, fs.ErrNotExist):
		return &PathError{rel, ErrNotFound}
	case errors.Is(err, fsx.ErrOutside):
		return &PathError{rel, ErrOutsideNotebook}
	case errors.As(err, &nr):
		return &PathError{rel, fault.BadInputf("path", "%w", nr)}
	case errors.Is(err, fsx.ErrSymlink):
		return badPath(rel, "it is a symlink, or in a folder that is one, and memhost writes pages only as regular files in real folders")
	case errors.Is(err, syscall.ELOOP):
		return badPath(rel, "it is a symlink loop (or a chain of over 40 symlinks)")
	case errors.Is(err, syscall.EISDIR):
		return &PathError{rel, fmt.Errorf("%w: it is a folder", ErrBadPath)}
	case errors.Is(err, syscall.ENOTDIR):
		return badPath(rel, "a folder in it is a file")
	}
	return err
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// Abs returns the absolute path of a cleaned page path.
func (n *Notebook) Abs(rel string) string { return filepath.Join(n.root, filepath.FromSlash(rel)) }

// Read returns a page's content. A symlink is followed while it leads
// inside the notebook; the page must be a regular file.
func (n *Notebook) Read(rel string) ([]byte, error) {
	d, err := n.open()
	if err != nil {
		return nil, err
	}
	defer d.Close()
	b, err := d.ReadFile(rel, fsx.LinksInside)
	return b, n.fault(rel, err)
}

// Update reads a page (nil and exists=false when missing), lets fn compute
// its new content, and writes it atomically, all under the update lock.
// Returning ErrUnchanged from fn leaves the page alone. Neither the page
// nor a folder on its way may be a symlink.
func (n *Notebook) Update(ctx context.Context, rel string, fn func(old []byte, exists bool) ([]byte, error)) error {
	unlock, err := n.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	root, err := n.open()
	if err != nil {
		return err
	}
	defer root.Close()
	dir, name := path.Split(rel)
	parent, err := root.Sub(dir, false)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return n.fault(rel, err)
	}
	var old []byte
	exists, perm := false, fs.FileMode(0o600)
	if parent != nil {
		defer parent.Close()
		f, err := parent.Open(name, fsx.NoLinks)
		switch {
		case err == nil:
			old, perm, err = readPerm(f)
			if err != nil {
				return fmt.Errorf("read %s: %w", ShowPath(rel), err)
			}
			exists = true
		case !errors.Is(err, fs.ErrNotExist):
			return n.fault(rel, err)
		}
	}
	data, err := fn(old, exists)
	if err != nil {
		return err
	}
	if parent == nil {
		if parent, err = root.Sub(dir, true); err != nil {
			return n.fault(rel, err)
		}
		defer parent.Close()
	}
	return n.writeAtomic(parent, rel, data, perm)
}

func readPerm(f *os.File) ([]byte, fs.FileMode, error) {
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	b, err := io.ReadAll(f)
	return b, fi.Mode().Perm(), err
}

// ErrUnchanged may be returned by an Update function to skip the write.
var ErrUnchanged = errors.New("page unchanged")

// Remove deletes a page: a regular file, or a symlink (the link, never its
// target), in folders that are not symlinks.
func (n *Notebook) Remove(ctx context.Context, rel string) error {
	return n.RemoveGuarded(ctx, rel, nil)
}

// RemoveGuarded is Remove with g deciding under the lock (nil: remove).
func (n *Notebook) RemoveGuarded(ctx context.Context, rel string, g Guard) error {
	unlock, err := n.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	parent, name, err := n.parent(rel, false)
	if err == nil {
		defer parent.Close()
		err = n.fault(rel, pageMode(parent, name))
	}
	if act, err := g.decide(err); !act {
		return err
	}
	if err := parent.Remove(name); err != nil {
		return n.fault(rel, err)
	}
	parent.Sync() // make the removal durable; best effort
	return nil
}

// parent opens the folder of the page rel (creating it with create) and
// returns it with the page's name in it.
func (n *Notebook) parent(rel string, create bool) (*fsx.Dir, string, error) {
	root, err := n.open()
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	dir, name := path.Split(rel)
	d, err := root.Sub(dir, create)
	if err != nil {
		return nil, "", n.fault(rel, err)
	}
	return d, name, nil
}

// pageMode checks that name in d is a page Remove and Rename may act on:
// a regular file or a symlink.
func pageMode(d *fsx.Dir, name string) error {
	m, err := d.Mode(name)
	switch {
	case err != nil:
		return err
	case m.IsDir():
		return syscall.EISDIR
	case !m.IsRegular() && m&fs.ModeSymlink == 0:
		return &fsx.NotRegularError{Mode: m.Type()}
	}
	return nil
}

// TempPrefix starts the name of every temporary file a write makes; the
// scanner skips such files.
const TempPrefix = fsx.TempPrefix

// writeAtomic writes a page through a temporary file renamed into place,
// in the page's folder d. The caller holds the notebook lock, so a
// temporary file already in the folder is a dead writer's (killed before
// its rename) and is removed.
func (n *Notebook) writeAtomic(d *fsx.Dir, rel string, data []byte, perm fs.FileMode) error {
	if names, err := d.Names(); err == nil {
		for _, name := range names {
			if strings.HasPrefix(name, TempPrefix) {
				d.Remove(name)
			}
		}
	}
	if err := d.WriteFile(path.Base(rel), data, perm); err != nil {
		if f := n.fault(rel, err); f != err {
			return f
		}
		return fmt.Errorf("write %s: %w", ShowPath(rel), err)
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
	root, err := n.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var out []string
	err = leftovers(root, n.root, remove, &out)
	return out, err
}

// leftovers adds the temporary files in d (at path p) and in the folders
// beneath it to out, removing them with remove. Folders are opened from
// d, never through a symlink; one that cannot be read is skipped.
func leftovers(d *fsx.Dir, p string, remove bool, out *[]string) error {
	names, err := d.Names()
	if err != nil {
		return nil
	}
	slices.Sort(names)
	for _, name := range names {
		m, err := d.Mode(name)
		switch {
		case err != nil:
		case m.IsDir():
			sub, err := d.Sub(name, false)
			if err != nil {
				continue
			}
			err = leftovers(sub, filepath.Join(p, name), remove, out)
			sub.Close()
			if err != nil {
				return err
			}
		case strings.HasPrefix(name, TempPrefix):
			if remove {
				if err := d.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
			*out = append(*out, filepath.Join(p, name))
		}
	}
	return nil
}

// lock takes the in-process semaphore and an exclusive flock on the lock
// file, waiting for each no longer than ctx lasts.
func (n *Notebook) lock(ctx context.Context) (func(), error) {
	select {
	case n.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	unlock, err := fsx.Lock(ctx, n.lockPath)
	if err != nil {
		<-n.sem
		return nil, err
	}
	return func() {
		unlock()
		<-n.sem
	}, nil
}
