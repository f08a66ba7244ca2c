// Package host is memhost's application: notebook operations, sync of the
// notebook into the index, search, and context assembly.
//
// Every command of the CLI is one Host method with a plain request and
// response struct that marshal to JSON, so that a long-lived server can run
// the same methods later. A Host holds no global state and every method is
// safe to call concurrently; several processes may share one home.
package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/registry"
)

// Sentinel errors callers branch on. Path errors come from package notebook
// (notebook.ErrNotFound, notebook.ErrOutsideNotebook, notebook.ErrBadPath).
var (
	ErrEmptyText = errors.New("text is empty")
	ErrBadInput  = errors.New("invalid input")
)

// Options configure Open.
type Options struct {
	Home   string        // required: the memhost home folder
	Config config.Config // from config.Load
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time
	// Log receives progress and warnings; nil discards them.
	Log *slog.Logger
	// PluginDirs are searched for plugin binaries before
	// $MEMHOST_HOME/plugins (the CLI passes the memhost binary's folder).
	PluginDirs []string
	// PluginLog receives the registry's and the plugins' logs; nil
	// discards them.
	PluginLog hclog.Logger
	// Background, when set, is called (at most once per Host) when chunks
	// are left in the embedding queue, to have them embedded without
	// blocking the caller (the CLI starts `memhost embed` detached).
	Background func() error
}

// Host is one open memhost home.
type Host struct {
	home     string
	cfg      config.Config
	loc      *time.Location
	now      func() time.Time
	log      *slog.Logger
	notebook *notebook.Notebook
	idx      *index.DB
	syncMu   sync.Mutex // one sync at a time in this process

	pluginDirs []string
	hlog       hclog.Logger
	background func() error
	bgOnce     sync.Once
	regOnce    sync.Once
	reg        *registry.Registry // see registry(); nil until first use
	cacheMu    sync.Mutex
	embCache   *index.Cache // see cache(); nil until first use
	tempHome   string       // removed by Close (eval homes)
}

// Folders of a home, made by Open.
var homeDirs = []string{"sessions", "brain", "cache", "models", "plugins"}

// Open opens (creating it when missing) the home in opts.
func Open(ctx context.Context, opts Options) (*Host, error) {
	if opts.Home == "" {
		return nil, fmt.Errorf("%w: no home folder given", ErrBadInput)
	}
	cfg := opts.Config
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	loc, err := cfg.Location()
	if err != nil {
		return nil, err
	}
	h := &Host{home: opts.Home, cfg: cfg, loc: loc, now: opts.Now, log: opts.Log,
		pluginDirs: opts.PluginDirs, hlog: opts.PluginLog, background: opts.Background}
	if h.hlog == nil {
		h.hlog = hclog.NewNullLogger()
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for _, d := range homeDirs {
		if err := os.MkdirAll(filepath.Join(h.home, d), 0o755); err != nil {
			return nil, fmt.Errorf("home %s: %w", h.home, err)
		}
	}
	h.notebook, err = notebook.Open(h.path(cfg.Memory.NotebookDir), filepath.Join(h.home, "brain", "notebook.lock"))
	if err != nil {
		return nil, err
	}
	dbPath := h.path(cfg.Memory.Database)
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o755); err != nil {
		return nil, err
	}
	h.idx, err = openIndex(ctx, dbPath, h.log)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// openIndex opens the index, moving a corrupt database aside: the index is
// derived, so the next sync rebuilds it from the notebook.
func openIndex(ctx context.Context, path string, log *slog.Logger) (*index.DB, error) {
	db, err := index.Open(ctx, path)
	var se sqlite3.Error
	if err == nil || !errors.As(err, &se) || (se.Code != sqlite3.ErrNotADB && se.Code != sqlite3.ErrCorrupt) {
		return db, err
	}
	aside := fmt.Sprintf("%s.corrupt-%d", path, time.Now().Unix())
	log.Warn("index is corrupt; moving it aside and rebuilding", "path", path, "aside", aside)
	if err := os.Rename(path, aside); err != nil {
		return nil, fmt.Errorf("index %s is corrupt and cannot be moved aside: %w", path, err)
	}
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	return index.Open(ctx, path)
}

// path resolves a config path against the home.
func (h *Host) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(h.home, p)
}

// Close stops the plugins this Host started and closes the index.
func (h *Host) Close() error {
	if h.reg != nil {
		h.reg.Close()
	}
	h.cacheMu.Lock()
	if h.embCache != nil {
		h.embCache.Close()
	}
	h.cacheMu.Unlock()
	err := h.idx.Close()
	if h.tempHome != "" {
		os.RemoveAll(h.tempHome)
	}
	return err
}

// Home is the home folder.
func (h *Host) Home() string { return h.home }

// NotebookDir is the notebook's absolute path.
func (h *Host) NotebookDir() string { return h.notebook.Root() }

// Config is the configuration in force.
func (h *Host) Config() config.Config { return h.cfg }

// sourceOf names the result group an index path belongs to.
func sourceOf(rel string) string {
	switch {
	case isSessionPath(rel):
		return SourceSessions
	case strings.HasPrefix(rel, "daily/"):
		return SourceDaily
	}
	return SourceNotebook
}

// absPath is where an index path lives on disk: transcripts in the home's
// sessions folder, pages in the notebook.
func (h *Host) absPath(rel string) string {
	if isSessionPath(rel) {
		return filepath.Join(h.home, filepath.FromSlash(rel))
	}
	return h.notebook.Abs(rel)
}

// Result groups.
const (
	SourceNotebook = "notebook"
	SourceDaily    = "daily"
)

// Sources lists the groups in display order: the index's, whose chunk id
// ranges follow it.
var Sources = index.Sources

// Lines is a 1-based inclusive line range.
type Lines struct {
	Start int `json:"start"`
	End   int `json:"end"`
}
