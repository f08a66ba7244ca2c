// Package host is memhost's application: one open home and every operation
// on it. Each operation is a method X(ctx, XRequest) (XResponse, error)
// with plain structs that marshal to JSON, so the CLI, the HTTP API and
// MCP run the same code; errors are *fault.Error (or carry a fault.Kind),
// which each interface words its own way.
//
// Host is thin wiring over the packages that do the work: notebook (pages,
// atomic writes, routing), indexer (sync, rebuild, watch), search (ranking
// and fusion), embedq (provider readiness, the embedding queue and its
// worker), sessions (transcripts, ingest, compaction) and the registry of
// plugins.
//
// Concurrency: one Host may be used from many goroutines at once. The
// configuration is replaced copy-on-write (config.Live: a call reads one
// snapshot throughout); syncs queue on the indexer's mutex; page edits
// take the notebook's lock (a flock, so other processes too); the
// embedding queue runs once at a time per process and per home; plugins
// are started and stopped by the registry. Several processes may share one
// home. TestHostConcurrentUse drives every operation at once under -race.
package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/browse"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/conversations"
	"github.com/memhost/memhost/host/embedq"
	"github.com/memhost/memhost/host/episodes"
	"github.com/memhost/memhost/host/federated"
	"github.com/memhost/memhost/host/health"
	"github.com/memhost/memhost/host/indexer"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/providers"
	"github.com/memhost/memhost/host/recall"
	"github.com/memhost/memhost/host/requests"
	"github.com/memhost/memhost/host/semantic"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/host/skills"
	"github.com/memhost/memhost/host/vault"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/index/vectors"
	calendar "github.com/memhost/memhost/internal/clock"
	"github.com/memhost/memhost/registry"
)

// Errors callers branch on (with errors.Is). Other errors carry a
// fault.Kind: fault.KindOf(err).
var (
	// ErrEmptyText means a text to write holds nothing but white space.
	ErrEmptyText = notebook.ErrEmptyText
	// ErrProviderNotReady means semantic search cannot run now; a
	// keyword-only answer says why in its Reason.
	ErrProviderNotReady = embedq.ErrNotReady
)

// Options configure Open.
type Options struct {
	Home   string        // required: the memhost home folder
	Config config.Config // from config.Load
	// Getenv, when set, lets the Host reload config.yaml when another
	// process (or a person) changes it: the file is read again with these
	// environment overrides. Nil keeps Config for the Host's life.
	Getenv func(string) string
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
	// are left in the embedding queue and no worker runs, to have them
	// embedded without blocking the caller (the CLI starts `memhost embed`
	// detached).
	Background func() error
	// ScheduleMinute is the length of a minute of the schedules counted in
	// minutes (consolidation's, the episode logs'); 0 is a minute. Tests
	// shorten it.
	ScheduleMinute time.Duration
	// HealthTimer replaces time.After as the health schedule's timer;
	// tests fire it themselves.
	HealthTimer func(time.Duration) <-chan time.Time
}

// Host is one open memhost home.
type Host struct {
	home       string
	now        func() time.Time
	log        *slog.Logger
	pluginDirs []string
	hlog       hclog.Logger

	live   *config.Live
	closed atomic.Bool

	notebook *notebook.Notebook
	once     *once.Writes // the writes clients may run again, with their journal
	idx      *index.DB
	vecs     *vectors.DB // idx's vectors, with the bits of the last search
	indexer  *indexer.Indexer
	queue    *embedq.Queue
	changes  changeBus  // changes.go
	loops    supervisor // the services' background loops (supervisor.go)
	// movedAside is where Open moved a corrupt index ("" if it did not,
	// or a health repair has rebuilt it since).
	movedAside atomic.Value
	// privacy is what Open found readable by others in the home and made
	// private (repaired), or could not (open); set once, then read only.
	privacy  struct{ repaired, open []string }
	secrets  redactor // redact.go
	sessions *sessions.Store
	reg      *registry.Registry
	watch    watchState         // the file watcher's, for Health
	gens     *registry.Registry // generator plugins (host/providers)
	// providers runs the plugins and models operations (the methods
	// below); its helpers are the kernel's, not the Host's API.
	providers *providers.ProviderService

	// API runs every operation through the middleware chain (Open:
	// refusing while config.yaml is broken, then publishing, changes.go)
	// to impl. Its methods are the Host's operations: they shadow impl's,
	// so no caller reaches an operation around the chain.
	api.API
	impl impl // the operations and the services; reached by Host code only
}

// impl is the Host's operations, unwrapped: the Host's own (hostOps) and
// the feature services'. Each operation is defined once among them (two
// would make its name ambiguous and impl no api.API: a compile error in
// Open). The services' other methods (their loops and hooks) are the
// Host's code's to call (h.impl.RunLoop), not the Host's API: impl is a
// field of the Host, not embedded.
type impl struct {
	hostOps
	*browse.BrowseService
	*semantic.FactService
	*vault.VaultService
	*health.HealthService
	*conversations.SessionService
	*episodes.EpisodeService
	*federated.FederationService
	*recall.RecallService
	*skills.SkillService
}

// hostOps holds the operations the Host runs itself (pages, indexing,
// plugins and models, secrets), reached only through the chain.
type hostOps struct{ h *Host }

// Folders of a home, made by Open.
var homeDirs = []string{"sessions", "brain", "cache", "models", "plugins"}

// Open opens (creating it when missing) the home in opts.
func Open(ctx context.Context, opts Options) (*Host, error) {
	if opts.Home == "" {
		return nil, fault.BadInputf("home", "no home folder given")
	}
	h := &Host{home: opts.Home, now: opts.Now, log: opts.Log,
		pluginDirs: opts.PluginDirs, hlog: opts.PluginLog}
	if h.hlog == nil {
		h.hlog = hclog.NewNullLogger()
	}
	if h.now == nil {
		h.now = calendar.Now
	}
	if h.log == nil {
		h.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var err error
	h.privacy.repaired, h.privacy.open, err = makePrivate(h.home)
	if err != nil {
		return nil, err
	}
	h.live, err = config.NewLive(filepath.Join(h.home, config.FileName), opts.Config, opts.Getenv, h.log)
	if err != nil {
		return nil, err
	}
	for _, d := range homeDirs {
		if err := os.MkdirAll(filepath.Join(h.home, d), 0o700); err != nil {
			return nil, fmt.Errorf("home %s: %w", h.home, err)
		}
	}
	cfg := h.live.Get()
	h.notebook, err = notebook.Open(h.path(cfg.Memory.NotebookDir), filepath.Join(h.home, "brain", "notebook.lock"))
	if err != nil {
		return nil, err
	}
	opened := false
	defer func() {
		if !opened {
			h.notebook.Close() // its root descriptor
		}
	}()
	h.once = &once.Writes{Journal: requests.Open(filepath.Join(h.home, "brain", "requests")), Notebook: h.notebook}
	dbPath := h.path(cfg.Memory.Database)
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o700); err != nil {
		return nil, err
	}
	var aside string
	h.idx, aside, err = openIndex(ctx, dbPath, h.log)
	h.movedAside.Store(aside)
	if err != nil {
		return nil, err
	}
	h.vecs = vectors.New(h.idx)
	sessDir, err := filepath.Abs(filepath.Join(h.home, "sessions"))
	if err != nil {
		return nil, err
	}
	h.sessions = &sessions.Store{Dir: sessDir, Now: h.now, Redact: h.redact}
	h.indexer = indexer.New(indexer.Options{Notebook: h.notebook, SessionsDir: sessDir, Index: h.idx,
		Config: h.config, Now: h.now, CookieDir: filepath.Join(h.home, "brain", "watch"), Log: h.log})
	dirs := append(append([]string(nil), h.pluginDirs...), filepath.Join(h.home, "plugins"))
	h.reg = registry.New(registry.Options{Dirs: dirs, Logger: h.hlog, Env: []string{
		"MEMHOST_HOME=" + h.home,
		"MEMHOST_MODELS_DIR=" + h.path(cfg.Memory.Embedding.ModelsDir),
	}})
	h.gens = registry.New(registry.Options{Kind: registry.Generators, Dirs: dirs, Logger: h.hlog, Env: []string{"MEMHOST_HOME=" + h.home}})
	h.providers = providers.New(kernel{h}, h.reg, h.gens)
	h.queue = embedq.New(embedq.Options{Vectors: h.vecs, Registry: h.reg, Config: h.config,
		CachePath: filepath.Join(h.home, "cache", "embeddings.db"), LockPath: filepath.Join(h.home, "brain", "embed.lock"),
		Log: h.log, Background: opts.Background, Now: h.now, ModelMissing: h.providers.ModelMissing})
	h.impl.RecallService = recall.New(kernel{h})
	h.impl.BrowseService = browse.New(kernel{h})
	h.impl.FactService = semantic.New(kernel{h}, opts.ScheduleMinute)
	h.impl.VaultService = vault.New(kernel{h})
	h.impl.HealthService = health.New(kernel{h}, opts.HealthTimer)
	h.impl.SessionService = conversations.New(kernel{h})
	h.impl.EpisodeService = episodes.New(kernel{h}, opts.ScheduleMinute)
	h.impl.FederationService = federated.New(kernel{h})
	h.impl.SkillService = skills.New(kernel{h})
	h.impl.hostOps = hostOps{h}
	h.API = api.Wrap(&h.impl, h.refusing, h.publishing)
	// Git federation (a no-op until the home is a memhost repository
	// with a remote), consolidation on a schedule
	// (memory.generator.consolidateEveryMin), the episode logs'
	// (memory.episodes.everyMin) and the health check (health.everyMin)
	// run while the home is watched.
	h.loops.add("git-sync", func(ctx context.Context, req WatchRequest) { h.impl.FederationService.RunLoop(ctx, req.OnGitSync) })
	h.loops.add("consolidate", func(ctx context.Context, _ WatchRequest) { h.impl.FactService.RunSchedule(ctx) })
	h.loops.add("episodes", func(ctx context.Context, _ WatchRequest) { h.impl.EpisodeService.RunSchedule(ctx) })
	h.loops.add("health", func(ctx context.Context, _ WatchRequest) { h.impl.HealthService.RunSchedule(ctx) })
	h.Subscribe(h.impl.FederationService.Note) // commits nothing until the home is a memhost repository
	h.impl.OpenFederation()
	opened = true
	return h, nil
}

// openIndex opens the index, moving a corrupt database aside (under a
// name of its own, kept for inspection, returned): the index is derived,
// so the next sync rebuilds it from the notebook.
func openIndex(ctx context.Context, path string, log *slog.Logger) (*index.DB, string, error) {
	db, err := index.Open(ctx, path)
	if !index.IsCorrupt(err) {
		return db, "", err
	}
	aside, merr := index.MoveAside(path)
	if merr != nil {
		return nil, "", fmt.Errorf("index %s is corrupt (%v) and cannot be moved aside: %w", path, err, merr)
	}
	log.Warn("index is corrupt; moved it aside, rebuilding", "path", path, "aside", aside, "err", err)
	db, err = index.Open(ctx, path)
	return db, aside, err
}

// path resolves a config path against the home.
func (h *Host) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(h.home, p)
}

// Close stops the embedding worker and the plugins this Host started, and
// closes the index. Calls after Close fail; a second Close does nothing.
func (h *Host) Close() error {
	if h.closed.Swap(true) {
		return nil
	}
	ferr := h.impl.CloseFederation()
	qerr := h.queue.Close()
	h.reg.Close()
	h.gens.Close()
	err := h.idx.Close()
	nerr := h.notebook.Close()
	return errors.Join(ferr, qerr, err, nerr)
}

// Home is the home folder.
func (h *Host) Home() string { return h.home }

// NotebookDir is the notebook's absolute path.
func (h *Host) NotebookDir() string { return h.notebook.Root() }

// Config is the configuration in force: a copy the caller may keep.
func (h *Host) Config() config.Config { return h.config().Clone() }

// RecheckConfig makes the next operation read config.yaml again if it
// changed on disk (otherwise that is checked at most once a second). A
// server calls it once per request.
func (h *Host) RecheckConfig() { h.live.Recheck() }

// ConfigError says why config.yaml as it is on disk is not in force (the
// settings read before are), as an Unavailable error about "config"; nil
// when it is. A command run in a process of its own refuses to start on
// such a file; a server answers with this error.
func (h *Host) ConfigError() error {
	if err := h.live.Err(); err != nil {
		return fault.Errorf(fault.Unavailable, "config", "%w", err)
	}
	return nil
}

// refusing is the chain's first middleware: while config.yaml cannot be
// used (ConfigError), every operation answers that error, in every
// transport (the server, the CLI and stdio MCP in-process, the
// dashboard), rather than act with settings the file no longer holds.
// The server and MCP refuse their endpoints that are not operations
// (health, debug, resources) themselves.
func (h *Host) refusing(ctx context.Context, _ api.Operation, _ any, next func(context.Context) (any, error)) (any, error) {
	if err := h.ConfigError(); err != nil {
		return nil, err
	}
	return next(ctx)
}

// config is the configuration snapshot in force (see config.Live). It must
// not be changed: edits go through editConfig.
func (h *Host) config() *config.Config { return h.live.Get() }

func (h *Host) loc() *time.Location { return h.live.Location() }

// Now is the Host's clock (Options.Now) in the daily logs' time zone
// (config's timezone): what "today" is for the notebook. Views such as the
// dashboard read it so that they agree with the daily log about the date.
func (h *Host) Now() time.Time { return h.now().In(h.loc()) }

// editConfig replaces the configuration in force by a copy changed by
// edit (copy-on-write: calls that hold the old snapshot keep it).
func (h *Host) editConfig(edit func(*config.Config)) { h.live.Edit(edit) }

// Result groups.
const (
	SourceNotebook = indexer.SourceNotebook
	SourceDaily    = indexer.SourceDaily
	SourceSessions = sessions.Source
)

// Sources lists the groups in display order: the index's, whose chunk id
// ranges follow it.
var Sources = index.Sources

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Derive opens another home with this Host's plugin folders, logs and
// clock, and a copy of its configuration changed by edit (when not nil).
// The models folder stays this home's, so models are shared. Used by the
// eval, which measures search on homes of its own.
func (h *Host) Derive(ctx context.Context, home string, edit func(*config.Config)) (*Host, error) {
	cfg := h.Config()
	cfg.Memory.Embedding.ModelsDir = h.path(cfg.Memory.Embedding.ModelsDir)
	if edit != nil {
		edit(&cfg)
	}
	return Open(ctx, Options{Home: home, Config: cfg, Now: h.now, Log: h.log, PluginDirs: h.pluginDirs, PluginLog: h.hlog})
}
