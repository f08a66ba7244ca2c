package providers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/generate"
	"github.com/memhost/memhost/registry"
	"github.com/memhost/memhost/sdk"
)

// ErrBadAnswer means the generator's answer could not be used: not JSON,
// or not following the schema asked for. The error says why.
var ErrBadAnswer = registry.ErrBadAnswer

// Generator returns the configured generator plugin, started and
// configured with its options from config.yaml, held until release is
// called (release is never nil). Every Complete through it is bounded by
// memory.generator.timeoutMs. With no generator configured it returns
// generate.ErrNoGenerator; a plugin that is not installed or does not start is
// fault.Unavailable with the reason.
func (s *ProviderService) Generator(ctx context.Context) (sdk.Generator, func(), error) {
	cfg := s.k.Config().Memory.Generator
	if cfg.Plugin == "" {
		return nil, func() {}, generate.ErrNoGenerator
	}
	g, release, err := s.gens.Generator(ctx, cfg.Plugin, cfg.Options[cfg.Plugin])
	if err != nil {
		release()
		if ctx.Err() != nil {
			return nil, func() {}, ctx.Err()
		}
		if errors.Is(err, sdk.ErrBadRequest) { // options it refused
			return nil, func() {}, fault.Errorf(fault.BadInput, "generator", "memory.generator.options.%s: %w", cfg.Plugin, err)
		}
		return nil, func() {}, fault.Errorf(fault.Unavailable, "generator", "memory.generator.plugin %s: %w", cfg.Plugin, err)
	}
	return &timed{g: g, timeout: time.Duration(cfg.TimeoutMs) * time.Millisecond}, release, nil
}

// timed bounds every Complete of a generator.
type timed struct {
	g       *registry.Generator
	timeout time.Duration
}

func (t *timed) Info(ctx context.Context) (sdk.Info, error)     { return t.g.Info(ctx) }
func (t *timed) Status(ctx context.Context) (sdk.Status, error) { return t.g.Status(ctx) }
func (t *timed) Configure(ctx context.Context, o map[string]string) error {
	return t.g.Configure(ctx, o)
}

func (t *timed) Complete(ctx context.Context, req sdk.CompleteRequest) (sdk.CompleteResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	resp, err := t.g.Complete(ctx, req)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return resp, fault.Errorf(fault.Unavailable, "generator", "the generator did not answer within memory.generator.timeoutMs (%v)", t.timeout)
	}
	return resp, err
}

// GeneratorStatus reports the configured generator: its binary, model,
// state and a health check round trip; State "none" when none is
// configured, "error" with the reason when it cannot start.
func (s *ProviderService) GeneratorStatus(ctx context.Context) memhost.ProviderStatus {
	cfg := s.k.Config().Memory.Generator
	if cfg.Plugin == "" {
		return memhost.ProviderStatus{State: "none", Message: generate.ErrNoGenerator.Error()}
	}
	resp := memhost.ProviderStatus{Plugin: cfg.Plugin}
	g, release, err := s.gens.Generator(ctx, cfg.Plugin, cfg.Options[cfg.Plugin])
	defer release()
	if g == nil {
		resp.State, resp.Message = string(sdk.StateError), err.Error()
		return resp
	}
	pl := g.Plugin()
	resp.Path, resp.SHA256 = pl.Path, pl.SHA256
	start := time.Now()
	if err := g.Ping(ctx); err != nil {
		resp.PingError = err.Error()
	} else {
		resp.PingMs = ms(time.Since(start))
	}
	st, _ := g.Status(ctx)
	resp.State, resp.Progress, resp.Message = string(st.State), st.Progress, st.Message
	if info, err := g.Info(ctx); err == nil {
		resp.Version, resp.Model = info.Version, info.ModelID
	}
	return resp
}

// generatorList starts each installed generator plugin to ask its
// version, model and status; those other than the configured one are
// stopped again.
func (s *ProviderService) generatorList(ctx context.Context) ([]memhost.PluginInfo, []string) {
	found, warnings := s.gens.Discover()
	cfg := s.k.Config().Memory.Generator
	out := []memhost.PluginInfo{}
	for _, pl := range found {
		info := memhost.PluginInfo{Kind: string(registry.Generators), Name: pl.Name, Path: pl.Path, SHA256: pl.SHA256, Active: pl.Name == cfg.Plugin}
		g, release, err := s.gens.Generator(ctx, pl.Name, cfg.Options[pl.Name])
		if err == nil {
			st, _ := g.Status(ctx)
			info.Status, info.Progress, info.Message = string(st.State), st.Progress, st.Message
			if i, err := g.Info(ctx); err == nil {
				info.Version, info.Model = i.Version, i.ModelID
			}
		}
		release()
		if pl.Name != cfg.Plugin {
			s.gens.Stop(pl.Name)
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("skipping %s: %v", pl.Path, err))
			continue
		}
		out = append(out, info)
	}
	return out, warnings
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
