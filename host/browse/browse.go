// Package browse holds the operations a person browsing the home uses
// (the dashboard, server/dashboard) beyond the CLI's: a
// page read whole with the hash a save is conditional on, a save that
// refuses to overwrite a page changed since it was read, the notebook's
// folders and pages with sizes and times, a session's transcript, and the
// storage the home uses. It imports memhost, fault, host/notebook and
// host/sessions; the Host embeds its BrowseService.
package browse

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/sessions"
)

// Kernel is what the service uses of the Host.
type Kernel interface {
	Home() string
	Notebook() *notebook.Notebook
	// Redact applies the home's secrets policy to text given in field.
	Redact(field, text string) (string, []memhost.Redaction, error)
	Sessions() *sessions.Store
	ModelsDir() string
	IndexWritten(ctx context.Context, rels ...string) []string
}

// BrowseService runs the operations.
type BrowseService struct{ k Kernel }

// New returns the service over k.
func New(k Kernel) *BrowseService { return &BrowseService{k: k} }

// PageHash is the hash PageResponse and SavePageRequest use: sha256 of the
// file's bytes, hex.
func PageHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// cutRune drops the UTF-8 character a cut at the end of b split.
func cutRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// Page reads a page whole.
func (b *BrowseService) Page(ctx context.Context, req memhost.PageRequest) (memhost.PageResponse, error) {
	rel, err := b.k.Notebook().Clean(req.Path)
	if err != nil {
		return memhost.PageResponse{}, err
	}
	var resp memhost.PageResponse
	if req.MaxBytes > 0 {
		data, whole, err := b.k.Notebook().ReadPrefix(rel, req.MaxBytes)
		if err != nil {
			return memhost.PageResponse{}, err
		}
		if !whole {
			resp = memhost.PageResponse{Path: rel, Text: string(cutRune(data)), Truncated: true}
		} else {
			resp = memhost.PageResponse{Path: rel, Text: string(data), Hash: PageHash(data), SizeBytes: int64(len(data))}
		}
	} else {
		data, err := b.k.Notebook().Read(rel)
		if err != nil {
			return memhost.PageResponse{}, err
		}
		resp = memhost.PageResponse{Path: rel, Text: string(data), Hash: PageHash(data), SizeBytes: int64(len(data))}
	}
	if fi, err := os.Stat(b.k.Notebook().Abs(rel)); err == nil {
		resp.Mtime = fi.ModTime().UTC().Format(time.RFC3339)
		if resp.Truncated {
			resp.SizeBytes = fi.Size()
		}
	}
	return resp, nil
}

// ErrPageChanged is the conflict of a SavePage whose page changed on disk
// since it was read (or exists, for a new page).
var ErrPageChanged = errors.New("changed on disk since it was opened")

// SavePage writes a page whole, atomically and under the notebook's lock,
// unless it changed since it was read: then it fails with a conflict on
// field "baseHash" and the page is untouched. Saving the text the page already holds succeeds
// and writes nothing.
func (b *BrowseService) SavePage(ctx context.Context, req memhost.SavePageRequest) (out memhost.SavePageResponse, err error) {
	text, err := notebook.CleanText(req.Text)
	if err != nil {
		return memhost.SavePageResponse{}, err
	}
	text, redacted, err := b.k.Redact("text", text)
	if err != nil {
		return memhost.SavePageResponse{}, err
	}
	defer func() {
		if err == nil {
			out.Redacted = redacted
		}
	}()
	rel, err := b.k.Notebook().Clean(req.Path)
	if err != nil {
		return memhost.SavePageResponse{}, err
	}
	if !strings.HasSuffix(rel, ".md") {
		return memhost.SavePageResponse{}, fault.BadInputf("path", "%s is not a markdown page (.md)", rel)
	}
	data := []byte(text + "\n")
	err = b.k.Notebook().Update(ctx, rel, func(old []byte, exists bool) ([]byte, error) {
		switch {
		case exists && bytes.Equal(old, data):
			// Saved already: the same save sent again (a retry after a
			// lost answer, a second click) is not a conflict.
			return nil, notebook.ErrUnchanged
		case req.BaseHash == "" && exists:
			return nil, fault.Errorf(fault.Conflict, "baseHash", "%s already exists", rel)
		case req.BaseHash != "" && !exists:
			return nil, fault.Errorf(fault.Conflict, "baseHash", "%s was deleted since it was opened", rel)
		case req.BaseHash != "" && PageHash(old) != req.BaseHash:
			return nil, fault.Errorf(fault.Conflict, "baseHash", "%s %w", rel, ErrPageChanged)
		}
		out.Created = !exists
		return data, nil
	})
	if err != nil && !errors.Is(err, notebook.ErrUnchanged) {
		return memhost.SavePageResponse{}, err
	}
	out.Path, out.Hash = rel, PageHash(data)
	out.Warnings = b.k.IndexWritten(ctx, rel)
	return out, nil
}

// StandardFolders are the notebook's standard folders, in the order the
// dashboard shows them.
var StandardFolders = []string{"lists", "reference", "knowledge", "daily"}

// Pages lists the notebook's folders and markdown pages. Hidden files and
// folders (a name starting with '.') are left out, as the index leaves
// them out.
func (b *BrowseService) Pages(ctx context.Context, req memhost.PagesRequest) (memhost.PagesResponse, error) {
	root := b.k.Notebook().Root()
	folders := map[string]*memhost.FolderEntry{}
	for _, f := range StandardFolders {
		folders[f] = &memhost.FolderEntry{Path: f, Pages: []memhost.PageEntry{}}
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				if errors.Is(err, fs.ErrNotExist) {
					return filepath.SkipAll
				}
				return err
			}
			return nil // a folder we cannot read: left out
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if rel == "." {
				rel = ""
			}
			if folders[rel] == nil {
				folders[rel] = &memhost.FolderEntry{Path: rel, Pages: []memhost.PageEntry{}}
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(rel, ".md") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dir == "." {
			dir = ""
		}
		pe := memhost.PageEntry{Path: rel, Title: notebook.Title(rel)}
		if req.All || dir == req.Folder {
			fi, err := d.Info()
			if err != nil {
				return nil // removed meanwhile
			}
			pe.SizeBytes, pe.Mtime = fi.Size(), fi.ModTime().UTC().Format(time.RFC3339)
		}
		fe := folders[dir]
		fe.Pages = append(fe.Pages, pe)
		return nil
	})
	if err != nil {
		return memhost.PagesResponse{}, err
	}
	resp := memhost.PagesResponse{Folders: []memhost.FolderEntry{}}
	for _, f := range StandardFolders {
		resp.Folders = append(resp.Folders, *folders[f])
		delete(folders, f)
	}
	var rest []string
	for p := range folders {
		rest = append(rest, p)
	}
	sort.Strings(rest)
	for _, p := range rest {
		resp.Folders = append(resp.Folders, *folders[p])
	}
	return resp, nil
}

// Transcript reads a session's transcript and its flush receipts.
func (b *BrowseService) Transcript(ctx context.Context, req memhost.TranscriptRequest) (memhost.TranscriptResponse, error) {
	tr, err := b.k.Sessions().Read(req.Session)
	if err != nil {
		return memhost.TranscriptResponse{}, err
	}
	resp := memhost.TranscriptResponse{Session: req.Session, Path: sessions.Path(req.Session), Turns: tr.Turns, Compactions: tr.Compactions, Flushes: []memhost.FlushReceipt{}}
	if resp.Turns == nil {
		resp.Turns = []memhost.Turn{}
	}
	rs, err := b.k.Sessions().Receipts()
	if err != nil {
		return resp, err
	}
	for _, r := range rs {
		if r.Session == req.Session {
			resp.Flushes = append(resp.Flushes, r)
		}
	}
	return resp, nil
}

// Storage measures the home's parts on disk.
func (b *BrowseService) Storage(ctx context.Context, _ memhost.StorageRequest) (memhost.StorageResponse, error) {
	var resp memhost.StorageResponse
	nb := b.k.Notebook().Root()
	daily := filepath.Join(nb, "daily")
	err := du(ctx, nb, func(p string, size int64) {
		if strings.HasPrefix(p, daily+string(filepath.Separator)) {
			resp.Daily.Files++
			resp.Daily.Bytes += size
		} else {
			resp.Notebook.Files++
			resp.Notebook.Bytes += size
		}
	})
	if err != nil {
		return resp, err
	}
	for _, part := range []struct {
		dir string
		u   *memhost.Usage
		ok  func(name string) bool
	}{
		{filepath.Join(b.k.Home(), "sessions"), &resp.Sessions, func(n string) bool { return strings.HasSuffix(n, ".jsonl") }},
		{filepath.Join(b.k.Home(), "brain"), &resp.Index, func(n string) bool { return strings.HasPrefix(n, "memory.db") }},
		{filepath.Join(b.k.Home(), "cache"), &resp.Cache, func(string) bool { return true }},
		{b.k.ModelsDir(), &resp.Models, func(string) bool { return true }},
	} {
		if err := du(ctx, part.dir, func(p string, size int64) {
			if part.ok(filepath.Base(p)) {
				part.u.Files++
				part.u.Bytes += size
			}
		}); err != nil {
			return resp, err
		}
	}
	return resp, nil
}

// du calls fn with each regular file under dir and its size; a missing dir
// has none.
func du(ctx context.Context, dir string, fn func(p string, size int64)) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				fn(p, fi.Size())
			}
		}
		return nil
	})
}
