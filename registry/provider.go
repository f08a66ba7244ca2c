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
	pluginMap = sdk.PluginMap(nil)
)

func execCommand(path string) *exec.Cmd { return exec.Command(path) }

// ErrRestarting means the plugin crashed and waits out its backoff before
// the next start.
var ErrRestarting = errors.New("plugin crashed, restarting")

// ErrBadVectors means a plugin returned vectors memhost will not store.
var ErrBadVectors = errors.New("plugin returned unusable vectors")

// Provider is a running plugin, seen as an sdk.Embedder. Its process is
// started on first use and restarted after a crash; every call has a
// timeout. It is safe for concurrent use.
type Provider struct {
	plugin Plugin
	opts   Options

	mu       sync.Mutex
	client   *plugin.Client
	rpc      plugin.ClientProtocol
	emb      sdk.Embedder
	info     sdk.Info // from the last start or Configure
	cfg      map[string]string
	failures int       // consecutive failed starts or crashes
	retryAt  time.Time // no start before this
	lastErr  error
	closed   bool
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

// conn returns the live plugin, starting it when it is not running and its
// backoff has passed.
func (p *Provider) conn(ctx context.Context) (sdk.Embedder, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if p.client != nil && !p.client.Exited() {
		return p.emb, nil
	}
	if p.client != nil {
		p.opts.Logger.Warn("plugin exited; restarting it", "plugin", p.plugin.Name)
		p.dropLocked(errors.New("the plugin process exited"))
	}
	if wait := time.Until(p.retryAt); wait > 0 {
		return nil, fmt.Errorf("plugin %s: %w (next try in %v; last error: %v)", p.plugin.Name, ErrRestarting, wait.Round(10*time.Millisecond), p.lastErr)
	}
	if err := p.startLocked(ctx); err != nil {
		p.failLocked(err)
		return nil, err
	}
	p.failures, p.lastErr = 0, nil
	return p.emb, nil
}

func (p *Provider) startLocked(ctx context.Context) error {
	cfg, err := clientConfig(p.plugin, p.opts)
	if err != nil {
		return err
	}
	client := plugin.NewClient(cfg)
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		if errors.Is(err, plugin.ErrChecksumsDoNotMatch) {
			return fmt.Errorf("plugin %s (%s): %w", p.plugin.Name, p.plugin.Path, ErrChecksum)
		}
		return fmt.Errorf("plugin %s (%s) did not start: %v", p.plugin.Name, p.plugin.Path, oneLine(err))
	}
	raw, err := rpc.Dispense(sdk.PluginName)
	if err != nil {
		client.Kill()
		return fmt.Errorf("plugin %s: %v", p.plugin.Name, err)
	}
	emb, ok := raw.(sdk.Embedder)
	if !ok {
		client.Kill()
		return fmt.Errorf("plugin %s is not an embeddings provider", p.plugin.Name)
	}
	cctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	// Replay the configuration: after a restart the plugin knows nothing.
	if err := emb.Configure(cctx, p.cfg); err != nil {
		client.Kill()
		return fmt.Errorf("plugin %s: configure: %w", p.plugin.Name, err)
	}
	info, err := emb.Info(cctx)
	if err != nil {
		client.Kill()
		return fmt.Errorf("plugin %s: info: %w", p.plugin.Name, err)
	}
	p.client, p.rpc, p.emb, p.info = client, rpc, emb, info
	return nil
}

// failLocked records a failed start or a crash and sets the backoff.
func (p *Provider) failLocked(err error) {
	p.failures++
	p.lastErr = err
	backoff := 250 * time.Millisecond << min(p.failures-1, 16)
	p.retryAt = time.Now().Add(min(backoff, p.opts.MaxBackoff))
}

func (p *Provider) dropLocked(reason error) {
	if p.client != nil {
		p.client.Kill()
	}
	p.client, p.rpc, p.emb = nil, nil, nil
	p.failLocked(reason)
}

// call runs fn against the plugin with a timeout; a transport failure
// marks the plugin dead so the next call restarts it.
func (p *Provider) call(ctx context.Context, timeout time.Duration, fn func(context.Context, sdk.Embedder) error) error {
	emb, err := p.conn(ctx)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = fn(cctx, emb)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sdk.ErrUnavailable):
		p.mu.Lock()
		if p.emb == emb {
			p.dropLocked(err)
		}
		p.mu.Unlock()
		return fmt.Errorf("plugin %s: %w", p.plugin.Name, err)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		// The plugin hung: kill it rather than leave a stuck process.
		p.mu.Lock()
		if p.emb == emb {
			p.dropLocked(err)
		}
		p.mu.Unlock()
		return fmt.Errorf("plugin %s did not answer within %v; restarting it", p.plugin.Name, timeout)
	}
	return fmt.Errorf("plugin %s: %w", p.plugin.Name, err)
}

// Info returns the plugin's description.
func (p *Provider) Info(ctx context.Context) (sdk.Info, error) {
	var info sdk.Info
	err := p.call(ctx, p.opts.CallTimeout, func(ctx context.Context, e sdk.Embedder) (err error) {
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

// Status returns the plugin's readiness. A crashed plugin waiting for its
// restart reports StateError with the reason instead of failing.
func (p *Provider) Status(ctx context.Context) (sdk.Status, error) {
	var st sdk.Status
	err := p.call(ctx, p.opts.CallTimeout, func(ctx context.Context, e sdk.Embedder) (err error) {
		st, err = e.Status(ctx)
		return err
	})
	if err != nil {
		return sdk.Status{State: sdk.StateError, Message: oneLine(err)}, nil
	}
	return st, nil
}

// Configure sets the plugin's options; they are replayed after restarts.
func (p *Provider) Configure(ctx context.Context, options map[string]string) error {
	err := p.call(ctx, p.opts.CallTimeout, func(ctx context.Context, e sdk.Embedder) error {
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
	if err == nil {
		p.mu.Lock()
		p.cfg = copyOptions(options)
		p.mu.Unlock()
	}
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
	err := p.call(ctx, timeout, func(ctx context.Context, e sdk.Embedder) (err error) {
		vecs, err = e.Embed(ctx, texts, kind)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	dims := p.info.Dimensions
	p.mu.Unlock()
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("plugin %s: %w: %d vectors for %d texts", p.plugin.Name, ErrBadVectors, len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) != dims {
			return nil, fmt.Errorf("plugin %s: %w: vector %d has %d dimensions, Info says %d", p.plugin.Name, ErrBadVectors, i, len(v), dims)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("plugin %s: %w: vector %d holds %v", p.plugin.Name, ErrBadVectors, i, x)
			}
		}
	}
	return vecs, nil
}

// Ping checks the plugin process answers (go-plugin's health service).
func (p *Provider) Ping(ctx context.Context) error {
	if _, err := p.conn(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	rpc := p.rpc
	p.mu.Unlock()
	if rpc == nil {
		return fmt.Errorf("plugin %s: %w", p.plugin.Name, ErrRestarting)
	}
	if err := rpc.Ping(); err != nil {
		p.mu.Lock()
		if p.rpc == rpc {
			p.dropLocked(err)
		}
		p.mu.Unlock()
		return fmt.Errorf("plugin %s: %w: %v", p.plugin.Name, sdk.ErrUnavailable, err)
	}
	return nil
}

// Pid is the plugin's process id, or 0 when it is not running.
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

// Close kills the plugin process.
func (p *Provider) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.client != nil {
		p.client.Kill()
	}
	p.client, p.rpc, p.emb = nil, nil, nil
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
