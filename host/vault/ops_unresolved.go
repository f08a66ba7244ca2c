package vault

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/health"
)

// unresolvedCache keeps the notebook's unresolved links for one state of
// the index's pages and links (index.DB.VaultGeneration, which every page
// write changes, by this process or another) and of the notebook's
// attachments, which links may name too: Status, Health and
// memhost links --unresolved read them often, and resolving every link of
// a large notebook costs far more than checking that nothing changed.
type unresolvedCache struct {
	mu          sync.Mutex
	gen         string
	attachments []string
	links       []memhost.LinkInfo
}

// unresolvedLinks lists the links of the index's pages that find no page
// or attachment, by page and line (the index is not synced first). The
// generation is read before the pages and links, so that a write meanwhile
// leaves the list stale for the next call to see, never kept as current.
// Callers must not modify the list.
func (s *VaultService) UnresolvedLinks(ctx context.Context) ([]memhost.LinkInfo, error) {
	c := &s.unresolved
	c.mu.Lock()
	defer c.mu.Unlock()
	gen, err := s.k.Index().VaultGeneration(ctx)
	if err != nil {
		return nil, err
	}
	att := s.attachments()
	if c.links != nil && gen == c.gen && slices.Equal(att, c.attachments) {
		return c.links, nil
	}
	g, err := s.graph(ctx, false, true)
	if err != nil {
		return nil, err
	}
	list := g.unresolved()
	if list == nil {
		list = []memhost.LinkInfo{}
	}
	c.gen, c.attachments, c.links = gen, att, list
	return list, nil
}

// linksCheck is health's check of the notebook's links: pass when every
// link finds a page or attachment, else warn with how many do not and a
// few of them.
func (s *VaultService) LinksCheck(ctx context.Context) memhost.HealthCheck {
	c := memhost.HealthCheck{Name: "links", Status: health.Pass}
	list, err := s.UnresolvedLinks(ctx)
	if err != nil {
		c.Status, c.Message = health.Fail, "links: "+err.Error()
		return c
	}
	c.Metadata = map[string]any{"unresolved": len(list)}
	if len(list) == 0 {
		c.Message = "every link finds a page or attachment"
		return c
	}
	var ex []string
	for _, l := range list[:min(3, len(list))] {
		ex = append(ex, fmt.Sprintf("%s:%d → %s", l.Page, l.Line, l.Target))
	}
	more := ""
	if len(list) > 3 {
		more = ", ..."
	}
	what := "1 link finds"
	if len(list) > 1 {
		what = fmt.Sprintf("%d links find", len(list))
	}
	// Told, not warned of: a vault often links to pages not written yet
	// (Obsidian shows them as pages to create), which is no fault of the
	// memory; health stays healthy.
	c.Message = fmt.Sprintf("%s no page or attachment (%s%s): see memhost links --unresolved", what, strings.Join(ex, ", "), more)
	return c
}

// attachmentCache keeps the list of the notebook's attachments with the
// modification time of each folder it walked: a file added, removed or
// renamed changes its folder's time, so while no folder's has changed the
// list stands, checked with a stat per folder instead of reading every
// folder's entries. A folder changed shortly before the walk (within
// racyWindow, as timestamps are coarse) makes the next call walk again.
type attachmentCache struct {
	mu    sync.Mutex
	dirs  map[string]time.Time // folder (absolute) → modification time at the walk
	racy  bool
	files []string
}

// racyWindow is how recent a folder's change may be for a walk to be
// trusted later: a change within it may share the folder's timestamp.
const racyWindow = 2 * time.Second

// attachments lists the notebook's other files (images, PDFs, canvases),
// which links may name, skipping hidden folders such as .obsidian. Callers
// must not modify the list.
func (s *VaultService) attachments() []string {
	c := &s.attachmentsKept
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirs != nil && !c.racy {
		same := true
		for d, mt := range c.dirs {
			if fi, err := os.Stat(d); err != nil || !fi.ModTime().Equal(mt) {
				same = false
				break
			}
		}
		if same {
			return c.files
		}
	}
	start := time.Now()
	c.dirs, c.files, c.racy = map[string]time.Time{}, nil, false
	root := s.k.Notebook().Root()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			c.racy = true // walk again next time
			return nil
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			fi, err := d.Info()
			if err != nil {
				c.racy = true
				return nil
			}
			c.dirs[p] = fi.ModTime()
			if fi.ModTime().After(start.Add(-racyWindow)) {
				c.racy = true
			}
			return nil
		}
		if d.Type().IsRegular() && !strings.EqualFold(filepath.Ext(p), ".md") {
			if r, err := filepath.Rel(root, p); err == nil {
				c.files = append(c.files, filepath.ToSlash(r))
			}
		}
		return nil
	})
	return c.files
}

// ForgetKept drops the kept unresolved links and attachment list, so that
// the next call resolves every link and walks the notebook again, as
// status did on every call before they were kept (BenchmarkUnresolved).
func (s *VaultService) ForgetKept() {
	s.unresolved.mu.Lock()
	s.unresolved.links = nil
	s.unresolved.mu.Unlock()
	s.attachmentsKept.mu.Lock()
	s.attachmentsKept.dirs = nil
	s.attachmentsKept.mu.Unlock()
}
