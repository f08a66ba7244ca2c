// Package archive writes and reads memhost export files (export and
// import, for backup): a gzip-compressed tar of the home's source of
// truth — notebook/, sessions/ and config.yaml — and, last, manifest.json
// listing every file with its size and SHA-256. The index is never in
// it: it is rebuilt from the files on import.
//
// Read checks everything before anything is used: paths (relative, clean,
// inside notebook/ or sessions/, or config.yaml), entry types (regular
// files only), sizes, and every checksum against the manifest, which must
// list exactly the files present.
package archive

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Format names the manifest's format; Version its version.
const (
	Format       = "memhost-export"
	Version      = 1
	ManifestName = "manifest.json"
)

// MaxFileBytes bounds one file in an archive (the largest transcript the
// index reads).
const MaxFileBytes = 256 << 20

// Manifest is manifest.json.
type Manifest struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Created string `json:"created"` // RFC 3339
	Memhost string `json:"memhost,omitempty"`
	Files   []File `json:"files"`
}

// File is one file of an archive.
type File struct {
	Path   string `json:"path"` // slash-separated, e.g. notebook/reference/contacts.md
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Source is a folder or file of the home to export, under the name it
// has in the archive.
type Source struct {
	Name string // "notebook", "sessions" or "config.yaml"
	Dir  string // absolute path on disk
}

// skip reports files that are not part of the source of truth: hidden
// files and folders (temporary files, .obsidian), except the sessions
// folder's own records (.sources.jsonl, .flush-receipts.jsonl).
func skip(name string, dir bool, top string) bool {
	if !strings.HasPrefix(name, ".") {
		return false
	}
	return dir || top != "sessions" || !strings.HasSuffix(name, ".jsonl")
}

// Write writes an archive of sources to w. leave, when not nil, is asked
// of each file with its bytes: true leaves it out (it holds a secret).
func Write(w io.Writer, sources []Source, version string, now time.Time, leave func(name string, data []byte) bool) (Manifest, error) {
	m := Manifest{Format: Format, Version: Version, Created: now.UTC().Format(time.RFC3339), Memhost: version}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	add := func(name, abs string, fi fs.FileInfo) error {
		f, err := os.Open(abs)
		if err != nil {
			return err
		}
		defer f.Close()
		if fi.Size() > MaxFileBytes {
			return fmt.Errorf("%s is larger than %d MB", name, MaxFileBytes>>20)
		}
		// The file may grow while it is read (a transcript appended to):
		// take the size it has now, whole lines included.
		data, err := io.ReadAll(io.LimitReader(f, fi.Size()))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if leave != nil && leave(name, data) {
			return nil
		}
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: fi.ModTime(), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		m.Files = append(m.Files, File{Path: name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
		return nil
	}
	for _, src := range sources {
		fi, err := os.Stat(src.Dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return m, err
		}
		if !fi.IsDir() {
			if err := add(src.Name, src.Dir, fi); err != nil {
				return m, err
			}
			continue
		}
		err = filepath.WalkDir(src.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p == src.Dir {
				return nil
			}
			if skip(d.Name(), d.IsDir(), src.Name) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() || !d.Type().IsRegular() {
				return nil // symlinks and devices are not exported
			}
			rel, err := filepath.Rel(src.Dir, p)
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed since the folder was read: not in the snapshot
			}
			if err != nil {
				return err
			}
			err = add(src.Name+"/"+filepath.ToSlash(rel), p, fi)
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed between its stat and its open
			}
			return err
		})
		if err != nil {
			return m, err
		}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, err
	}
	if err := tw.WriteHeader(&tar.Header{Name: ManifestName, Mode: 0o644, Size: int64(len(data)), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
		return m, err
	}
	if _, err := tw.Write(data); err != nil {
		return m, err
	}
	if err := tw.Close(); err != nil {
		return m, err
	}
	return m, gz.Close()
}

// ErrBad means the archive is not a valid memhost export; the error
// says what is wrong with it.
var ErrBad = errors.New("not a valid memhost export")

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBad, fmt.Sprintf(format, args...))
}

// checkName accepts the paths an archive may hold.
func checkName(name string) error {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || path.Clean(name) != name || !filepath.IsLocal(name) {
		return bad("unsafe path %q", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return bad("control character in path %q", name)
		}
	}
	switch top, _, _ := strings.Cut(name, "/"); {
	case name == "config.yaml", name == ManifestName:
	case (top == "notebook" || top == "sessions") && strings.Contains(name, "/"):
	default:
		return bad("%q is not in notebook/ or sessions/", name)
	}
	return nil
}

// Read reads an archive into dir (which must exist and be empty),
// checking it whole; on any error dir may hold part of it and must be
// removed by the caller.
func Read(r io.Reader, dir string) (Manifest, error) {
	var m Manifest
	gz, err := gzip.NewReader(r)
	if err != nil {
		return m, bad("not gzip-compressed: %v", err)
	}
	tr := tar.NewReader(gz)
	got := map[string]File{}
	var manifest []byte
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return m, bad("damaged tar: %v", err)
		}
		if hdr.Typeflag == tar.TypeDir {
			continue
		}
		if err := checkName(hdr.Name); err != nil {
			return m, err
		}
		if hdr.Typeflag != tar.TypeReg {
			return m, bad("%s is not a regular file", hdr.Name)
		}
		if hdr.Size > MaxFileBytes {
			return m, bad("%s is larger than %d MB", hdr.Name, MaxFileBytes>>20)
		}
		if _, dup := got[hdr.Name]; dup || (hdr.Name == ManifestName && manifest != nil) {
			return m, bad("%s is in it twice", hdr.Name)
		}
		if hdr.Name == ManifestName {
			if manifest, err = io.ReadAll(io.LimitReader(tr, 64<<20)); err != nil {
				return m, bad("damaged tar: %v", err)
			}
			continue
		}
		full := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return m, err
		}
		f, err := os.OpenFile(full, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return m, err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(f, h), tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return m, bad("damaged tar at %s: %v", hdr.Name, err)
		}
		got[hdr.Name] = File{Path: hdr.Name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	}
	if manifest == nil {
		return m, bad("it has no %s", ManifestName)
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		return m, bad("%s: %v", ManifestName, err)
	}
	if m.Format != Format || m.Version != Version {
		return m, bad("%s says format %q version %d (want %q version %d)", ManifestName, m.Format, m.Version, Format, Version)
	}
	listed := map[string]bool{}
	for _, f := range m.Files {
		g, ok := got[f.Path]
		switch {
		case listed[f.Path]:
			return m, bad("%s lists %s twice", ManifestName, f.Path)
		case !ok:
			return m, bad("%s lists %s, which is missing", ManifestName, f.Path)
		case g.Size != f.Size || g.SHA256 != f.SHA256:
			return m, bad("%s does not match its checksum (sha256 %s, manifest %s)", f.Path, g.SHA256, f.SHA256)
		}
		listed[f.Path] = true
	}
	var extra []string
	for p := range got {
		if !listed[p] {
			extra = append(extra, p)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return m, bad("%s is not in %s", extra[0], ManifestName)
	}
	return m, nil
}
