package registry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/memhost/memhost/sdk"
)

var (
	handshake = sdk.Handshake
	pluginMap = sdk.PluginMap(nil) // every kind: Options.Kind says which is dispensed
)

func execCommand(path string) *exec.Cmd { return exec.Command(path) }

// ErrRestarting means the plugin crashed and waits out its backoff before
// the next start.
var ErrRestarting = errors.New("plugin crashed, restarting")

// ErrStarting means another caller is starting the plugin; Ping returns
// it rather than wait, and Status reports it as StateLoading.
var ErrStarting = errors.New("plugin starting")

// ErrBadVectors means a plugin returned vectors memhost will not store.
var ErrBadVectors = errors.New("plugin returned unusable vectors")

// ErrReconfigured means the plugin's model changed (another caller
// configured it) while a call was in flight: its vectors are of another
// model than the caller asked for. Retrying is right.
var ErrReconfigured = errors.New("plugin was reconfigured during the call")

// Provider is a running plugin, seen as an sdk.Embedder. Its process is
// started on first use and restarted after a crash; every call has a
// timeout. It is safe for concurrent use.
//
// One goroutine at a time starts the plugin, outside the provider's lock:
// Info, Configure, Embed and EmbedWithin wait for a start in flight (up to
// their context), while Status, Ping and Pid answer at once.
type Provider struct {
	plugin Plugin
	opts   Options

	// mu guards the fields below. It is never held across a plugin start,
	// a call to the plugin or a Kill, so Status and Pid never wait on one.
	mu       sync.Mutex
	client   *plugin.Client
	rpc      plugin.ClientProtocol
	emb      sdk.Provider // the plugin's client: an sdk.Embedder, or an sdk.Generator (Options.Kind)
	info     sdk.Info     // from the last start or Configure
	cfg      map[string]string
	starting *start    // the start in flight, nil when none
	failures int       // consecutive failed starts or crashes
	retryAt  time.Time // no start before this
	lastErr  error
	closed   bool

	// A readiness check that passed (MarkReady): the plugin process it
	// was made on, when, and the description then.
	readyEmb  sdk.Provider
	readyAt   time.Time
	readyInfo sdk.Info
}

// start is one attempt to start the plugin, shared by every caller that
// needs the plugin while it runs. err is set before done is closed.
type start struct {
	done chan struct{}
	err  error
}

var _ sdk.Embedder = (*Provider)(nil)

func newProvider(pl Plugin, options map[string]string, opts Options) *Provider {
	return &Provider{plugin: pl, opts: opts, cfg: copyOptions(options)}
}

func copyOptions(o map[string]string) map[string]string {
	c := make(map[string]string, len(o))
	for k, v := range o {
		c[k] = v
	}
	return c
}

// Plugin is the binary this provider runs.
func (p *Provider) Plugin() Plugin { return p.plugin }

func (p *Provider) options() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return copyOptions(p.cfg)
}

func (p *Provider) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// conn returns the live plugin. When it is not running and its backoff has
// passed, conn starts it in the background; then wait says whether to wait
// for that start (up to ctx) or to return ErrStarting at once.
func (p *Provider) conn(ctx context.Context, wait bool) (sdk.Provider, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		if p.client != nil && !p.client.Exited() {
			emb := p.emb
			p.mu.Unlock()
			return emb, nil
		}
		s := p.starting
		if s == nil {
			if p.client != nil {
				p.opts.Logger.Warn("plugin exited; restarting it", "plugin", p.plugin.Name)
				dead := p.dropLocked(errors.New("the plugin process exited"))
				p.mu.Unlock()
				dead.Kill() // reaps it and its log goroutines; it has exited, so this is quick
				continue
			}
			if wait := time.Until(p.retryAt); wait > 0 {
				err := fmt.Errorf("plugin %s: %w (next try in %v; last error: %v)", p.plugin.Name, ErrRestarting, wait.Round(10*time.Millisecond), p.lastErr)
				p.mu.Unlock()
				return nil, err
			}
			s = &start{done: make(chan struct{})}
			p.starting = s
			// Not bound to this caller's cancellation: the others waiting
			// for the start must not fail because this caller gave up. The
			// start has its own timeouts.
			go p.run(context.WithoutCancel(ctx), s, copyOptions(p.cfg))
		}
		p.mu.Unlock()
		if !wait {
			return nil, fmt.Errorf("plugin %s: %w", p.plugin.Name, ErrStarting)
		}
		select {
		case <-s.done:
			if s.err != nil {
				return nil, s.err
			}
			// Started: loop to take it, or to see it closed or dead since.
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// run starts the plugin for s and publishes the result.
func (p *Provider) run(ctx context.Context, s *start, cfg map[string]string) {
	client, rpc, emb, info, err := p.launch(ctx, cfg)
	p.mu.Lock()
	p.starting = nil
	var orphan *plugin.Client
	switch {
	case p.closed:
		// Close came during the start and had nothing to kill yet.
		orphan, err = client, ErrClosed
	case err != nil:
		p.failLocked(err)
	default:
		p.client, p.rpc, p.emb, p.info = client, rpc, emb, info
		p.failures, p.lastErr = 0, nil
	}
	s.err = err
	p.mu.Unlock()
	if orphan != nil {
		orphan.Kill()
	}
	close(s.done)
}

// launch starts the plugin process, hands it cfg and asks its Info. It
// kills what it started when any step fails.
func (p *Provider) launch(ctx context.Context, cfg map[string]string) (*plugin.Client, plugin.ClientProtocol, sdk.Provider, sdk.Info, error) {
	var none sdk.Info
	ccfg, err := clientConfig(p.plugin, p.opts)
	if err != nil {
		return nil, nil, nil, none, err
	}
	client := plugin.NewClient(ccfg)
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		if errors.Is(err, plugin.ErrChecksumsDoNotMatch) {
			return nil, nil, nil, none, fmt.Errorf("plugin %s (%s): %w", p.plugin.Name, p.plugin.Path, ErrChecksum)
		}
		return nil, nil, nil, none, fmt.Errorf("plugin %s (%s) did not start: %v", p.plugin.Name, p.plugin.Path, oneLine(err))
	}
	fail := func(err error) (*plugin.Client, plugin.ClientProtocol, sdk.Provider, sdk.Info, error) {
		client.Kill()
		return nil, nil, nil, none, err
	}
	raw, err := rpc.Dispense(p.opts.Kind.dispense())
	if err != nil {
		return fail(fmt.Errorf("plugin %s: %v", p.plugin.Name, err))
	}
	emb, ok := raw.(sdk.Provider)
	if !ok {
		return fail(fmt.Errorf("plugin %s is not a %s provider", p.plugin.Name, p.opts.Kind))
	}
	cctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	// Replay the configuration: after a restart the plugin knows nothing.
	if err := emb.Configure(cctx, cfg); err != nil {
		return fail(fmt.Errorf("plugin %s: configure: %w", p.plugin.Name, err))
	}
	info, err := emb.Info(cctx)
	if err != nil {
		return fail(fmt.Errorf("plugin %s: info: %w", p.plugin.Name, err))
	}
	return client, rpc, emb, info, nil
}

// failLocked records a failed start or a crash and sets the backoff.
func (p *Provider) failLocked(err error) {
	p.failures++
	p.lastErr = err
	backoff := 250 * time.Millisecond << min(p.failures-1, 16)
	p.retryAt = time.Now().Add(min(backoff, p.opts.MaxBackoff))
}

// dropLocked forgets the running plugin and returns its client, which the
// caller kills once it has released mu: Kill waits up to seconds for the
// process to exit.
func (p *Provider) dropLocked(reason error) *plugin.Client {
	c := p.client
	p.client, p.rpc, p.emb = nil, nil, nil
	p.failLocked(reason)
	return c
}

// dropIf drops the plugin if it is still emb; a call that failed on a
// plugin already replaced must not kill the new one.
func (p *Provider) dropIf(emb sdk.Provider, reason error) {
	p.mu.Lock()
	var dead *plugin.Client
	if p.emb == emb && p.client != nil {
		dead = p.dropLocked(reason)
	}
	p.mu.Unlock()
	if dead != nil {
		dead.Kill()
	}
}

// call runs fn against the plugin with a timeout, waiting for a start in
// flight.
func (p *Provider) call(ctx context.Context, timeout time.Duration, fn func(context.Context, sdk.Provider) error) error {
	emb, err := p.conn(ctx, true)
	if err == nil {
		err = p.invoke(ctx, emb, timeout, fn)
	}
	if err != nil {
		p.forgetReady()
	}
	return err
}

// invoke runs fn against emb with a timeout; a transport failure or a
// hang marks the plugin dead so the next call restarts it.
func (p *Provider) invoke(ctx context.Context, emb sdk.Provider, timeout time.Duration, fn func(context.Context, sdk.Provider) error) error {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := fn(cctx, emb)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sdk.ErrUnavailable):
		p.dropIf(emb, err)
		return fmt.Errorf("plugin %s: %w", p.plugin.Name, err)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		// The plugin hung: kill it rather than leave a stuck process.
		p.dropIf(emb, err)
		return fmt.Errorf("plugin %s did not answer within %v; restarting it", p.plugin.Name, timeout)
	}
	return fmt.Errorf("plugin %s: %w", p.plugin.Name, err)
}

// Info asks the plugin for its description, waiting for a start in flight.
func (p *Provider) Info(ctx context.Context) (sdk.Info, error) {
	var info sdk.Info
	err := p.call(ctx, p.opts.CallTimeout, func(ctx context.Context, e sdk.Provider) (err error) {
		info, err = e.Info(ctx)
		return err
	})
	if err == nil {
		p.mu.Lock()
		p.info = info
		p.mu.Unlock()
	}
	return info, err
}

// Status returns the plugin's readiness; it never fails and never waits
// for a start. While a start is in flight it reports StateLoading with
// the message "plugin starting"; a plugin not running whose backoff has
// passed is started in the background and reported the same way. A
// crashed plugin waiting for its restart, or one that fails to answer,
// reports StateError with the reason.
func (p *Provider) Status(ctx context.Context) (sdk.Status, error) {
	emb, err := p.conn(ctx, false)
	if errors.Is(err, ErrStarting) {
		return sdk.Status{State: sdk.StateLoading, Message: ErrStarting.Error()}, nil
	}
	var st sdk.Status
	if err == nil {
		err = p.invoke(ctx, emb, p.opts.CallTimeout, func(ctx context.Context, e sdk.Provider) (err error) {
			st, err = e.Status(ctx)
			return err
		})
	}
	if err != nil {
		return sdk.Status{State: sdk.StateError, Message: oneLine(err)}, nil
	}
	return st, nil
}

// Configure sets the plugin's options, waiting for a start in flight;
// they are replayed after restarts. The provider is shared: every holder
// sees the new options.
func (p *Provider) Configure(ctx context.Context, options map[string]string) error {
	err := p.call(ctx, p.opts.CallTimeout, func(ctx context.Context, e sdk.Provider) error {
		if err := e.Configure(ctx, options); err != nil {
			return err
		}
		info, err := e.Info(ctx)
		if err == nil {
			p.mu.Lock()
			p.info = info
			p.mu.Unlock()
		}
		return err
	})
	p.mu.Lock()
	p.readyAt = time.Time{} // whatever it answered, its readiness is to be asked again
	if err == nil {
		p.cfg = copyOptions(options)
	}
	p.mu.Unlock()
	return err
}

// Embed embeds texts and checks the vectors: as many as texts, all of the
// dimensions Info reports, all finite. It waits up to Options.EmbedTimeout.
func (p *Provider) Embed(ctx context.Context, texts []string, kind sdk.Kind) ([][]float32, error) {
	return p.EmbedWithin(ctx, texts, kind, p.opts.EmbedTimeout)
}

// EmbedWithin is Embed with its own timeout; a plugin that does not
// answer within it is killed and restarted on the next call.
func (p *Provider) EmbedWithin(ctx context.Context, texts []string, kind sdk.Kind, timeout time.Duration) ([][]float32, error) {
	var vecs [][]float32
	err := p.call(ctx, timeout, func(ctx context.Context, e sdk.Provider) (err error) {
		emb, ok := e.(sdk.Embedder)
		if !ok {
			return fmt.Errorf("%w: a %s plugin does not embed", sdk.ErrBadRequest, p.opts.Kind)
		}
		vecs, err = emb.Embed(ctx, texts, kind)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := p.checkVectors(ctx, texts, vecs); err != nil {
		// Whatever the last readiness check found no longer holds.
		p.forgetReady()
		return nil, err
	}
	return vecs, nil
}

// checkVectors checks Embed's vectors for texts.
func (p *Provider) checkVectors(ctx context.Context, texts []string, vecs [][]float32) error {
	p.mu.Lock()
	dims := p.info.Dimensions
	p.mu.Unlock()
	if len(vecs) != len(texts) {
		return fmt.Errorf("plugin %s: %w: %d vectors for %d texts", p.plugin.Name, ErrBadVectors, len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) != dims {
			// The provider is shared: a Configure may have changed the
			// model after the call and before the info was updated.
			if info, err := p.Info(ctx); err == nil && info.Dimensions == len(v) {
				return fmt.Errorf("plugin %s: %w (%d dimensions, not %d)", p.plugin.Name, ErrReconfigured, len(v), dims)
			}
			return fmt.Errorf("plugin %s: %w: vector %d has %d dimensions, Info says %d", p.plugin.Name, ErrBadVectors, i, len(v), dims)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("plugin %s: %w: vector %d holds %v", p.plugin.Name, ErrBadVectors, i, x)
			}
		}
	}
	return nil
}

// MarkReady records that a check just found the plugin ready to embed
// with info, for RecentlyReady.
func (p *Provider) MarkReady(info sdk.Info) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.emb != nil && p.client != nil {
		p.readyEmb, p.readyAt, p.readyInfo = p.emb, time.Now(), info
	}
}

// RecentlyReady returns the description a readiness check found within
// the last within, on the plugin process running now, when nothing has
// happened since that might change it: no Configure and no failed call
// (either forgets the check), no restart. A caller may skip asking the
// plugin again; its next call is the check that counts.
func (p *Provider) RecentlyReady(within time.Duration) (sdk.Info, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ok := !p.closed && p.client != nil && !p.client.Exited() && p.emb == p.readyEmb &&
		!p.readyAt.IsZero() && time.Since(p.readyAt) < within
	return p.readyInfo, ok
}

// forgetReady drops the last readiness check.
func (p *Provider) forgetReady() {
	p.mu.Lock()
	p.readyAt = time.Time{}
	p.mu.Unlock()
}

// Ping checks the plugin process answers (go-plugin's health service).
// It does not wait for a start: while one is in flight it returns
// ErrStarting, and a plugin not running whose backoff has passed is
// started in the background.
func (p *Provider) Ping(ctx context.Context) error {
	emb, err := p.conn(ctx, false)
	if err != nil {
		return err
	}
	p.mu.Lock()
	rpc := p.rpc
	if p.emb != emb {
		rpc = nil // replaced since conn
	}
	p.mu.Unlock()
	if rpc == nil {
		return fmt.Errorf("plugin %s: %w", p.plugin.Name, ErrRestarting)
	}
	if err := rpc.Ping(); err != nil {
		p.dropIf(emb, err)
		return fmt.Errorf("plugin %s: %w: %v", p.plugin.Name, sdk.ErrUnavailable, err)
	}
	return nil
}

// Pid is the plugin's process id, or 0 when it is not running (or still
// starting). It never waits.
func (p *Provider) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client == nil || p.client.Exited() {
		return 0
	}
	if rc := p.client.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}

// Close kills the plugin process and waits for it to exit; every later
// call returns ErrClosed. It does not wait for a start in flight: that
// start kills the process it started when it ends, within about
// Options.StartTimeout plus CallTimeout. Prefer Registry.Stop, which
// spares a plugin other callers hold; Close kills it under them.
func (p *Provider) Close() {
	p.mu.Lock()
	p.closed = true
	c := p.client
	p.client, p.rpc, p.emb = nil, nil, nil
	p.mu.Unlock()
	if c != nil {
		c.Kill()
	}
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
