package embedq

import (
	"context"
	"fmt"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/sdk"
)

// Plugins lists the installed plugins; Warnings name files that
// were skipped (not executable, not a memhost plugin, a duplicate name).
type Plugins struct {
	Plugins  []memhost.PluginInfo `json:"plugins"`
	Warnings []string             `json:"warnings"`
}

// Plugins starts each installed plugin to ask its version, model and
// status. Plugins other than the active one are stopped again.
func (q *Queue) Plugins(ctx context.Context) (Plugins, error) {
	reg := q.opts.Registry
	found, warnings := reg.Discover()
	resp := Plugins{Plugins: []memhost.PluginInfo{}, Warnings: append([]string{}, warnings...)}
	active, _ := q.ProviderName()
	options := q.cfg().Memory.Embedding.Options
	for _, pl := range found {
		info, st, err := q.describe(ctx, pl.Name, options[pl.Name])
		if ctx.Err() != nil {
			return resp, ctx.Err()
		}
		if err != nil {
			resp.Warnings = append(resp.Warnings, fmt.Sprintf("skipping %s: %v", pl.Path, err))
			q.stopUnlessActive(pl.Name)
			continue
		}
		resp.Plugins = append(resp.Plugins, memhost.PluginInfo{
			Kind: "embeddings", Name: pl.Name, Path: pl.Path, SHA256: pl.SHA256, Version: info.Version, Model: info.ModelID,
			Dimensions: info.Dimensions, Status: string(st.State), Progress: st.Progress, Message: st.Message,
			Active: pl.Name == active,
		})
		q.stopUnlessActive(pl.Name)
	}
	return resp, nil
}

// describe starts (or finds) a plugin and asks its info and status,
// holding it meanwhile.
func (q *Queue) describe(ctx context.Context, name string, options map[string]string) (sdk.Info, sdk.Status, error) {
	p, release, err := q.opts.Registry.Acquire(ctx, name, options)
	defer release()
	if err != nil {
		return sdk.Info{}, sdk.Status{}, err
	}
	st, err := StatusAfterLoading(ctx, p)
	if err != nil {
		return sdk.Info{}, st, err
	}
	info, err := p.Info(ctx)
	return info, st, err
}

// stopUnlessActive stops a plugin that is not the active provider (now:
// another goroutine may have switched to it meanwhile).
func (q *Queue) stopUnlessActive(name string) {
	if active, _ := q.ProviderName(); name != active {
		q.opts.Registry.Stop(name)
	}
}

// ProviderStatus reports the active provider: its binary, model, state
// and a health check round trip. State is "none" when no provider is
// configured.
func (q *Queue) ProviderStatus(ctx context.Context) (memhost.ProviderStatus, error) {
	var resp memhost.ProviderStatus
	name, err := q.ProviderName()
	if err != nil {
		resp.State, resp.Message = "none", Reason(err)
		return resp, nil
	}
	resp.Plugin = name
	p, release, err := q.opts.Registry.Acquire(ctx, name, q.cfg().Memory.Embedding.Options[name])
	defer release()
	if p == nil {
		resp.State, resp.Message = string(sdk.StateError), err.Error()
		return resp, nil
	}
	pl := p.Plugin()
	resp.Path, resp.SHA256 = pl.Path, pl.SHA256
	start := time.Now()
	if err := p.Ping(ctx); err != nil {
		resp.PingError = err.Error()
	} else {
		resp.PingMs = float64(time.Since(start).Microseconds()) / 1000
	}
	s, err := StatusAfterLoading(ctx, p)
	if err != nil {
		return resp, err
	}
	resp.State, resp.Progress, resp.Message = string(s.State), s.Progress, s.Message
	if info, err := p.Info(ctx); err == nil {
		resp.Version, resp.Model, resp.Dimensions = info.Version, info.ModelID, info.Dimensions
	}
	return resp, nil
}
