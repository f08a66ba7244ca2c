package federation

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/federation/gitrepo"
	"github.com/memhost/memhost/internal/fsx"
)

// MaxBackoff bounds the wait after failed syncs (memhost.GitMaxBackoff).
const MaxBackoff = memhost.GitMaxBackoff

func (r *Repo) statePath() string { return filepath.Join(r.g().GitDir(), "memhost", "state.json") }

// ReadState reads the state; conflicts the person resolved are left
// out: the sibling page is gone, or the file kept over a deletion was
// changed or removed since.
func (r *Repo) ReadState() memhost.GitState {
	var s memhost.GitState
	data, err := os.ReadFile(r.statePath())
	if err == nil {
		json.Unmarshal(data, &s)
	}
	open := s.Conflicts[:0:0]
	for _, c := range s.Conflicts {
		if c.Sibling != "" && r.exists(c.Sibling) || c.Sibling == "" && c.Kept != "" && r.holds(c.Path, c.Kept) {
			open = append(open, c)
		}
	}
	s.Conflicts = open
	return s
}

// recordSync records a sync's outcome in the state file; the error is the
// state file's.
func (r *Repo) recordSync(now time.Time, res memhost.GitSyncResult, err error) error {
	return r.editState(func(s *memhost.GitState) {
		s.LastSync = now.UTC().Format(time.RFC3339)
		s.Conflicts = append(s.Conflicts, res.Conflicts...)
		s.Rewritten, s.Refused = false, false
		if err == nil {
			s.LastSuccess, s.LastError, s.Failures = s.LastSync, "", 0
		} else {
			s.LastError = err.Error()
			s.Failures++
			s.Rewritten = isRewritten(err)
			s.Refused = isRefused(err)
		}
	})
}

// editState changes the state file (its writers hold sync.lock or
// commit.lock; the file is replaced whole and flushed, so readers see one
// version, and a crash leaves the old or the new).
func (r *Repo) editState(edit func(*memhost.GitState)) error {
	s := r.ReadState()
	edit(&s)
	data, err := json.MarshalIndent(s, "", "  ")
	if err == nil {
		err = fsx.WriteFileAtomic(r.statePath(), data, 0o600)
	}
	if err != nil {
		return fmt.Errorf("recording the federation state: %w", err)
	}
	return nil
}

// gcAuto is git's gc.auto threshold for Maintain: git's default.
var gcAuto = 6700

// MaintainEvery is how often Maintain lets git pack loose objects.
const MaintainEvery = 24 * time.Hour

// Maintain runs `git gc --auto` (which packs the loose objects commits
// leave once there are more than git's default 6,700) at most once per
// MaintainEvery: memhost turns git's automatic maintenance off in every
// command it runs, so that no commit or pull waits for a repack. The
// serve loop calls it. It reports whether gc ran.
func (r *Repo) Maintain(ctx context.Context, now time.Time) (bool, error) {
	if last, err := time.Parse(time.RFC3339, r.ReadState().LastMaintenance); err == nil && now.Sub(last) < MaintainEvery {
		return false, nil
	}
	unlock, err := r.lockFile(ctx, "commit.lock")
	if err != nil {
		return false, err
	}
	defer unlock()
	_, err = r.Git(ctx, "-c", fmt.Sprintf("gc.auto=%d", gcAuto), "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet")
	if err != nil {
		return false, err
	}
	return true, r.editState(func(s *memhost.GitState) { s.LastMaintenance = now.UTC().Format(time.RFC3339) })
}

// exists reports whether p (a conflict sibling) is still in the work
// tree.
func (r *Repo) exists(p string) bool {
	_, err := os.Stat(filepath.Join(r.Dir, filepath.FromSlash(path.Clean(p))))
	return err == nil
}

// holds reports whether the file at p still holds the blob oid: a
// regular file beneath the home, no symlink followed on its path.
func (r *Repo) holds(p, oid string) bool {
	home, err := r.g().OpenHome()
	if err != nil {
		return false
	}
	defer home.Close()
	data, err := home.ReadFile(path.Clean(p), fsx.NoLinks)
	return err == nil && gitrepo.BlobID(data) == oid
}
