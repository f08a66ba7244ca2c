package host

import (
	"bufio"
	"context"
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
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/secrets"
	"github.com/memhost/memhost/host/sessions"
)

// sourceFiles calls fn with each page of the notebook and each transcript,
// home-relative ("notebook/x.md", "sessions/s.jsonl"), and its bytes. Hidden
// files and folders, symlinks and files past notebook.MaxFileBytes are
// left out, as the index leaves them.
func (h *Host) sourceFiles(ctx context.Context, fn func(rel string, data []byte) error) error {
	walk := func(root, prefix, ext string) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if p != root && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ext) {
				return nil
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return fn(prefix+filepath.ToSlash(rel), data)
		})
	}
	if err := walk(h.notebook.Root(), "notebook/", ".md"); err != nil {
		return err
	}
	return walk(h.sessions.Dir, "sessions/", ".jsonl")
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
func (h *Host) SecretsScan(ctx context.Context, req memhost.SecretsScanRequest) (memhost.SecretsScanResponse, error) {
	start := time.Now()
	resp := memhost.SecretsScanResponse{Findings: []memhost.SecretFinding{}}
	s, err := h.secrets.scanner()
	if err != nil {
		return resp, fmt.Errorf("secret detection: %w", err)
	}
	err = h.sourceFiles(ctx, func(rel string, data []byte) error {
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
func (h *Host) SecretsRedact(ctx context.Context, req memhost.SecretsRedactRequest) (out memhost.SecretsRedactResponse, err error) {
	var changed []string // index paths
	defer h.wrote(&err, func() memhost.Change {
		return memhost.Change{Op: "secrets-redact", Paths: changed, Note: fmt.Sprintf("secrets-redact: %d files", len(out.Files)), Result: &out}
	})
	out = memhost.SecretsRedactResponse{Redacted: []memhost.SecretFinding{}, Files: []string{}}
	s, err := h.secrets.scanner()
	if err != nil {
		return out, fmt.Errorf("secret detection: %w", err)
	}
	var held []string
	err = h.sourceFiles(ctx, func(rel string, data []byte) error {
		if len(s.Scan(string(data))) > 0 {
			held = append(held, rel)
		}
		return nil
	})
	if err != nil {
		return out, err
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
	out.Indexed = len(changed)
	return out, nil
}
