package host

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/host/federation"
	"github.com/memhost/memhost/host/health"
)

// fedState is the home's federation when it is a memhost git repository:
// every write is committed through the committer.
type fedState struct {
	home      string // absolute
	repo      *federation.Repo
	committer *federation.Committer
}

// openFederation starts committing when the home is a memhost repository
// (see federation.Managed).
func (h *Host) openFederation() {
	if !federation.Managed(h.home) {
		return
	}
	h.startFederation()
}

func (h *Host) startFederation() *fedState {
	if f := h.fed.Load(); f != nil {
		return f
	}
	cfg := h.config().Federation
	home := absHome(h.home)
	repo := &federation.Repo{Dir: home, Author: cfg.Author, Notebook: h.notebookRel()}
	f := &fedState{home: home, repo: repo}
	f.committer = federation.NewCommitter(repo, time.Duration(cfg.CommitIntervalMs)*time.Millisecond, func(err error) {
		if err != nil {
			h.log.Warn("cannot commit to the home's git repository; the change is kept on disk", "err", err)
		}
	})
	if !h.fed.CompareAndSwap(nil, f) {
		return h.fed.Load()
	}
	return f
}

// notebookRel is the notebook folder relative to the home (symlinks
// resolved on both): with sessions/, what federation shares. It is not
// local ("../x") when the notebook is outside the home.
func (h *Host) notebookRel() string {
	home := absHome(h.home)
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	rel, err := filepath.Rel(home, h.notebook.Root())
	if err != nil {
		return h.notebook.Root()
	}
	return rel
}

// closeFederation commits what is pending.
func (h *Host) closeFederation() error {
	if f := h.fed.Load(); f != nil {
		return f.committer.Close(context.Background())
	}
	return nil
}

// homeRel is the home-relative path of an index path ("" when the file
// is outside the home, which federation cannot share).
func (h *Host) homeRel(indexPath string) string {
	abs := h.indexer.AbsPath(indexPath)
	rel, err := filepath.Rel(absHome(h.home), abs)
	if err != nil || !filepath.IsLocal(rel) {
		return ""
	}
	return filepath.ToSlash(rel)
}

// fedNote queues the commit of a write's change: exactly its paths, with
// its note as the message ("remember: reference/contacts.md ## Sarah Chen").
// A write that changed no path commits nothing.
func (h *Host) fedNote(c memhost.Change) {
	f := h.fed.Load()
	if f == nil {
		return
	}
	var paths []string
	for _, p := range append(append([]string(nil), c.Paths...), c.Removed...) {
		if hp := h.homeRel(p); hp != "" {
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
	f.committer.Note(federation.Change{Message: c.Note, Paths: paths})
}

// fedEdited commits changes the watcher saw (edits made in an editor).
func (h *Host) fedEdited(r SyncResult) {
	f := h.fed.Load()
	if f == nil || len(r.Paths)+len(r.RemovedPaths) == 0 {
		return
	}
	var paths, names []string
	for _, p := range append(append([]string(nil), r.Paths...), r.RemovedPaths...) {
		if hp := h.homeRel(p); hp != "" {
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
	f.committer.Note(federation.Change{Message: msg, Paths: paths})
}

// GitInitRequest makes the home a git repository memhost commits to.
type GitInitRequest struct {
	// Remote, when set, is written to config.yaml (federation.remote) and
	// synced with at once.
	Remote string `json:"remote,omitempty"`
	Branch string `json:"branch,omitempty"` // default federation.branch
}

// GitInitResponse reports GitInit.
type GitInitResponse struct {
	federation.InitResult
	Home   string `json:"home"`
	Remote string `json:"remote,omitempty"`
	// Sync is the first sync with the remote; SyncError why it failed
	// (the repository is made either way).
	Sync      *FedSyncResponse `json:"sync,omitempty"`
	SyncError string           `json:"syncError,omitempty"`
}

// GitInit makes the home a git repository (or adopts the one it is),
// with a .gitignore that keeps derived and per-machine files out, and
// commits it; from then on every write is committed.
func (h *Host) GitInit(ctx context.Context, req GitInitRequest) (GitInitResponse, error) {
	resp := GitInitResponse{Home: h.home}
	if !inside(absHome(h.home), h.notebook.Root()) {
		return resp, fault.Errorf(fault.BadInput, "notebookDir", "the notebook %s is outside the home %s: git federation shares the home folder", h.notebook.Root(), h.home)
	}
	if err := federation.CheckNotebook(h.notebookRel()); err != nil {
		return resp, fault.Errorf(fault.BadInput, "notebookDir", "%v", err)
	}
	cfg := h.config().Federation
	if req.Branch == "" {
		req.Branch = cfg.Branch
	}
	if !config.ValidBranch(req.Branch) {
		return resp, fault.BadInputf("branch", "not a valid git branch name: %q", req.Branch)
	}
	if strings.HasPrefix(req.Remote, "-") || strings.ContainsAny(req.Remote, "\n\r\x00") {
		return resp, fault.BadInputf("remote", "not a repository URL or path: %q", req.Remote)
	}
	repo := &federation.Repo{Dir: absHome(h.home), Author: cfg.Author, Notebook: h.notebookRel()}
	res, err := repo.Init(ctx, federation.InitOptions{Branch: req.Branch})
	resp.InitResult = res
	if err != nil {
		return resp, gitFault(err)
	}
	h.startFederation()
	if req.Remote == "" {
		return resp, nil
	}
	if err := config.SetFederation(filepath.Join(h.home, config.FileName), req.Remote, req.Branch); err != nil {
		return resp, err
	}
	h.RecheckConfig()
	h.editConfig(func(c *config.Config) { c.Federation.Remote, c.Federation.Branch = req.Remote, req.Branch })
	resp.Remote = req.Remote
	s, err := h.FedSync(ctx, FedSyncRequest{})
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
	if errors.Is(err, federation.ErrNoGit) {
		return &fault.Error{Kind: fault.Unavailable, Field: "git", Message: err.Error(), Err: err}
	}
	return err
}

// FedSyncRequest syncs the home with its remote; it has no parameters.
type FedSyncRequest struct{}

// FedSyncResponse reports a sync and the re-indexing of what it changed.
type FedSyncResponse struct {
	federation.SyncResult
	Indexed int `json:"indexed"` // files re-indexed (changed by the merge)
	// Paths are their index paths ("knowledge/x.md", "sessions/s.jsonl").
	Paths      []string `json:"paths,omitempty"`
	DurationMs float64  `json:"durationMs"`
}

// ErrNotFederated means the home is not a memhost git repository.
var ErrNotFederated error = &fault.Error{Kind: fault.BadInput, Field: "federation", Message: "the home is not a git repository memhost commits to"}

// FedSync fetches federation.remote, merges it into the home, pushes, and
// re-indexes exactly the files the merge changed. A failed push leaves
// everything local in place (committed); the error says why.
func (h *Host) FedSync(ctx context.Context, _ FedSyncRequest) (resp FedSyncResponse, err error) {
	start := time.Now()
	f := h.fed.Load()
	if f == nil {
		return resp, ErrNotFederated
	}
	cfg := h.config().Federation
	if cfg.Remote == "" {
		return resp, fault.BadInputf("remote", "no remote is set (federation.remote in config.yaml)")
	}
	// Edits made in an editor and not yet seen are committed under their
	// own message, then whatever is noted.
	if r, err := h.indexer.Fresh(ctx); err == nil {
		h.fedEdited(r)
	}
	if err := f.committer.Flush(ctx); err != nil {
		h.log.Warn("commit before sync", "err", err)
	}
	res, serr := f.repo.Sync(ctx, federation.SyncOptions{Remote: cfg.Remote, Branch: cfg.Branch, Now: h.now, Lock: h.notebook.Lock})
	resp.SyncResult = res
	if len(res.Changed) > 0 {
		paths := h.indexPaths(res.Changed)
		resp.Paths = paths
		if err := h.indexer.SyncPaths(ctx, paths...); err != nil {
			serr = errors.Join(serr, fmt.Errorf("re-index after the merge: %w", err))
		}
		resp.Indexed = len(paths)
	}
	resp.DurationMs = ms(time.Since(start))
	return resp, gitFault(serr)
}

// indexPaths are the index paths of home-relative files, leaving out
// the files the index does not hold.
func (h *Host) indexPaths(homeRel []string) []string {
	var paths []string
	for _, p := range homeRel {
		if ip := h.indexPathOf(p); ip != "" {
			paths = append(paths, ip)
		}
	}
	return paths
}

// indexPathOf is the index path of a home-relative file, "" when the
// index does not hold such files.
func (h *Host) indexPathOf(homeRel string) string {
	abs := filepath.Join(absHome(h.home), filepath.FromSlash(homeRel))
	if rel, err := filepath.Rel(h.notebook.Root(), abs); err == nil && filepath.IsLocal(rel) {
		if !strings.HasSuffix(rel, ".md") {
			return ""
		}
		return filepath.ToSlash(rel)
	}
	if rel, err := filepath.Rel(h.sessions.Dir, abs); err == nil && filepath.IsLocal(rel) && strings.HasSuffix(rel, ".jsonl") && !strings.HasPrefix(rel, ".") {
		return "sessions/" + filepath.ToSlash(rel)
	}
	return ""
}

// FederationStatus is the federation part of status and health.
type FederationStatus struct {
	Remote    string                `json:"remote,omitempty"`
	Branch    string                `json:"branch"`
	Head      string                `json:"head,omitempty"`
	State     federation.State      `json:"state"`
	Conflicts []federation.Conflict `json:"conflicts,omitempty"`
}

// federationStatus is nil when the home is not federated.
func (h *Host) federationStatus(ctx context.Context) *FederationStatus {
	f := h.fed.Load()
	if f == nil {
		return nil
	}
	cfg := h.config().Federation
	st := f.repo.ReadState()
	remote := redactRemote(cfg.Remote)
	if remote != cfg.Remote {
		st.LastError = strings.ReplaceAll(st.LastError, cfg.Remote, remote)
	}
	return &FederationStatus{Remote: remote, Branch: cfg.Branch, Head: f.repo.Head(ctx), State: st, Conflicts: st.Conflicts}
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

// federationCheck is health's check of federation: merges that kept both
// sides and failed syncs warn; a remote that rewrote its history, or that
// changed what is not shared (a plugin, a symlink, ..), fails.
func (h *Host) federationCheck(ctx context.Context) (health.Check, bool) {
	fs := h.federationStatus(ctx)
	if fs == nil {
		return health.Check{}, false
	}
	c := health.Check{Name: "federation", Status: health.Pass, Metadata: map[string]any{"remote": fs.Remote, "branch": fs.Branch,
		"lastSuccess": fs.State.LastSuccess, "failures": fs.State.Failures}}
	switch {
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

// federationLoop syncs with the remote every federation.pushIntervalSec
// (longer after failures) until ctx ends; Watch runs it (so `memhost
// serve` does) and waits for it to end. onGitSync hears of the re-indexing
// each merge did, and of each failed sync.
func (h *Host) federationLoop(ctx context.Context, onGitSync func(SyncResult)) {
	wait := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		cfg := h.config().Federation
		interval := time.Duration(cfg.PushIntervalSec) * time.Second
		wait = interval
		f := h.fed.Load()
		if f == nil {
			if !federation.Managed(h.home) {
				// `memhost git init` may run in another process: look again soon.
				wait = min(interval, unmanagedPoll)
				continue
			}
			f = h.startFederation()
		}
		if _, err := f.repo.Maintain(ctx, h.now()); err != nil && ctx.Err() == nil {
			h.log.Warn("git gc --auto failed; the repository keeps working, unpacked", "err", err)
		}
		if cfg.Remote == "" {
			continue
		}
		res, err := h.FedSync(ctx, FedSyncRequest{})
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			wait = f.repo.ReadState().Backoff(interval)
			h.log.Warn("federation sync failed; local memory is kept", "remote", cfg.Remote, "retry in", wait.String(), "err", err)
		}
		// A failed sync is told too: the dashboard's git card shows it.
		if onGitSync != nil && (res.Indexed > 0 || err != nil) {
			onGitSync(SyncResult{Paths: res.Paths, Indexed: res.Indexed, DurationMs: res.DurationMs})
		}
	}
}
