package federated

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/archive"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/federation/filemerge"
	"github.com/memhost/memhost/host/federation/gitrepo"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/internal/fsx"
	"github.com/memhost/memhost/internal/version"
)

// Export writes notebook/, sessions/ and config.yaml, with a manifest of
// their SHA-256 checksums, to a gzip-compressed tar (see package
// archive). The index is left out: Import rebuilds it. So is, unless
// req.IncludeSecrets, any file holding a secret (resp.LeftOut).
func (fd *FederationService) Export(ctx context.Context, req memhost.ExportRequest) (memhost.ExportResponse, error) {
	resp := memhost.ExportResponse{Path: req.Path}
	if req.Path == "" {
		return resp, fault.BadInputf("path", "no archive file given")
	}
	if _, err := os.Lstat(req.Path); err == nil {
		return resp, fault.Errorf(fault.Conflict, "path", "%s already exists (choose another name or remove it)", req.Path)
	}
	tmp := req.Path + ".part"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return resp, fault.Errorf(fault.BadInput, "path", "cannot write %s: %v", req.Path, err)
	}
	defer os.Remove(tmp)
	sum := sha256.New()
	n := &countWriter{}
	m, err := archive.Write(io.MultiWriter(f, sum, n), []archive.Source{
		{Name: "notebook", Dir: fd.k.Notebook().Root()},
		{Name: "sessions", Dir: fd.k.Sessions().Dir},
		{Name: "config.yaml", Dir: filepath.Join(fd.k.Home(), config.FileName)},
	}, version.String(), fd.k.Now(), func(name string, data []byte) bool {
		page, isPage := strings.CutPrefix(name, "notebook/")
		if isPage && notebook.IsPrivate(page, data) || strings.HasPrefix(name, "sessions/") && fd.k.Sessions().IsPrivate(strings.TrimSuffix(strings.TrimPrefix(name, "sessions/"), ".jsonl")) {
			resp.LeftOut = append(resp.LeftOut, memhost.HeldBack{Path: name, Rule: "private"})
			return true
		}
		if req.IncludeSecrets {
			return false
		}
		hb, found := fd.k.FindSecret(data)
		if found {
			hb.Path = name
			resp.LeftOut = append(resp.LeftOut, hb)
		}
		return found
	})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return resp, fmt.Errorf("export to %s: %w", req.Path, err)
	}
	if err := fsx.Rename(tmp, req.Path); err != nil {
		return resp, err
	}
	resp.Files, resp.Bytes, resp.SHA256 = len(m.Files), n.n, hex.EncodeToString(sum.Sum(nil))
	return resp, nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// Import checks an archive whole (paths, types, sizes, every checksum
// against its manifest) before touching the home, then brings each file
// in: a missing file is added, a different one merged by federation's
// rules (transcripts and other JSONL by union of entries, pages line by
// line, both versions kept when lines conflict). config.yaml is taken
// only when asked (req.WithConfig) and the home has none: a config runs
// alert commands and names URLs, which an archive must not plant. What
// changed is indexed.
func (fd *FederationService) Import(ctx context.Context, req memhost.ImportRequest) (out memhost.ImportResponse, err error) {
	out.Path = req.Path
	if req.Path == "" {
		return out, fault.BadInputf("path", "no archive file given")
	}
	f, err := os.Open(req.Path)
	if err != nil {
		return out, fault.Errorf(fault.NotFound, "path", "cannot read %s: %v", req.Path, err)
	}
	defer f.Close()
	stage, err := os.MkdirTemp(filepath.Join(fd.k.Home(), "brain"), "import-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(stage)
	sum := sha256.New()
	m, err := archive.Read(io.TeeReader(f, sum), stage)
	if err != nil {
		if errors.Is(err, archive.ErrBad) {
			return out, fault.Errorf(fault.BadInput, "path", "%s: %v", req.Path, err)
		}
		return out, fmt.Errorf("import %s: %w", req.Path, err)
	}
	id := hex.EncodeToString(sum.Sum(nil))
	out.Files = len(m.Files)
	// Every name is checked before the first file is written.
	type item struct{ name, target, indexPath string }
	var items []item
	for _, af := range m.Files {
		switch top, rest, _ := strings.Cut(af.Path, "/"); {
		case af.Path == config.FileName:
		case top == "notebook":
			rel, err := fd.k.Notebook().Clean(rest)
			if err != nil || rel != rest {
				return out, fault.Errorf(fault.BadInput, "path", "%s: the page %s is not a valid page path", req.Path, af.Path)
			}
			items = append(items, item{af.Path, "", rel})
		case top == "sessions":
			id := strings.TrimSuffix(rest, ".jsonl")
			if strings.Contains(rest, "/") || !strings.HasSuffix(rest, ".jsonl") || !(sessions.ValidID(id) || strings.HasPrefix(rest, ".")) {
				return out, fault.Errorf(fault.BadInput, "path", "%s: %s is not a transcript name", req.Path, af.Path)
			}
			ip := ""
			if !strings.HasPrefix(rest, ".") {
				ip = sessions.Path(id)
			}
			items = append(items, item{af.Path, filepath.Join(fd.k.Sessions().Dir, rest), ip})
		}
	}
	var files []string // the home's files that are not index paths
	repo := &gitrepo.Repo{Dir: absHome(fd.k.Home())}
	var reindex []string
	for _, it := range items {
		theirs, err := os.ReadFile(filepath.Join(stage, filepath.FromSlash(it.name)))
		if err != nil {
			return out, err
		}
		// What an archive brings is a write like any other: under the
		// default policy its secrets are replaced before it is stored
		// (a transcript stays JSON: the marker replaces escaped bytes
		// whole).
		text, red, err := fd.k.Redact(it.name, string(theirs))
		if err != nil {
			return out, err
		}
		theirs = []byte(text)
		out.Redacted = append(out.Redacted, red...)
		merge := func(ours []byte, exists bool) ([]byte, string, error) {
			switch {
			case !exists:
				return theirs, "added", nil
			case bytes.Equal(ours, theirs):
				return nil, "", nil
			case strings.HasSuffix(it.name, ".jsonl"):
				merged := filemerge.JSONL(nil, ours, theirs)
				if bytes.Equal(merged, ours) {
					return nil, "", nil
				}
				return merged, "merged", nil
			}
			merged, ok, err := repo.MergeText(ctx, stage, nil, ours, theirs)
			if err != nil {
				return nil, "", err
			}
			if !ok {
				return nil, "conflict", nil
			}
			if bytes.Equal(merged, ours) {
				return nil, "", nil
			}
			return merged, "merged", nil
		}
		what := ""
		if it.target == "" { // a page: under the notebook's lock
			uerr := fd.k.Notebook().Update(ctx, it.indexPath, func(old []byte, exists bool) ([]byte, error) {
				data, w, err := merge(old, exists)
				what = w
				if err == nil && data == nil {
					err = notebook.ErrUnchanged
				}
				return data, err
			})
			if uerr != nil && !errors.Is(uerr, notebook.ErrUnchanged) {
				return out, uerr
			}
			if what == "conflict" {
				sib := filemerge.SiblingPath(it.indexPath, id)
				if err := fd.k.Notebook().Update(ctx, sib, func([]byte, bool) ([]byte, error) { return theirs, nil }); err != nil {
					return out, err
				}
				out.Conflicts = append(out.Conflicts, memhost.Conflict{Path: it.name, Sibling: "notebook/" + sib, Time: fd.k.Now().UTC().Format("2006-01-02T15:04:05Z"), Reason: "the archive and the home changed the same lines"})
				reindex = append(reindex, sib)
			}
		} else {
			old, rerr := os.ReadFile(it.target)
			if rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				return out, rerr
			}
			data, w, err := merge(old, rerr == nil)
			if err != nil {
				return out, err
			}
			what = w
			if data != nil {
				if err := writeFileAtomic(it.target, data); err != nil {
					return out, err
				}
			}
		}
		switch what {
		case "added":
			out.Added = append(out.Added, it.name)
		case "merged", "conflict":
			out.Merged = append(out.Merged, it.name)
		default:
			out.Unchanged++
			continue
		}
		if it.indexPath != "" {
			reindex = append(reindex, it.indexPath)
		} else {
			files = append(files, it.name)
		}
	}
	if _, err := os.Stat(filepath.Join(stage, config.FileName)); err == nil {
		out.Config = "kept"
		cfgPath := filepath.Join(fd.k.Home(), config.FileName)
		if _, err := os.Stat(cfgPath); errors.Is(err, os.ErrNotExist) && !req.WithConfig {
			out.Config = "left out"
		} else if errors.Is(err, os.ErrNotExist) {
			if _, err := config.Load(filepath.Join(stage, config.FileName), nil); err != nil {
				fd.k.Log().Warn("the archive's config.yaml is not valid; not imported", "err", err)
			} else if data, err := os.ReadFile(filepath.Join(stage, config.FileName)); err == nil {
				if err := writeFileAtomic(cfgPath, data); err != nil {
					return out, err
				}
				out.Config = "imported"
				files = append(files, config.FileName)
				fd.k.RecheckConfig()
			}
		}
	}
	if len(reindex) > 0 {
		if err := fd.k.Indexer().SyncPaths(ctx, reindex...); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("the files are imported; indexing them failed (the next sync retries): %v", err))
		}
	}
	out.Indexed, out.Changed, out.ChangedFiles = len(reindex), reindex, files
	return out, nil
}

// writeFileAtomic writes data to path through a flushed temporary file
// and a rename (fsx.WriteFileAtomic), making its folder.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return fsx.WriteFileAtomic(path, data, 0o600)
}
