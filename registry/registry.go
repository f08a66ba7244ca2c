// Package registry finds embeddings provider plugins and runs them.
//
// A plugin is an executable named memhost-embeddings-<name> next to the
// memhost binary or in $MEMHOST_HOME/plugins/. Discovery hashes each binary;
// the registry then starts exactly that binary (go-plugin's SecureConfig
// refuses a binary whose SHA-256 changed), over gRPC only, with AutoMTLS, as
// a managed client that is killed when the registry closes. A running
// plugin is a Provider: calls time out, a crashed plugin is restarted with
// backoff and its configuration replayed, and vectors are checked before
// they reach the index.
//
// Registry and Provider are safe for concurrent use. A plugin starts on
// one goroutine at a time, outside the provider's lock, so Status, Ping
// and Pid answer at once while it starts. Acquire holds a provider so that
// Stop (as when listing plugins stops the inactive ones) never kills it
// under a call in flight; Provider, which holds nothing, remains for
// callers that tolerate that.
package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/memhost/memhost/sdk"
)

// Prefix starts every embeddings plugin binary's name.
const Prefix = "memhost-embeddings-"

// GeneratorPrefix starts every generator plugin binary's name.
const GeneratorPrefix = "memhost-generator-"

// Kind is the kind of plugin a Registry runs: one registry runs one kind,
// found by its own binary name prefix.
type Kind string

// Kinds.
const (
	Embeddings Kind = "embeddings" // sdk.Embedder, memhost-embeddings-<name>
	Generators Kind = "generator"  // sdk.Generator, memhost-generator-<name>
)

func (k Kind) prefix() string {
	if k == Generators {
		return GeneratorPrefix
	}
	return Prefix
}

func (k Kind) dispense() string {
	if k == Generators {
		return sdk.GeneratorPluginName
	}
	return sdk.PluginName
}

// Errors callers branch on.
var (
	ErrUnknownPlugin = errors.New("unknown embeddings plugin")
	ErrChecksum      = errors.New("plugin binary changed since it was discovered (SHA-256 mismatch); refusing to start it")
	ErrClosed        = errors.New("registry closed")
)

// Plugin is a discovered plugin binary.
type Plugin struct {
	Name   string `json:"name"`   // the binary's name without Prefix
	Path   string `json:"path"`   // absolute
	SHA256 string `json:"sha256"` // of the binary at discovery, hex
}

// Options configure a Registry. Zero values take the defaults.
type Options struct {
	// Kind is the kind of plugins run. Default Embeddings.
	Kind Kind
	// Dirs are searched in order; the first binary of a name wins.
	Dirs []string
	// Logger receives the registry's and the plugins' logs (plugins log
	// under their name). Default: discard.
	Logger hclog.Logger
	// StartTimeout bounds starting a plugin and its handshake. Default 10 s.
	StartTimeout time.Duration
	// CallTimeout bounds Info, Status and Configure calls. Default 5 s.
	CallTimeout time.Duration
	// EmbedTimeout bounds one Embed call. Default 2 minutes.
	EmbedTimeout time.Duration
	// CompleteTimeout bounds one Complete call of a generator, its
	// plugin's own retries included. Default 10 minutes.
	CompleteTimeout time.Duration
	// MaxBackoff caps the wait between restarts of a crashing plugin.
	// Restarts wait 250 ms, doubling up to this. Default 30 s.
	MaxBackoff time.Duration
	// Env is added to the environment plugins start with (KEY=value).
	Env []string
	// SocketDir is the folder plugins make their unix sockets in
	// (sockets.go); "" is the user's own: $XDG_RUNTIME_DIR/memhost, else
	// $TMPDIR/memhost-UID.
	SocketDir string
}

func (o *Options) defaults() {
	if o.Kind == "" {
		o.Kind = Embeddings
	}
	if o.CompleteTimeout == 0 {
		o.CompleteTimeout = 10 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = 5 * time.Second
	}
	if o.EmbedTimeout == 0 {
		o.EmbedTimeout = 2 * time.Minute
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = 30 * time.Second
	}
}

// Registry discovers and runs plugins. It is safe for concurrent use.
//
// It runs at most one Provider per plugin name, shared by every caller.
// Callers that use a provider across calls while other goroutines may
// Stop it take it with Acquire and release it when done; Stop then waits
// for the last release. Provider hands out the same provider without
// holding it, for callers that tolerate a Stop under them.
type Registry struct {
	opts Options

	mu         sync.Mutex
	plugins    map[string]Plugin // by name, pinned at discovery
	discovered bool              // Discover has scanned every folder
	providers  map[string]*slot
	closed     bool
}

// slot is a registered provider and who holds it; its fields are guarded
// by Registry.mu.
type slot struct {
	p    *Provider
	refs int  // Acquire calls not yet released
	stop bool // Stop came while refs > 0: close at the last release
}

// New returns a registry over opts.Dirs. It reads nothing until asked:
// hashing plugin binaries costs milliseconds each, so a plugin is
// discovered (and pinned) when it is first needed, or all of them by
// Discover.
func New(opts Options) *Registry {
	opts.defaults()
	return &Registry{opts: opts, plugins: map[string]Plugin{}, providers: map[string]*slot{}}
}

// Discover scans the plugin folders, hashing every plugin, and returns
// what it found, by name, and warnings about files it skipped.
func (r *Registry) Discover() ([]Plugin, []string) {
	found, warnings := r.scan("")
	r.mu.Lock()
	for name, pl := range found {
		if _, running := r.providers[name]; running {
			found[name] = r.plugins[name] // a running plugin keeps its pinned hash
		} else {
			r.plugins[name] = pl
		}
	}
	for name := range r.plugins {
		if _, ok := found[name]; !ok {
			delete(r.plugins, name)
		}
	}
	r.discovered = true
	r.mu.Unlock()
	return sortedPlugins(found), warnings
}

// scan finds plugins in the folders: all of them, or only the one named
// only.
func (r *Registry) scan(only string) (map[string]Plugin, []string) {
	found := map[string]Plugin{}
	var warnings []string
	for _, dir := range r.opts.Dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				warnings = append(warnings, fmt.Sprintf("plugin folder %s: %v", dir, err))
			}
			continue
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), r.opts.Kind.prefix()) {
				continue
			}
			path := filepath.Join(dir, e.Name())
			name := strings.TrimPrefix(e.Name(), r.opts.Kind.prefix())
			if only != "" && name != only {
				continue
			}
			fi, err := os.Stat(path)
			switch {
			case err != nil:
				warnings = append(warnings, fmt.Sprintf("skipping %s: %v", path, err))
				continue
			case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
				warnings = append(warnings, fmt.Sprintf("skipping %s: not an executable file", path))
				continue
			case name == "" || strings.ContainsAny(name, " \t"):
				warnings = append(warnings, fmt.Sprintf("skipping %s: no plugin name after %s", path, r.opts.Kind.prefix()))
				continue
			}
			if prev, dup := found[name]; dup {
				warnings = append(warnings, fmt.Sprintf("skipping %s: plugin %q is already %s", path, name, prev.Path))
				continue
			}
			sum, err := hashFile(path)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("skipping %s: %v", path, err))
				continue
			}
			abs, _ := filepath.Abs(path)
			found[name] = Plugin{Name: name, Path: abs, SHA256: sum}
		}
	}
	for _, w := range warnings {
		r.opts.Logger.Warn(w)
	}
	return found, warnings
}

// Names lists the plugins in the folders by name, without hashing them.
func (r *Registry) Names() []string {
	seen := map[string]bool{}
	var names []string
	for _, dir := range r.opts.Dirs {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			name := strings.TrimPrefix(e.Name(), r.opts.Kind.prefix())
			if name == e.Name() || name == "" || seen[name] {
				continue
			}
			if fi, err := os.Stat(filepath.Join(dir, e.Name())); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
				continue
			}
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func sortedPlugins(m map[string]Plugin) []Plugin {
	out := make([]Plugin, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Plugins returns the discovered plugins, by name order, discovering
// them all first if that was never done.
func (r *Registry) Plugins() []Plugin {
	r.mu.Lock()
	done := r.discovered
	r.mu.Unlock()
	if !done {
		r.Discover()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return sortedPlugins(r.plugins)
}

// Provider returns the running provider of a plugin, starting it (and
// configuring it with options) when needed, and waiting for a start
// another caller began. A provider already running with other options is
// configured again. When the start fails, Provider returns the provider
// too, to ask its Status; it retries after its backoff.
//
// The provider is not held: Stop may kill it at any time, after which its
// calls fail with ErrClosed. New code should use Acquire; Provider remains
// for callers that do not yet release what they use.
func (r *Registry) Provider(ctx context.Context, name string, options map[string]string) (*Provider, error) {
	s, err := r.slot(ctx, name, options, false)
	if s == nil {
		return nil, err
	}
	return s.p, err
}

// Acquire is Provider that also holds the provider until release is
// called: a Stop meanwhile is put off until the last holder releases it,
// so calls in flight are not killed under their callers. An Acquire (or
// Provider) after a Stop that is waiting for releases cancels that stop:
// the plugin is wanted again and keeps running. Close of the registry
// kills held providers all the same.
//
// release is never nil and must be called once the caller is done with
// the provider, whatever the error (it does nothing when nothing is held,
// as after ErrUnknownPlugin or ErrClosed, and calling it again does
// nothing). Like Provider, Acquire returns the provider with a failed
// start's error, held.
func (r *Registry) Acquire(ctx context.Context, name string, options map[string]string) (p *Provider, release func(), err error) {
	s, err := r.slot(ctx, name, options, true)
	if s == nil {
		return nil, func() {}, err
	}
	var once sync.Once
	return s.p, func() { once.Do(func() { r.release(name, s) }) }, err
}

// slot finds or registers name's provider, holding it when hold, then
// configures it with options and waits for it to start.
func (r *Registry) slot(ctx context.Context, name string, options map[string]string, hold bool) (*slot, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	pl, ok := r.plugins[name]
	if !ok {
		r.mu.Unlock()
		found, _ := r.scan(name) // discover and pin this one
		if pl, ok = found[name]; !ok {
			names := strings.Join(r.Names(), ", ")
			if names == "" {
				names = "none found"
			}
			shown := name // a refused name of megabytes is not echoed whole
			if r := []rune(shown); len(r) > 60 {
				shown = string(r[:60]) + "…"
			}
			if r.opts.Kind == Generators {
				return nil, &unknownGenerator{fmt.Sprintf("unknown generator plugin %q (installed: %s)", shown, names)}
			}
			return nil, fmt.Errorf("%w %q (installed: %s)", ErrUnknownPlugin, shown, names)
		}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, ErrClosed
		}
		if prev, raced := r.plugins[name]; raced {
			pl = prev
		} else {
			r.plugins[name] = pl
		}
	}
	s, running := r.providers[name]
	if running && s.p.isClosed() {
		// Closed by a caller (Provider.Close) rather than by Stop: it
		// would answer ErrClosed for ever. Its holders keep the old slot,
		// whose release then finds it replaced.
		running = false
	}
	if !running {
		s = &slot{p: newProvider(pl, options, r.opts)}
		r.providers[name] = s
	}
	s.stop = false
	if hold {
		s.refs++
	}
	r.mu.Unlock()
	if running && !equalOptions(s.p.options(), options) {
		if err := s.p.Configure(ctx, options); err != nil {
			if hold {
				r.release(name, s)
			}
			return nil, err
		}
	}
	if _, err := s.p.conn(ctx, true); err != nil {
		return s, err // the provider stays registered and retries later
	}
	return s, nil
}

// release lets go of one hold on s, closing its provider if a Stop is
// waiting for it.
func (r *Registry) release(name string, s *slot) {
	r.mu.Lock()
	s.refs--
	kill := s.refs == 0 && s.stop && r.providers[name] == s
	if kill {
		delete(r.providers, name)
	}
	r.mu.Unlock()
	if kill {
		s.p.Close()
	}
}

func equalOptions(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// Stop kills one plugin's process, if it runs, and waits for it to exit
// (a start in flight kills its process when it ends). If callers hold it (Acquire), Stop returns at once and the process is
// killed at the last release, unless an Acquire or Provider call comes
// first and cancels the stop. Callers of Provider hold nothing: their
// provider may be killed under them.
func (r *Registry) Stop(name string) {
	r.mu.Lock()
	s := r.providers[name]
	if s != nil && s.refs > 0 {
		s.stop = true
		s = nil
	} else if s != nil {
		delete(r.providers, name)
	}
	r.mu.Unlock()
	if s != nil {
		s.p.Close()
	}
}

// Close kills every plugin process, held or not: it is for shutdown.
// It does not wait for starts in flight, which kill what they started
// when they end. Every later Provider or Acquire returns ErrClosed, and
// calls on providers already handed out fail with ErrClosed.
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	ss := r.providers
	r.providers = map[string]*slot{}
	r.mu.Unlock()
	for _, s := range ss {
		s.p.Close()
	}
}

// KillAll kills every plugin process this process started, whatever
// registry started it; main calls it on the way out.
func KillAll() { plugin.CleanupClients() }

// clientConfig is how every plugin is started.
func clientConfig(pl Plugin, opts Options) (*plugin.ClientConfig, error) {
	sum, err := hex.DecodeString(pl.SHA256)
	if err != nil {
		return nil, err
	}
	cmd := execCommand(pl.Path)
	cmd.Env = append(os.Environ(), opts.Env...)
	if dir, err := socketDir(opts.SocketDir); err == nil {
		sweepOnce(dir)
		cmd.Env = append(cmd.Env, plugin.EnvUnixSocketDir+"="+dir)
	} else {
		opts.Logger.Warn("plugin sockets go to the system's temporary folder", "err", err)
	}
	return &plugin.ClientConfig{
		HandshakeConfig:  handshake,
		Plugins:          pluginMap,
		Cmd:              cmd,
		SecureConfig:     &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()},
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Managed:          true,
		// cmd.Env holds the environment already, then memhost's own
		// variables, which must win (go-plugin would append the
		// environment again, and the last of a name is the one used).
		SkipHostEnv:  true,
		StartTimeout: opts.StartTimeout,
		Logger:       opts.Logger.Named(pl.Name),
	}, nil
}
