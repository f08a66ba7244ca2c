package host

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/health"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/secrets"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/internal/fsx"
)

// walkSources calls fn with each page of the notebook and each
// transcript: home-relative ("notebook/x.md", "sessions/s.jsonl"), its
// path on disk and its file info. Hidden files and folders and symlinks
// are left out, as the index leaves them.
func (h *Host) walkSources(ctx context.Context, fn func(rel, abs string, fi fs.FileInfo) error) error {
	for _, src := range []struct{ root, prefix, ext string }{{h.notebook.Root(), "notebook/", ".md"}, {h.sessions.Dir, "sessions/", ".jsonl"}} {
		err := filepath.WalkDir(src.root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if p != src.root && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), src.ext) {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil // gone since
			}
			rel, err := filepath.Rel(src.root, p)
			if err != nil {
				return err
			}
			return fn(src.prefix+filepath.ToSlash(rel), p, fi)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func findings(rel string, found []secrets.Finding) []memhost.SecretFinding {
	out := make([]memhost.SecretFinding, len(found))
	for i, f := range found {
		out[i] = memhost.SecretFinding{Path: rel, Line: f.Line, Rule: f.Rule, Fingerprint: f.Fingerprint}
	}
	return out
}

// SecretsScan lists the secrets in the home's pages and transcripts and,
// with req.History, in every version of them the home's git history
// holds. The secrets themselves are never in the answer.
func (o hostOps) SecretsScan(ctx context.Context, req memhost.SecretsScanRequest) (memhost.SecretsScanResponse, error) {
	h := o.h
	start := time.Now()
	resp := memhost.SecretsScanResponse{Findings: []memhost.SecretFinding{}}
	s, err := h.secrets.scanner()
	if err != nil {
		return resp, fmt.Errorf("secret detection: %w", err)
	}
	err = h.walkSources(ctx, func(rel, abs string, _ fs.FileInfo) error {
		data, err := os.ReadFile(abs)
		if err != nil {
			return nil // gone since
		}
		resp.Files++
		resp.Bytes += int64(len(data))
		resp.Findings = append(resp.Findings, findings(rel, s.Scan(string(data)))...)
		return nil
	})
	if err != nil {
		return resp, err
	}
	if req.History {
		if err := h.scanHistory(ctx, s, &resp); err != nil {
			return resp, err
		}
	}
	resp.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	return resp, nil
}

// scanHistory scans every blob of the home's git history (all refs) at
// a shared path. A home that is no git repository has none.
func (h *Host) scanHistory(ctx context.Context, s *secrets.Scanner, resp *memhost.SecretsScanResponse) error {
	if _, err := os.Stat(filepath.Join(h.home, ".git")); err != nil {
		return nil
	}
	list, err := exec.CommandContext(ctx, "git", "-C", h.home, "rev-list", "--all", "--objects").Output()
	if err != nil {
		return fmt.Errorf("git rev-list: %w", err)
	}
	paths := map[string]string{} // object -> a path it had
	var objects []string
	for _, line := range strings.Split(string(list), "\n") {
		obj, p, ok := strings.Cut(line, " ")
		if !ok || !(strings.HasPrefix(p, "notebook/") || strings.HasPrefix(p, "sessions/")) {
			continue
		}
		if _, seen := paths[obj]; !seen {
			objects = append(objects, obj)
		}
		paths[obj] = p
	}
	if len(objects) == 0 {
		return nil
	}
	cmd := exec.CommandContext(ctx, "git", "-C", h.home, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(objects, "\n") + "\n")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	br := bufio.NewReader(out)
	for range objects {
		hdr, err := br.ReadString('\n')
		if err != nil {
			break
		}
		f := strings.Fields(hdr)
		if len(f) != 3 {
			continue // "<object> missing"
		}
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1) // and the newline after it
		if _, err := io.ReadFull(br, data); err != nil {
			break
		}
		if f[1] != "blob" {
			continue
		}
		resp.Files++
		resp.Bytes += int64(n)
		for _, x := range findings(paths[f[0]], s.Scan(string(data[:n]))) {
			x.History, x.Object = true, f[0]
			resp.Findings = append(resp.Findings, x)
		}
	}
	return cmd.Wait()
}

// SecretsRedact rewrites each page and transcript holding a secret with
// the secret replaced by its marker (as a write under the redact policy
// would have stored it), atomically: pages under the notebook's lock,
// transcripts under their own (sessions.Store.Rewrite), every other byte
// kept. Run again it finds nothing and writes nothing. The git history
// is not rewritten (SecretsScan with History lists what it holds).
func (o hostOps) SecretsRedact(ctx context.Context, req memhost.SecretsRedactRequest) (out memhost.SecretsRedactResponse, err error) {
	h := o.h
	rq := once.Request{Op: api.OpSecretsRedact.Name, ID: req.RequestID, Resp: &out}
	if replayed, err := h.once.Answered(rq); err != nil || replayed {
		return out, err
	}
	var changed []string // index paths
	defer func() {
		if err == nil { // the files are rewritten: a journal that fails only loses the replay
			if aerr := h.once.Answer(rq); aerr != nil {
				h.log.Warn("secrets redact: the answer was not recorded for a retry", "err", aerr)
			}
		}
	}()
	out = memhost.SecretsRedactResponse{Redacted: []memhost.SecretFinding{}, Files: []string{}}
	s, err := h.secrets.scanner()
	if err != nil {
		return out, fmt.Errorf("secret detection: %w", err)
	}
	// The files to rewrite: health's scan through its cache, so that a
	// file unchanged since it was found clean is not read again.
	found, err := h.cachedScan(ctx)
	if err != nil {
		return out, err
	}
	var held []string
	for _, f := range found {
		if len(held) == 0 || held[len(held)-1] != f.Path {
			held = append(held, f.Path)
		}
	}
	for _, rel := range held {
		var found []secrets.Finding
		redact := func(data []byte) []byte {
			text, f := s.Redact(string(data))
			if len(f) == 0 {
				return nil
			}
			found = f
			return []byte(text)
		}
		ip := ""
		if page, ok := strings.CutPrefix(rel, "notebook/"); ok {
			err = h.notebook.Update(ctx, page, func(old []byte, exists bool) ([]byte, error) {
				if data := redact(old); exists && data != nil {
					return data, nil
				}
				return nil, notebook.ErrUnchanged
			})
			if errors.Is(err, notebook.ErrUnchanged) {
				err = nil
			}
			ip = page
		} else {
			id := strings.TrimSuffix(strings.TrimPrefix(rel, "sessions/"), ".jsonl")
			_, err = h.sessions.Rewrite(id, redact)
			ip = sessions.Path(id)
		}
		if err != nil {
			return out, fmt.Errorf("redact %s: %w", rel, err)
		}
		if len(found) > 0 {
			out.Files = append(out.Files, rel)
			out.Redacted = append(out.Redacted, findings(rel, found)...)
			changed = append(changed, ip)
		}
	}
	if len(changed) > 0 {
		if err := h.indexer.SyncPaths(ctx, changed...); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("the files are rewritten; indexing them failed (the next sync retries): %v", err))
		}
	}
	out.Indexed, out.Changed = len(changed), changed
	return out, nil
}

// scanCacheFile keeps, per page and transcript, its size, mtime and the
// secrets found in it, so that health scans only what changed since.
const scanCacheFile = "secrets-scan.json"

type scanEntry struct {
	Size     int64                   `json:"size"`
	MtimeNs  int64                   `json:"mtimeNs"`
	Findings []memhost.SecretFinding `json:"findings,omitempty"`
}

// cachedScan is SecretsScan's findings (history aside) through the cache
// in brain/: a file whose size and mtime are those recorded is not read
// again. A file changed within the last 2 s is scanned and not recorded
// (a coarse clock could hide its next change, as git's racy-clean rule
// has it).
func (h *Host) cachedScan(ctx context.Context) ([]memhost.SecretFinding, error) {
	path := filepath.Join(h.home, "brain", scanCacheFile)
	old := map[string]scanEntry{}
	if data, err := os.ReadFile(path); err == nil {
		json.Unmarshal(data, &old)
	}
	s, err := h.secrets.scanner()
	if err != nil {
		return nil, err
	}
	next := map[string]scanEntry{}
	var out []memhost.SecretFinding
	changed := false
	err = h.walkSources(ctx, func(rel, abs string, fi fs.FileInfo) error {
		if e, ok := old[rel]; ok && e.Size == fi.Size() && e.MtimeNs == fi.ModTime().UnixNano() {
			next[rel] = e
			out = append(out, e.Findings...)
			return nil
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return nil // gone since
		}
		e := scanEntry{Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano(), Findings: findings(rel, s.Scan(string(data)))}
		out = append(out, e.Findings...)
		if time.Since(fi.ModTime()) > 2*time.Second && int64(len(data)) == fi.Size() {
			next[rel] = e
		}
		changed = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if changed || len(next) != len(old) {
		if data, err := json.Marshal(next); err == nil {
			fsx.WriteFileAtomic(path, data, 0o600) // a cache: a failed write costs a scan
		}
	}
	return out, nil
}

// secretsCheck is health's "secrets": it fails while a page or transcript
// holds a secret (stored under keep-local or allow, or written by an
// editor), naming them and the command that redacts them.
func (h *Host) secretsCheck(ctx context.Context) memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "secrets", Status: health.Pass, Message: "no secret in the notebook or the transcripts"}
	if h.config().Memory.Privacy.Secrets == config.SecretsAllow {
		c.Message = "not looked for (memory.privacy.secrets: allow)"
		return c
	}
	found, err := h.cachedScan(ctx)
	if err != nil {
		c.Status, c.Message = health.Warn, "cannot look for secrets: "+err.Error()
		return c
	}
	if len(found) == 0 {
		return c
	}
	var parts []string
	files := map[string]bool{}
	for _, f := range found {
		files[f.Path] = true
		if len(parts) < 5 {
			parts = append(parts, fmt.Sprintf("%s:%d %s …%s", f.Path, f.Line, f.Rule, f.Fingerprint))
		}
	}
	c.Status = health.Fail
	c.Message = fmt.Sprintf("%d secrets in %d files (%s); memhost secrets redact replaces them", len(found), len(files), strings.Join(parts, ", "))
	return c
}
