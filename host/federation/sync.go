package federation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/federation/filemerge"
	"github.com/memhost/memhost/host/federation/gitrepo"
)

// Errors callers branch on.
var (
	// ErrRewritten means the remote branch no longer holds a commit this
	// home merged from it before: its history was rewritten (a force
	// push). Nothing is merged or pushed; the local memory is untouched
	// and the remote's new history is kept under refs/memhost/rewritten/.
	ErrRewritten = errors.New("the remote rewrote its history")
	// ErrNoRemote means federation.remote is not set.
	ErrNoRemote = errors.New("no remote is set")
)

// SyncOptions configure one Sync.
type SyncOptions struct {
	Remote string // URL or path of the remote repository (required)
	Branch string // default "main"
	// Lock, when set, is held while the work tree is updated, so that
	// memhost's own writes do not interleave with it (the host passes the
	// notebook's lock).
	Lock func(ctx context.Context) (func(), error)
	Now  func() time.Time
}

// trackingRef is where the remote branch is fetched to.
func trackingRef(branch string) string { return "refs/remotes/memhost/" + branch }

// seenRef is the remote commit this home last merged: a later remote tip
// must descend from it, or the remote rewrote history.
const seenRef = "refs/memhost/seen"

// Sync fetches the remote branch, merges it into the home (committing
// local changes first), updates the work tree, and pushes. Syncs of one
// home run one at a time, across processes.
func (r *Repo) Sync(ctx context.Context, opts SyncOptions) (res memhost.GitSyncResult, err error) {
	if opts.Remote == "" {
		return res, ErrNoRemote
	}
	if opts.Branch == "" {
		opts.Branch = "main"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	res.Remote, res.Branch = opts.Remote, opts.Branch
	unlock, err := r.lockFile(ctx, "sync.lock")
	if err != nil {
		return res, err
	}
	defer unlock()
	defer func() { err = errors.Join(err, r.recordSync(opts.Now(), res, err)) }()

	rec, err := r.recover(ctx)
	res.Recovered = rec
	if err != nil {
		return res, err
	}
	if _, err := r.CommitAll(ctx, "sync: local changes"); err != nil {
		return res, err
	}
	res.Before, err = r.g().Rev(ctx, "HEAD")
	if err != nil {
		return res, err
	}
	// Whatever ends the sync (a fetch failing in a later round, after a
	// merge), the caller learns which files the merges changed, to index.
	defer func() {
		res.After, _ = r.g().Rev(ctx, "HEAD")
		if changed, cerr := r.changedFiles(ctx, res.Before, res.After); cerr == nil {
			res.Changed = changed
		} else if err == nil {
			err = cerr
		}
	}()
	for round := 1; ; round++ {
		if err := r.fetch(ctx, opts); err != nil {
			return res, err
		}
		theirs, err := r.g().Rev(ctx, trackingRef(opts.Branch))
		if err != nil {
			return res, err
		}
		if err := r.checkHistory(ctx, theirs); err != nil {
			return res, err
		}
		if theirs != "" {
			// What the remote changes is looked at before anything merges.
			head, err := r.g().Rev(ctx, "HEAD")
			if err != nil {
				return res, err
			}
			if err := r.checkRemote(ctx, head, theirs); err != nil {
				return res, err
			}
			if err := r.mergeIn(ctx, opts, theirs, &res); err != nil {
				return res, err
			}
		}
		// Nothing of ours to push (a pull that fast-forwarded, or no
		// change on either side): the remote holds HEAD already.
		if head, err := r.g().Rev(ctx, "HEAD"); err == nil && theirs != "" && head == theirs {
			res.Pushed = true
			break
		}
		perr := r.push(ctx, opts)
		if perr == nil {
			res.Pushed = true
			break
		}
		// Rejected because the remote moved on meanwhile: merge again.
		if round < 3 && r.rejected(ctx, opts) {
			continue
		}
		res.PushError = perr.Error()
		break
	}
	if res.PushError != "" {
		return res, fault.Errorf(fault.Unavailable, "remote", "push to %s failed (local memory is kept and committed; retried later): %s", opts.Remote, res.PushError)
	}
	return res, nil
}

// fetch brings the remote branch to trackingRef, forced: whether the
// remote's history may be taken is checkHistory's decision. A missing
// branch (a new, empty remote) is not an error.
func (r *Repo) fetch(ctx context.Context, opts SyncOptions) error {
	fetch := func() error {
		_, err := r.Git(ctx, "fetch", "-q", "--no-tags", "--no-write-fetch-head", "--", opts.Remote,
			"+refs/heads/"+opts.Branch+":"+trackingRef(opts.Branch))
		return err
	}
	ferr := fetch()
	if ferr == nil {
		return nil
	}
	// A fetch of a killed memhost may still be running, holding the
	// tracking ref's lock (or have died leaving it): wait for it to end,
	// or to go stale, and fetch again.
	if waited, _, err := r.g().WaitLock(ctx, filepath.Join(r.g().GitDir(), filepath.FromSlash(trackingRef(opts.Branch))+".lock")); err != nil {
		return err
	} else if waited {
		if ferr = fetch(); ferr == nil {
			return nil
		}
	}
	// Unreachable, or reachable without the branch yet: ask.
	out, err := r.Git(ctx, "ls-remote", "--heads", "--", opts.Remote, "refs/heads/"+opts.Branch)
	if err != nil {
		return fault.Errorf(fault.Unavailable, "remote", "cannot reach %s: %v", opts.Remote, err)
	}
	if strings.TrimSpace(out) == "" {
		return nil
	}
	return fault.Errorf(fault.Unavailable, "remote", "cannot fetch from %s: %v", opts.Remote, ferr)
}

// checkHistory refuses a remote tip that does not descend from the last
// one merged, keeping it under refs/memhost/rewritten/ for inspection.
func (r *Repo) checkHistory(ctx context.Context, theirs string) error {
	seen, err := r.g().Rev(ctx, seenRef)
	if err != nil || seen == "" {
		return err
	}
	if theirs == "" {
		return fault.Errorf(fault.Conflict, "remote", "%w: the branch was deleted on the remote after this home merged %s; nothing merged or pushed, local memory kept", ErrRewritten, seen[:12])
	}
	ok, err := r.g().IsAncestor(ctx, seen, theirs)
	if err != nil || ok {
		return err
	}
	keep := "refs/memhost/rewritten/" + theirs[:12]
	r.Git(ctx, "update-ref", keep, theirs)
	return &fault.Error{Kind: fault.Conflict, Field: "remote", Err: ErrRewritten,
		Message: fmt.Sprintf("%v: commit %s merged earlier is no longer in it; nothing merged or pushed, local memory kept (the remote's new history is at %s)", ErrRewritten, seen[:12], keep)}
}

// markSeen moves seenRef to theirs, merged. A git of a killed memhost may
// still hold the ref's lock, or have died leaving it: wait for it to end,
// or to go stale (gitrepo.WaitLock), first.
func (r *Repo) markSeen(ctx context.Context, theirs string) error {
	if _, _, err := r.g().WaitLock(ctx, filepath.Join(r.g().GitDir(), filepath.FromSlash(seenRef)+".lock")); err != nil {
		return err
	}
	_, err := r.Git(ctx, "update-ref", seenRef, theirs)
	return err
}

// mergeIn merges theirs into HEAD and updates the work tree.
func (r *Repo) mergeIn(ctx context.Context, opts SyncOptions, theirs string, res *memhost.GitSyncResult) error {
	for attempt := 1; ; attempt++ {
		head, err := r.g().Rev(ctx, "HEAD")
		if err != nil {
			return err
		}
		target := ""
		switch {
		case head == "":
			target = theirs
		case head == theirs:
		default:
			if in, err := r.g().IsAncestor(ctx, theirs, head); err != nil {
				return err
			} else if in {
				break
			}
			if ff, err := r.g().IsAncestor(ctx, head, theirs); err != nil {
				return err
			} else if ff {
				target = theirs
				res.Merged = "fast-forward"
			} else {
				target, err = r.mergeCommit(ctx, opts, head, theirs, res)
				if err != nil {
					return err
				}
				res.Merged = "merge"
			}
		}
		if target == "" {
			return r.markSeen(ctx, theirs)
		}
		err = r.apply(ctx, opts, head, target)
		if err == nil {
			return r.markSeen(ctx, theirs)
		}
		if !errors.Is(err, gitrepo.ErrDirty) || attempt == 5 {
			return err
		}
		// A write landed between the commit and the update: commit it
		// and merge again.
		if _, err := r.CommitAll(ctx, "sync: local changes"); err != nil {
			return err
		}
	}
}

// apply moves HEAD and the work tree from head to target, a descendant of
// head, under opts.Lock. Files changed locally since head are never
// overwritten: gitrepo.ErrDirty, and the caller commits and merges again.
func (r *Repo) apply(ctx context.Context, opts SyncOptions, head, target string) error {
	if opts.Lock != nil {
		unlock, err := opts.Lock(ctx)
		if err != nil {
			return err
		}
		defer unlock()
	}
	unlock, err := r.lockFile(ctx, "commit.lock")
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := r.g().WaitIndexLock(ctx); err != nil {
		return err
	}
	// A commit landed since head was read (memhost's committer needs
	// neither lock until it commits): target no longer descends from
	// HEAD, so merge again, as for a local change.
	if now, err := r.g().Rev(ctx, "HEAD"); err != nil {
		return err
	} else if now != head {
		return gitrepo.ErrDirty
	}
	changes, err := r.checkMove(ctx, head, target)
	if err != nil {
		return err
	}
	// A FIFO, a symlink or a folder where a file changes: one clear line,
	// before git or the fast path meets it (git would refuse, and the
	// sync retry in vain as if a write had raced it).
	if err := r.g().CheckWorkTree(changes); err != nil {
		return err
	}
	if head == "" {
		// An unborn branch: take theirs as it is, keeping local files.
		if _, err := r.Git(ctx, "reset", "-q", target); err != nil {
			return err
		}
		dirty, err := r.Git(ctx, "status", "--porcelain", "-uno")
		if err != nil {
			return err
		}
		if strings.TrimSpace(dirty) != "" {
			return gitrepo.ErrDirty
		}
		return nil
	}
	// Only the files that differ, without git refreshing the whole index
	// (gitrepo's FastForward); git merge where that does not apply.
	switch err := r.g().FastForward(ctx, head, target, opts.Now()); {
	case err == nil:
		return nil
	case errors.Is(err, gitrepo.ErrDirty):
		return gitrepo.ErrDirty
	}
	_, err = r.Git(ctx, "merge", "-q", "--ff-only", "--no-edit", target)
	if err != nil {
		// merge refuses to overwrite local changes; anything else is a
		// real failure. Tell them apart by the state, not the message.
		if dirty, derr := r.Git(ctx, "status", "--porcelain"); derr == nil && strings.TrimSpace(dirty) != "" {
			return gitrepo.ErrDirty
		}
		return err
	}
	return nil
}

// mergeCommit makes the merge commit of head and theirs without touching
// the work tree: git merge-tree merges what it can; the files it cannot
// are merged by memhost's rules (package filemerge, gitrepo's MergeText); the result is committed
// with both parents.
func (r *Repo) mergeCommit(ctx context.Context, opts SyncOptions, head, theirs string, res *memhost.GitSyncResult) (string, error) {
	out, err := r.Git(ctx, "merge-tree", "--write-tree", "-z", "--no-messages", "--allow-unrelated-histories", head, theirs)
	if err != nil && gitrepo.ExitCode(err) != 1 {
		return "", err
	}
	fields := strings.Split(out, "\x00")
	tree := fields[0]
	type stages [4]string // [1] base, [2] ours, [3] theirs: blob ids
	conflicted := map[string]*stages{}
	var order []string
	for _, f := range fields[1:] {
		if f == "" {
			break
		}
		meta, p, ok := strings.Cut(f, "\t")
		parts := strings.Fields(meta)
		if !ok || len(parts) != 3 {
			return "", fmt.Errorf("git merge-tree: unexpected output %q", f)
		}
		st, ok := conflicted[p]
		if !ok {
			st = &stages{}
			conflicted[p] = st
			order = append(order, p)
		}
		switch parts[2] {
		case "1":
			st[1] = parts[1]
		case "2":
			st[2] = parts[1]
		case "3":
			st[3] = parts[1]
		}
	}
	var updates []string // update-index --index-info lines
	now := opts.Now().UTC().Format(time.RFC3339)
	tmp := filepath.Join(r.g().GitDir(), "memhost", "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", err
	}
	for _, p := range order {
		st := conflicted[p]
		read := func(oid string) ([]byte, error) {
			if oid == "" {
				return nil, nil
			}
			return r.g().Blob(ctx, oid)
		}
		base, err := read(st[1])
		if err != nil {
			return "", err
		}
		ours, err := read(st[2])
		if err != nil {
			return "", err
		}
		theirsData, err := read(st[3])
		if err != nil {
			return "", err
		}
		// A file git moved aside (PATH~ID) because the other side put a
		// folder where it was: the version kept goes to a sibling page
		// beside the folder and is reported, never left under a name
		// that is not shared or indexed.
		if orig, ok := r.movedAside(p); ok {
			data, reason := ours, "the other side made it a folder; this side's version is kept in the sibling"
			if st[2] == "" {
				data, reason = theirsData, "this side made it a folder; the other side's version is kept in the sibling"
			}
			sib := filemerge.SiblingPath(orig, theirs)
			oid, err := r.g().HashObject(ctx, data)
			if err != nil {
				return "", err
			}
			updates = append(updates, "0 "+strings.Repeat("0", 40)+"\t"+p, "100644 "+oid+"\t"+sib)
			res.Conflicts = append(res.Conflicts, memhost.Conflict{Path: orig, Sibling: sib, Time: now, Reason: reason})
			continue
		}
		var merged []byte
		ok := true
		reason, kept := "", false
		switch {
		case st[2] == "" && st[3] == "":
			updates = append(updates, "0 "+strings.Repeat("0", 40)+"\t"+p)
			continue
		case st[2] == "" || st[3] == "":
			// Changed on one side, deleted on the other: the change is
			// kept, and reported (the deletion did not happen).
			merged, kept = ours, true
			reason = "deleted on the other side and changed here: this side's version is kept"
			if st[2] == "" {
				merged = theirsData
				reason = "deleted here and changed on the other side: the other side's version is kept"
			}
		case strings.HasSuffix(p, ".jsonl"):
			merged = filemerge.JSONL(base, ours, theirsData)
		case st[1] == "" && !filemerge.IsDailyLog(p) && !filemerge.IsList(p) && filemerge.IsText(ours) && filemerge.IsText(theirsData):
			merged, ok = filemerge.AddedOnBoth(ours, theirsData)
			reason = "both sides created it with different content"
		case filemerge.IsText(ours) && filemerge.IsText(theirsData):
			merged, ok, err = r.g().MergeText(ctx, tmp, base, ours, theirsData)
			if err != nil {
				return "", err
			}
			reason = "both sides changed the same lines"
		default:
			ok, reason = false, "not a text file"
		}
		if !ok {
			merged = ours
			sib := filemerge.SiblingPath(p, theirs)
			oid, err := r.g().HashObject(ctx, theirsData)
			if err != nil {
				return "", err
			}
			updates = append(updates, "100644 "+oid+"\t"+sib)
			res.Conflicts = append(res.Conflicts, memhost.Conflict{Path: p, Sibling: sib, Time: now, Reason: reason})
		}
		oid, err := r.g().HashObject(ctx, merged)
		if err != nil {
			return "", err
		}
		updates = append(updates, "100644 "+oid+"\t"+p)
		if kept {
			res.Conflicts = append(res.Conflicts, memhost.Conflict{Path: p, Time: now, Reason: reason, Kept: oid})
		}
	}
	if len(updates) > 0 {
		idx, drop, err := r.g().TempIndex()
		if err != nil {
			return "", err
		}
		defer drop()
		env := []string{"GIT_INDEX_FILE=" + idx}
		if _, err := r.g().GitIO(ctx, nil, env, "read-tree", tree); err != nil {
			return "", err
		}
		if _, err := r.g().GitIO(ctx, strings.NewReader(strings.Join(updates, "\n")+"\n"), env, "update-index", "--index-info"); err != nil {
			return "", err
		}
		t, err := r.g().GitIO(ctx, nil, env, "write-tree")
		if err != nil {
			return "", err
		}
		tree = strings.TrimSpace(string(t))
	}
	msg := "sync: merge " + theirs[:12] + " from the remote"
	for _, c := range res.Conflicts {
		if c.Sibling == "" {
			msg += "\n\nconflict: " + c.Path + " (" + c.Reason + ")"
		} else {
			msg += "\n\nconflict: " + c.Path + " (" + c.Sibling + " kept too: " + c.Reason + ")"
		}
	}
	c, err := r.g().GitIO(ctx, nil, nil, "commit-tree", tree, "-p", head, "-p", theirs, "-m", msg)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(c)), nil
}

// push pushes HEAD to the remote branch (never forced).
func (r *Repo) push(ctx context.Context, opts SyncOptions) error {
	_, err := r.Git(ctx, "push", "-q", "--", opts.Remote, "HEAD:refs/heads/"+opts.Branch)
	return err
}

// rejected reports whether the remote branch now holds a commit HEAD does
// not: a push was refused because the remote moved on.
func (r *Repo) rejected(ctx context.Context, opts SyncOptions) bool {
	out, err := r.Git(ctx, "ls-remote", "--heads", "--", opts.Remote, "refs/heads/"+opts.Branch)
	if err != nil {
		return false
	}
	tip, _, _ := strings.Cut(strings.TrimSpace(out), "\t")
	if tip == "" {
		return false
	}
	head, err := r.g().Rev(ctx, "HEAD")
	if err != nil || head == "" {
		return false
	}
	if tip == head {
		return false
	}
	// The tip may not be here yet; if it is and HEAD holds it, the push
	// failed for another reason.
	if have, _ := r.g().Rev(ctx, tip); have != "" {
		in, _ := r.g().IsAncestor(ctx, tip, head)
		return !in
	}
	return true
}

// changedFiles lists the home-relative files that differ between two
// commits.
func (r *Repo) changedFiles(ctx context.Context, a, b string) ([]string, error) {
	if a == b || b == "" {
		return nil, nil
	}
	var out string
	var err error
	if a == "" {
		out, err = r.Git(ctx, "ls-tree", "-r", "-z", "--name-only", b)
	} else {
		out, err = r.Git(ctx, "diff", "--no-renames", "-z", "--name-only", a, b)
	}
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// recover finishes what a killed memhost or git left: a stale index lock,
// an interrupted `git merge` (conflict markers in the work tree: the
// merge is aborted, both sides being commits, and merged again by this
// sync), an interrupted rebase.
func (r *Repo) recover(ctx context.Context) ([]string, error) {
	var did []string
	gd := r.g().GitDir()
	if removed, err := r.g().WaitIndexLock(ctx); err != nil {
		return did, err
	} else if removed {
		did = append(did, "removed a stale lock (.git/index.lock or the branch's) left by a killed git")
	}
	if _, err := os.Stat(filepath.Join(gd, "MERGE_HEAD")); err == nil {
		mh, _ := os.ReadFile(filepath.Join(gd, "MERGE_HEAD"))
		id := strings.TrimSpace(string(mh))
		if id != "" {
			r.Git(ctx, "update-ref", "refs/memhost/interrupted-merge", id)
		}
		if _, err := r.Git(ctx, "merge", "--abort"); err != nil {
			if _, err := r.Git(ctx, "reset", "-q", "--merge"); err != nil {
				return did, fmt.Errorf("an interrupted merge cannot be aborted: %w", err)
			}
		}
		did = append(did, "aborted an interrupted merge of "+gitrepo.Short(id)+" (kept at refs/memhost/interrupted-merge; merged again now)")
	}
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(gd, d)); err == nil {
			if _, err := r.Git(ctx, "rebase", "--abort"); err != nil {
				return did, fmt.Errorf("an interrupted rebase cannot be aborted: %w", err)
			}
			did = append(did, "aborted an interrupted rebase")
		}
	}
	return did, nil
}

// movedAside reports whether p is a file git merge-tree moved aside
// (PATH~ID) from a shared path where the other side put a folder, and
// that path.
func (r *Repo) movedAside(p string) (string, bool) {
	i := strings.LastIndexByte(p, '~')
	if i <= 0 || r.Shares(p) || !r.Shares(p[:i]) {
		return "", false
	}
	return p[:i], true
}

func isRewritten(err error) bool { return errors.Is(err, ErrRewritten) }
