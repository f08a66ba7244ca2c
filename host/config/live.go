package config

import (
	"errors"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Live is the configuration in force in a long-lived process: a snapshot
// replaced whole (copy-on-write), never changed in place, so a call that
// read it once sees one consistent configuration throughout. With Getenv
// set, the file is read again when it changed on disk (another process or a
// person edited it); a bad or missing file is logged and the snapshot in
// force stays. The paths (notebookDir, database, modelsDir) are read once
// by host.Open: a change to them takes a restart.
// It is safe for concurrent use.
type Live struct {
	path   string
	getenv func(string) string // nil: never reload
	log    *slog.Logger
	now    func() time.Time // the clock of reloadCheck; time.Now but in tests

	snap    atomic.Pointer[snapshot]
	checked atomic.Int64 // when the file was last stat'ed, Unix ns
	mu      sync.Mutex   // serialises reloads and edits
}

// snapshot is one configuration and what is derived from it.
type snapshot struct {
	cfg   Config
	loc   *time.Location
	stamp fileStamp // of the file when it was read
	// err says why the file as it is now is not in force (it cannot be
	// parsed or holds a bad value); nil when cfg is the file's.
	err error
}

type fileStamp struct {
	size  int64
	mtime time.Time
}

// reloadCheck is how often the file is looked at for changes: Get is called
// many times per operation, a stat each time would show.
const reloadCheck = time.Second

// NewLive validates cfg (read from path) and makes it the configuration in
// force. getenv, when not nil, enables reloading path with those
// environment overrides.
func NewLive(path string, cfg Config, getenv func(string) string, log *slog.Logger) (*Live, error) {
	l := &Live{path: path, getenv: getenv, log: log, now: time.Now}
	s, err := newSnapshot(cfg, l.stamp())
	if err != nil {
		return nil, err
	}
	l.snap.Store(s)
	return l, nil
}

func newSnapshot(cfg Config, stamp fileStamp) (*snapshot, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	loc, err := cfg.Location()
	if err != nil {
		return nil, err
	}
	return &snapshot{cfg: cfg, loc: loc, stamp: stamp}, nil
}

// Recheck makes the next Get look at the file at once, rather than up to
// reloadCheck later: a server calls it per request, so that an edit made
// just before a command is in force for it, as it is for a command run
// in-process.
func (l *Live) Recheck() { l.checked.Store(0) }

// Get returns the configuration in force. It must not be changed: use Edit.
func (l *Live) Get() *Config { return &l.current().cfg }

// Err says why config.yaml as it is on disk is not the configuration in
// force: its YAML or a value is wrong (the error names the file and the
// line or key), and the settings read before stay in force. It is nil when
// the file is in force, and while the file is missing (an editor that
// removes it before saving), which is no wish for other settings.
func (l *Live) Err() error { return l.current().err }

// Location is the time zone of the configuration in force.
func (l *Live) Location() *time.Location { return l.current().loc }

func (l *Live) current() *snapshot {
	s := l.snap.Load()
	if l.getenv == nil {
		return s
	}
	now := l.now().UnixNano()
	if last := l.checked.Load(); now-last < int64(reloadCheck) || !l.checked.CompareAndSwap(last, now) {
		return s
	}
	if st := l.stamp(); st != s.stamp {
		l.mu.Lock()
		defer l.mu.Unlock()
		if s = l.snap.Load(); st != s.stamp {
			l.reload(st)
		}
		s = l.snap.Load()
	}
	return s
}

// reload reads the file again; called with mu held.
func (l *Live) reload(st fileStamp) {
	cfg, err := Load(l.path, l.getenv)
	missing := err == nil && st == (fileStamp{})
	if missing {
		// Gone (or mid-save by an editor that removes it first): a file
		// that is not there is not a wish for the defaults.
		err = errors.New("config.yaml is missing")
	}
	var s *snapshot
	if err == nil {
		s, err = newSnapshot(cfg, st)
	}
	if err != nil {
		l.log.Warn("config.yaml changed but cannot be used; keeping the settings in force", "err", err)
		old := *l.snap.Load()
		old.stamp = st // do not read it again until it changes again
		old.err = err
		if missing {
			old.err = nil
		}
		l.snap.Store(&old)
		return
	}
	l.snap.Store(s)
}

func (l *Live) stamp() fileStamp {
	fi, err := os.Stat(l.path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{fi.Size(), fi.ModTime()}
}

// Edit replaces the configuration in force by a copy changed by edit;
// calls holding the old snapshot keep it. The file is not written (see
// SetPlugin); its current state is taken as read.
func (l *Live) Edit(edit func(*Config)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := *l.snap.Load()
	s.cfg = s.cfg.Clone()
	edit(&s.cfg)
	s.stamp = l.stamp()
	l.snap.Store(&s)
}

// Clone copies c deeply: changing the copy's plugin options leaves c alone.
func (c *Config) Clone() Config {
	out := *c
	opts := make(map[string]map[string]string, len(c.Memory.Embedding.Options))
	for name, o := range c.Memory.Embedding.Options {
		m := make(map[string]string, len(o))
		for k, v := range o {
			m[k] = v
		}
		opts[name] = m
	}
	out.Memory.Embedding.Options = opts
	out.Memory.Generator.Options = cloneOptions(c.Memory.Generator.Options)
	out.Health.Alerts.Command = slices.Clone(c.Health.Alerts.Command)
	return out
}
