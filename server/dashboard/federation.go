package dashboard

import (
	"context"
	"path/filepath"

	"github.com/memhost/memhost"
)

// The home screen's git federation card (docs/design-notes.md, "Git
// federation"): the remote, the branch, the last successful sync, failed
// syncs and their error, and the merges that kept both sides of a page
// (the page and its sibling, linked, with what to do about them). Only a
// home that is a memhost git repository has the card.

// fedCard is what the card shows.
type fedCard struct {
	*memhost.FederationStatus
	Remote    string // with a password in the URL masked
	LastError string // State.LastError, the remote in it masked the same way
	Conflicts []fedConflict
}

// fedConflict is a conflict with its two pages as notebook paths, the
// dashboard's page links ("" when a file is outside the notebook: the card
// shows its home path without a link).
type fedConflict struct {
	memhost.Conflict
	Page, SiblingPage string
}

// fedData reads the card's data; nil when the home is not federated.
func (d *Dashboard) fedData(ctx context.Context) *fedCard {
	fs := d.h.FederationSummary(ctx)
	if fs == nil {
		return nil
	}
	// The host masks a password in the remote and its errors.
	c := &fedCard{FederationStatus: fs, Remote: fs.Remote, LastError: fs.State.LastError}
	for _, cf := range fs.Conflicts {
		c.Conflicts = append(c.Conflicts, fedConflict{Conflict: cf, Page: d.notebookPath(cf.Path), SiblingPage: d.notebookPath(cf.Sibling)})
	}
	return c
}

// notebookPath is the notebook path of a home-relative file, "" when the
// file is not a page of the notebook.
func (d *Dashboard) notebookPath(homeRel string) string {
	home, err := filepath.Abs(d.h.Home())
	if err != nil {
		return ""
	}
	root, err := filepath.Abs(d.h.NotebookDir())
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(root, filepath.Join(home, filepath.FromSlash(homeRel)))
	if err != nil || !filepath.IsLocal(rel) || filepath.Ext(rel) != ".md" {
		return ""
	}
	return filepath.ToSlash(rel)
}
