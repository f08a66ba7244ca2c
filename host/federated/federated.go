package federated

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/federation"
	"github.com/memhost/memhost/host/federation/gitrepo"
	"github.com/memhost/memhost/host/health"
	"github.com/memhost/memhost/host/notebook"
)

// fedState is the home's federation when it is a memhost git repository:
// every write is committed through the committer.
type fedState struct {
	home      string // absolute
	repo      *federation.Repo
	committer *Committer
}

// OpenFederation starts committing when the home is a memhost repository
// (see federation.Managed).
func (fd *FederationService) OpenFederation() {
	if !federation.Managed(fd.k.Home()) {
		return
	}
	fd.start()
}

// current is the home's federation: started here when the home became a
// memhost repository since it opened (`memhost git init` run by another
// process, a command beside a server started on demand), nil while it is
// none.
func (fd *FederationService) current() *fedState {
	if f := fd.fed.Load(); f != nil {
		return f
	}
	if !federation.Managed(fd.k.Home()) {
		return nil
	}
	return fd.start()
}

func (fd *FederationService) start() *fedState {
	if f := fd.fed.Load(); f != nil {
		return f
	}
	cfg := fd.k.Config().Federation
	home := absHome(fd.k.Home())
	repo := &federation.Repo{Dir: home, Author: cfg.Author, Notebook: fd.notebookRel(), Secret: fd.k.FindSecret, Private: fd.private}
	f := &fedState{home: home, repo: repo}
	f.committer = NewCommitter(repo, time.Duration(cfg.CommitIntervalMs)*time.Millisecond, func(err error) {
		if err != nil {
			fd.k.Log().Warn("cannot commit to the home's git repository; the change is kept on disk", "err", err)
		}
	})
	if !fd.fed.CompareAndSwap(nil, f) {
		return fd.fed.Load()
	}
	return f
}

// notebookRel is the notebook folder relative to the home (symlinks
// resolved on both): with sessions/, what federation shares. It is not
// local ("../x") when the notebook is outside the home.
func (fd *FederationService) notebookRel() string {
	home := absHome(fd.k.Home())
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	rel, err := filepath.Rel(home, fd.k.Notebook().Root())
	if err != nil {
		return fd.k.Notebook().Root()
	}
	return rel
}

// CloseFederation commits what is pending.
func (fd *FederationService) CloseFederation() error {
	if f := fd.fed.Load(); f != nil {
		return f.committer.Close(context.Background())
	}
	return nil
}

// homeRel is the home-relative path of an index path ("" when the file
// is outside the home, which federation cannot share).
func (fd *FederationService) homeRel(indexPath string) string {
	abs := fd.k.Indexer().AbsPath(indexPath)
	rel, err := filepath.Rel(absHome(fd.k.Home()), abs)
	if err != nil || !filepath.IsLocal(rel) {
		return ""
	}
	return filepath.ToSlash(rel)
}

// Note queues the commit of a write's change: exactly its paths, with
// its note as the message ("remember: reference/contacts.md ## Sarah Chen").
// A write that changed no path commits nothing.
func (fd *FederationService) Note(c memhost.Change) {
	f := fd.current()
	if f == nil || c.Op == api.OpFedSync.Name {
		return
	}
	var paths []string
	for _, p := range append(append([]string(nil), c.Paths...), c.Removed...) {
		if hp := fd.homeRel(p); hp != "" {
			paths = append(paths, hp)
		}
	}
	for _, p := range c.Files {
		if filepath.IsLocal(filepath.FromSlash(p)) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return
	}
	f.committer.Note(Change{Message: c.Note, Paths: paths})
}

// Edited commits changes the watcher saw (edits made in an editor).
func (fd *FederationService) Edited(r memhost.SyncResult) {
	f := fd.current()
	if f == nil || len(r.Paths)+len(r.RemovedPaths) == 0 {
		return
	}
	var paths, names []string
	for _, p := range append(append([]string(nil), r.Paths...), r.RemovedPaths...) {
		if hp := fd.homeRel(p); hp != "" {
			paths = append(paths, hp)
			names = append(names, p)
		}
	}
	if len(paths) == 0 {
		return
	}
	msg := "edit: " + strings.Join(names, ", ")
	if len(names) > 5 {
		msg = fmt.Sprintf("edit: %d files (%s, …)", len(names), strings.Join(names[:5], ", "))
	}
	f.committer.Note(Change{Message: msg, Paths: paths})
}

// GitInit makes the home a git repository (or adopts the one it is),
// with a .gitignore that keeps derived and per-machine files out, and
// commits it; from then on every write is committed.
func (fd *FederationService) GitInit(ctx context.Context, req memhost.GitInitRequest) (memhost.GitInitResponse, error) {
	resp := memhost.GitInitResponse{Home: fd.k.Home()}
	if !inside(absHome(fd.k.Home()), fd.k.Notebook().Root()) {
		return resp, fault.Errorf(fault.BadInput, "notebookDir", "the notebook %s is outside the home %s: git federation shares the home folder", fd.k.Notebook().Root(), fd.k.Home())
	}
	if err := federation.CheckNotebook(fd.notebookRel()); err != nil {
		return resp, fault.Errorf(fault.BadInput, "notebookDir", "%v", err)
	}
	cfg := fd.k.Config().Federation
	if req.Branch == "" {
		req.Branch = cfg.Branch
	}
	if !config.ValidBranch(req.Branch) {
		return resp, fault.BadInputf("branch", "not a valid git branch name: %q", req.Branch)
	}
	if strings.HasPrefix(req.Remote, "-") || strings.ContainsAny(req.Remote, "\n\r\x00") {
		return resp, fault.BadInputf("remote", "not a repository URL or path: %q", req.Remote)
	}
	repo := &federation.Repo{Dir: absHome(fd.k.Home()), Author: cfg.Author, Notebook: fd.notebookRel(), Secret: fd.k.FindSecret, Private: fd.private}
	res, err := repo.Init(ctx, federation.InitOptions{Branch: req.Branch})
	resp.GitInitResult = res
	if err != nil {
		return resp, gitFault(err)
	}
	fd.start()
	if req.Remote == "" {
		return resp, nil
	}
	if err := config.SetFederation(filepath.Join(fd.k.Home(), config.FileName), req.Remote, req.Branch); err != nil {
		return resp, err
	}
	fd.k.RecheckConfig()
	fd.k.EditConfig(func(c *config.Config) { c.Federation.Remote, c.Federation.Branch = req.Remote, req.Branch })
	resp.Remote = req.Remote
	s, err := fd.FedSync(ctx, memhost.FedSyncRequest{})
	fd.k.Publish(api.OpFedSync, memhost.FedSyncRequest{}, s, err)
	if err != nil {
		resp.SyncError = err.Error()
	}
	resp.Sync = &s
	return resp, nil
}

// absHome is the home as an absolute path (git runs in it; page paths
// are made relative to it).
func absHome(home string) string {
	if abs, err := filepath.Abs(home); err == nil {
		return abs
	}
	return home
}

func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && filepath.IsLocal(rel)
}

func gitFault(err error) error {
	if errors.Is(err, gitrepo.ErrNoGit) {
		return &fault.Error{Kind: fault.Unavailable, Field: "git", Message: err.Error(), Err: err}
	}
	return err
}

// ErrNotFederated means the home is not a memhost git repository.
var ErrNotFederated error = &fault.Error{Kind: fault.BadInput, Field: "federation", Message: "the home is not a git repository memhost commits to"}

// FedSync fetches federation.remote, merges it into the home, pushes, and
// re-indexes exactly the files the merge changed. A failed push leaves
// everything local in place (committed); the error says why.
func (fd *FederationService) FedSync(ctx context.Context, _ memhost.FedSyncRequest) (resp memhost.FedSyncResponse, err error) {
	start := time.Now()
	f := fd.current()
	if f == nil {
		return resp, ErrNotFederated
	}
	cfg := fd.k.Config().Federation
	if cfg.Remote == "" {
		return resp, fault.BadInputf("remote", "no remote is set (federation.remote in config.yaml)")
	}
	// Edits made in an editor and not yet seen are committed under their
	// own message, then whatever is noted.
	if r, err := fd.k.Indexer().Fresh(ctx); err == nil {
		fd.Edited(r)
	}
	if err := f.committer.Flush(ctx); err != nil {
		fd.k.Log().Warn("commit before sync", "err", err)
	}
	res, serr := f.repo.Sync(ctx, federation.SyncOptions{Remote: cfg.Remote, Branch: cfg.Branch, Now: fd.k.Now, Lock: fd.k.Notebook().Lock})
	resp.GitSyncResult = res
	if len(res.Changed) > 0 {
		paths := fd.indexPaths(res.Changed)
		resp.Paths = paths
		if err := fd.k.Indexer().SyncPaths(ctx, paths...); err != nil {
			serr = errors.Join(serr, fmt.Errorf("re-index after the merge: %w", err))
		}
		resp.Indexed = len(paths)
		resp.Gone = fd.gone(paths)
	}
	resp.HeldBack = f.repo.ReadState().HeldBack
	resp.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	return resp, gitFault(serr)
}

// gone are the paths a merge deleted.
func (fd *FederationService) gone(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(fd.k.Indexer().AbsPath(p)); errors.Is(err, fs.ErrNotExist) {
			out = append(out, p)
		}
	}
	return out
}

// indexPaths are the index paths of home-relative files, leaving out
// the files the index does not hold.
func (fd *FederationService) indexPaths(homeRel []string) []string {
	var paths []string
	for _, p := range homeRel {
		if ip := fd.indexPathOf(p); ip != "" {
			paths = append(paths, ip)
		}
	}
	return paths
}

// indexPathOf is the index path of a home-relative file, "" when the
// index does not hold such files.
func (fd *FederationService) indexPathOf(homeRel string) string {
	abs := filepath.Join(absHome(fd.k.Home()), filepath.FromSlash(homeRel))
	if rel, err := filepath.Rel(fd.k.Notebook().Root(), abs); err == nil && filepath.IsLocal(rel) {
		if !strings.HasSuffix(rel, ".md") {
			return ""
		}
		return filepath.ToSlash(rel)
	}
	if rel, err := filepath.Rel(fd.k.Sessions().Dir, abs); err == nil && filepath.IsLocal(rel) && strings.HasSuffix(rel, ".jsonl") && !strings.HasPrefix(rel, ".") {
		return "sessions/" + filepath.ToSlash(rel)
	}
	return ""
}

// status is nil when the home is not federated.
func (fd *FederationService) status(ctx context.Context) *memhost.FederationStatus {
	f := fd.current()
	if f == nil {
		return nil
	}
	cfg := fd.k.Config().Federation
	st := f.repo.ReadState()
	remote := redactRemote(cfg.Remote)
	if remote != cfg.Remote {
		st.LastError = strings.ReplaceAll(st.LastError, cfg.Remote, remote)
	}
	return &memhost.FederationStatus{Remote: remote, Branch: cfg.Branch, Head: f.repo.Head(ctx), State: st, Conflicts: st.Conflicts}
}

// redactRemote masks the password of a remote URL
// (https://me:TOKEN@host/…): status, health and the dashboard show the
// remote, and a token does not belong in them.
func redactRemote(remote string) string {
	u, err := url.Parse(remote)
	if err != nil || u.Scheme == "" || u.User == nil {
		return remote
	}
	return u.Redacted()
}

// FederationCheck is health's check of federation: merges that kept both
// sides and failed syncs warn; a remote that rewrote its history, or that
// changed what is not shared (a plugin, a symlink, ..), fails.
func (fd *FederationService) FederationCheck(ctx context.Context) (memhost.HealthCheck, bool) {
	fs := fd.status(ctx)
	if fs == nil {
		return memhost.HealthCheck{}, false
	}
	c := memhost.HealthCheck{Name: "federation", Status: health.Pass, Metadata: map[string]any{"remote": fs.Remote, "branch": fs.Branch,
		"lastSuccess": fs.State.LastSuccess, "failures": fs.State.Failures}}
	switch {
	case len(fs.State.HeldBack) > 0:
		var parts []string
		for _, h := range fs.State.HeldBack {
			parts = append(parts, fmt.Sprintf("%s (%s …%s, line %d)", h.Path, h.Rule, h.Fingerprint, h.Line))
		}
		c.Status = health.Fail
		c.Message = fmt.Sprintf("%d shared files hold a secret and are not committed or pushed: %s; take the secret out (the file is committed at its next change)", len(parts), strings.Join(parts, ", "))
		c.Metadata["heldBack"] = fs.State.HeldBack
	case fs.State.Rewritten || fs.State.Refused:
		c.Status, c.Message = health.Fail, "syncing is refused: "+fs.State.LastError
	case len(fs.Conflicts) > 0:
		var sib, kept, parts []string
		for _, cf := range fs.Conflicts {
			if cf.Sibling != "" {
				sib = append(sib, cf.Sibling)
			} else {
				kept = append(kept, cf.Path)
				parts = append(parts, fmt.Sprintf("%s was %s (remove or change it to settle this)", cf.Path, cf.Reason))
			}
		}
		c.Status = health.Warn
		if len(sib) > 0 {
			what := "a merge kept both sides of a page"
			if len(sib) > 1 {
				what = fmt.Sprintf("%d merges kept both sides of a page", len(sib))
			}
			parts = append([]string{fmt.Sprintf("%s: compare and remove %s", what, strings.Join(sib, ", "))}, parts...)
			c.Metadata["conflicts"] = sib
		}
		if len(kept) > 0 {
			c.Metadata["kept"] = kept
		}
		c.Message = strings.Join(parts, "; ")
	case fs.State.Failures > 0:
		c.Status = health.Warn
		c.Message = fmt.Sprintf("the last %d syncs failed (local memory is kept and committed): %s", fs.State.Failures, fs.State.LastError)
	case fs.Remote == "":
		c.Message = "changes are committed; no remote is set"
	case fs.State.LastSuccess == "":
		c.Message = "not synced with " + fs.Remote + " yet"
	default:
		c.Message = "synced with " + fs.Remote + " at " + fs.State.LastSuccess
	}
	return c, true
}

// unmanagedPoll is how often the serve loop looks whether the home has
// become a memhost repository.
const unmanagedPoll = 5 * time.Second

// RunLoop syncs with the remote every federation.pushIntervalSec
// (longer after failures) until ctx ends; Watch runs it (so `memhost
// serve` does) and waits for it to end. onGitSync hears of the re-indexing
// each merge did, and of each failed sync.
func (fd *FederationService) RunLoop(ctx context.Context, onGitSync func(memhost.SyncResult)) {
	wait := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		cfg := fd.k.Config().Federation
		interval := time.Duration(cfg.PushIntervalSec) * time.Second
		wait = interval
		f := fd.fed.Load()
		if f == nil {
			if !federation.Managed(fd.k.Home()) {
				// `memhost git init` may run in another process: look again soon.
				wait = min(interval, unmanagedPoll)
				continue
			}
			f = fd.start()
		}
		if _, err := f.repo.Maintain(ctx, fd.k.Now()); err != nil && ctx.Err() == nil {
			fd.k.Log().Warn("git gc --auto failed; the repository keeps working, unpacked", "err", err)
		}
		if cfg.Remote == "" {
			continue
		}
		res, err := fd.FedSync(ctx, memhost.FedSyncRequest{})
		fd.k.Publish(api.OpFedSync, memhost.FedSyncRequest{}, res, err)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			wait = f.repo.ReadState().Backoff(interval)
			fd.k.Log().Warn("federation sync failed; local memory is kept", "remote", cfg.Remote, "retry in", wait.String(), "err", err)
		}
		// A failed sync is told too: the dashboard's git card shows it.
		if onGitSync != nil && (res.Indexed > 0 || err != nil) {
			onGitSync(memhost.SyncResult{Paths: res.Paths, Indexed: res.Indexed, DurationMs: res.DurationMs})
		}
	}
}

// private tells a file that never leaves the machine (path
// home-relative): a private page (notebook.IsPrivate) or a session
// appended with Private.
func (fd *FederationService) private(path string, data []byte) bool {
	if rest, ok := strings.CutPrefix(path, fd.notebookRel()+"/"); ok {
		return notebook.IsPrivate(rest, data)
	}
	if rest, ok := strings.CutPrefix(path, "sessions/"); ok && strings.HasSuffix(rest, ".jsonl") {
		return fd.k.Sessions().IsPrivate(strings.TrimSuffix(rest, ".jsonl"))
	}
	return false
}
