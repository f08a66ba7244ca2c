// Package federation shares one memhost home between machines through
// git: every change memhost makes is committed (batched), a sync fetches
// the remote branch, merges it by memhost's rules (markdown line by line
// against the merge base, transcripts by union of entries, what cannot
// merge kept on both sides), updates the work tree, and pushes.
// The index is derived on each machine and never committed; only the
// notebook's pages and the transcripts are shared, whatever the remote
// sends (shared.go).
//
// It drives the git binary (see docs/design-notes.md for why not go-git):
// real three-way merges (merge-tree, merge-file), git's stat-cached index
// for cheap commits at 10k pages, and the user's own credentials and
// transports for remotes.
package federation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/internal/fsx"
)

// GitignoreBlock is what memhost keeps in the home's .gitignore, between
// its markers: everything derived, per machine or transient.
const GitignoreBlock = `# memhost: begin (written by memhost git init; lines between the markers are replaced)
# Derived on each machine from notebook/ and sessions/: the index, caches,
# models, plugins, health reports. Per machine: config.yaml, and the
# records of sessions/ that name this machine's files, hold bytes cut off
# after a crash or list private sessions. Transient: locks, sockets,
# tokens, the server's state file, temporary files.
/brain/
/cache/
/models/
/plugins/
/health/
/config.yaml
/sessions/.sources.jsonl
/sessions/.torn-lines.jsonl
/sessions/.private.jsonl
*.lock
*.sock
*.token
serve.json
*.part
*.tmp
.memhost-tmp-*
# memhost: end
`

const (
	blockBegin = "# memhost: begin"
	blockEnd   = "# memhost: end"
)

// InitOptions configure Init.
type InitOptions struct {
	Branch string // default "main"
	// Remote, when set, is checked to be reachable.
	Remote string
}

// Managed reports whether home is a repository memhost commits to (made
// or adopted by Init). It reads .git/config without running git.
func Managed(home string) bool {
	data, err := os.ReadFile(filepath.Join(home, ".git", "config"))
	if err != nil {
		return false
	}
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			in = strings.EqualFold(l, "[memhost]")
			continue
		}
		if in && strings.ReplaceAll(l, " ", "") == "managed=true" {
			return true
		}
	}
	return false
}

// Init makes the home a git repository memhost commits to, or adopts the
// one it is: .gitignore gets memhost's block, whatever is not shared is
// untracked (left on disk), and the shared files are committed.
func (r *Repo) Init(ctx context.Context, opts InitOptions) (memhost.GitInitResult, error) {
	res := memhost.GitInitResult{Branch: opts.Branch}
	if res.Branch == "" {
		res.Branch = "main"
	}
	if err := CheckNotebook(r.notebookDir()); err != nil {
		return res, err
	}
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return res, err
	}
	if _, err := os.Stat(filepath.Join(r.Dir, ".git")); errors.Is(err, os.ErrNotExist) {
		if _, err := r.Git(ctx, "init", "-q", "-b", res.Branch); err != nil {
			return res, err
		}
		res.Created = true
	} else if err != nil {
		return res, err
	} else if top, err := r.Git(ctx, "rev-parse", "--show-toplevel"); err != nil {
		return res, err
	} else if !sameDir(strings.TrimSpace(top), r.Dir) {
		return res, fmt.Errorf("%s/.git is not the repository of the home (git says %s)", r.Dir, strings.TrimSpace(top))
	}
	if err := writeGitignore(filepath.Join(r.Dir, ".gitignore")); err != nil {
		return res, err
	}
	for _, kv := range [][2]string{{"memhost.managed", "true"}, {"core.autocrlf", "false"}} {
		if _, err := r.Git(ctx, "config", kv[0], kv[1]); err != nil {
			return res, err
		}
	}
	unlock, err := r.lockFile(ctx, "commit.lock")
	if err != nil {
		return res, err
	}
	defer unlock()
	if _, err := r.g().WaitIndexLock(ctx); err != nil {
		return res, err
	}
	// What an adopted repository (or an older memhost) tracked outside
	// the shared paths is untracked, kept on disk: derived and
	// per-machine files, an editor's settings in the notebook. Every
	// other change to a shared path is committed (commitLocked's rules:
	// nothing outside them gets in).
	out, err := r.Git(ctx, "ls-files", "-z")
	if err != nil {
		return res, err
	}
	var remove []string
	untracked := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p == "" || r.Shares(p) {
			continue
		}
		remove = append(remove, p)
		// Reported by top folder, or by the file in the shared folders.
		what, _, _ := strings.Cut(p, "/")
		if what == r.notebookDir() || what == sessionsDir {
			what = p
		}
		if !untracked[what] {
			untracked[what] = true
			res.Untracked = append(res.Untracked, what)
		}
	}
	paths, err := r.statusPaths(ctx)
	if err != nil {
		return res, err
	}
	head, err := r.g().Rev(ctx, "HEAD")
	if err != nil {
		return res, err
	}
	msg := "memhost git init: adopt the home"
	if head == "" {
		msg = "memhost git init"
	}
	home, err := r.g().OpenHome()
	if err != nil {
		return res, err
	}
	defer home.Close()
	// An empty home gets an empty first commit: later merges need a base.
	commit, err := r.holdBack(home, r.shareable(home, paths))
	if err != nil {
		return res, err
	}
	if _, err := r.g().Commit(ctx, home, msg, commit, remove, head == ""); err != nil {
		return res, err
	}
	res.Commit, err = r.g().Rev(ctx, "HEAD")
	return res, err
}

func sameDir(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// writeGitignore puts GitignoreBlock in the file, replacing an older
// block and keeping the user's own lines.
func writeGitignore(p string) error {
	old, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	text := string(old)
	if i := strings.Index(text, blockBegin); i >= 0 {
		if j := strings.Index(text[i:], blockEnd); j >= 0 {
			end := i + j + len(blockEnd)
			if end < len(text) && text[end] == '\n' {
				end++
			}
			text = text[:i] + text[end:]
		}
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text += GitignoreBlock
	if text == string(old) {
		return nil
	}
	return fsx.WriteFileAtomic(p, []byte(text), 0o600)
}
