package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/registry"
	"github.com/memhost/memhost/sdk"
)

// PluginInfo describes an installed plugin, as `memhost plugins list`
// shows it.
type PluginInfo struct {
	Name       string  `json:"name"`
	Path       string  `json:"path"`
	SHA256     string  `json:"sha256"`
	Version    string  `json:"version"`
	Model      string  `json:"model"`
	Dimensions int     `json:"dimensions"`
	Status     string  `json:"status"`
	Progress   float64 `json:"progress,omitempty"`
	Message    string  `json:"message,omitempty"`
	Active     bool    `json:"active"`
}

// PluginsResponse lists the installed plugins; Warnings name files that
// were skipped (not executable, not a memhost plugin, a duplicate name).
type PluginsResponse struct {
	Plugins  []PluginInfo `json:"plugins"`
	Warnings []string     `json:"warnings"`
}

// Plugins starts each installed plugin to ask its version, model and
// status. Plugins other than the active one are stopped again.
func (h *Host) Plugins(ctx context.Context) (PluginsResponse, error) {
	reg := h.registry()
	found, warnings := reg.Discover()
	resp := PluginsResponse{Plugins: []PluginInfo{}, Warnings: append([]string{}, warnings...)}
	active, _ := h.providerName()
	for _, pl := range found {
		p, err := reg.Provider(ctx, pl.Name, h.cfg.Memory.Embedding.Options[pl.Name])
		if err != nil {
			resp.Warnings = append(resp.Warnings, fmt.Sprintf("skipping %s: %v", pl.Path, err))
			reg.Stop(pl.Name)
			continue
		}
		st, err := statusAfterLoading(ctx, p)
		if err != nil {
			return resp, err
		}
		info, err := p.Info(ctx)
		if err != nil {
			resp.Warnings = append(resp.Warnings, fmt.Sprintf("skipping %s: %v", pl.Path, err))
			reg.Stop(pl.Name)
			continue
		}
		resp.Plugins = append(resp.Plugins, PluginInfo{
			Name: pl.Name, Path: pl.Path, SHA256: pl.SHA256, Version: info.Version, Model: info.ModelID,
			Dimensions: info.Dimensions, Status: string(st.State), Progress: st.Progress, Message: st.Message,
			Active: pl.Name == active,
		})
		if pl.Name != active {
			reg.Stop(pl.Name)
		}
	}
	return resp, nil
}

// UseResponse says what `memhost plugins use` did.
type UseResponse struct {
	Plugin     string            `json:"plugin"`
	Options    map[string]string `json:"options"`
	Model      string            `json:"model"`
	Dimensions int               `json:"dimensions"`
	Status     string            `json:"status"`
	Message    string            `json:"message,omitempty"`
	Pending    int               `json:"pending"` // chunks to embed for this model
}

// UsePlugin makes name the active provider with its options updated by set
// (an empty value removes an option). The plugin is started and configured
// first, so unknown plugins and rejected options leave config.yaml as it
// was. Re-embedding for the new model then happens in the background;
// keyword search answers meanwhile, and vectors already in the cache are
// reused.
func (h *Host) UsePlugin(ctx context.Context, name string, set map[string]string) (UseResponse, error) {
	reg := h.registry()
	reg.Discover()
	opts := map[string]string{}
	for k, v := range h.cfg.Memory.Embedding.Options[name] {
		opts[k] = v
	}
	for k, v := range set {
		if v == "" {
			delete(opts, k)
		} else {
			opts[k] = v
		}
	}
	p, err := reg.Provider(ctx, name, opts)
	if errors.Is(err, registry.ErrUnknownPlugin) {
		return UseResponse{}, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if err != nil {
		return UseResponse{}, err
	}
	info, err := p.Info(ctx)
	if err != nil {
		return UseResponse{}, err
	}
	st, _ := p.Status(ctx)
	if err := config.SetPlugin(filepath.Join(h.home, config.FileName), name, set); err != nil {
		return UseResponse{}, err
	}
	h.cfg.Memory.Embedding.Plugin = name
	if h.cfg.Memory.Embedding.Options == nil {
		h.cfg.Memory.Embedding.Options = map[string]map[string]string{}
	}
	h.cfg.Memory.Embedding.Options[name] = opts
	resp := UseResponse{Plugin: name, Options: opts, Model: info.ModelID, Dimensions: info.Dimensions, Status: string(st.State), Message: st.Message}
	if _, err := h.Sync(ctx); err != nil { // count the pages edited by hand too
		return resp, err
	}
	emb, pending, err := h.idx.VectorCounts(ctx)
	if err != nil {
		return resp, err
	}
	if current, _ := h.idx.VectorModel(ctx); current.Model != info.ModelID || current.Dimensions != info.Dimensions {
		pending += emb
	}
	resp.Pending = pending
	if pending > 0 {
		h.startBackground()
	}
	return resp, nil
}

// PluginStatusResponse is the active provider's state.
type PluginStatusResponse struct {
	Plugin     string  `json:"plugin,omitempty"`
	Path       string  `json:"path,omitempty"`
	SHA256     string  `json:"sha256,omitempty"`
	Version    string  `json:"version,omitempty"`
	Model      string  `json:"model,omitempty"`
	Dimensions int     `json:"dimensions,omitempty"`
	State      string  `json:"state"`
	Progress   float64 `json:"progress"`
	Message    string  `json:"message,omitempty"`
	Mode       string  `json:"mode"`
	Reason     string  `json:"reason,omitempty"`
	Pending    int     `json:"pending"`
	Embedded   int     `json:"embedded"`
	PingMs     float64 `json:"pingMs,omitempty"` // go-plugin health check round trip
	PingError  string  `json:"pingError,omitempty"`
}

// PluginStatus reports the active provider and what search does with it.
func (h *Host) PluginStatus(ctx context.Context) (PluginStatusResponse, error) {
	var resp PluginStatusResponse
	st, err := h.Status(ctx)
	if err != nil {
		return resp, err
	}
	resp.Mode, resp.Reason, resp.Pending, resp.Embedded = st.Mode, st.Reason, st.Pending, st.Embedded
	name, err := h.providerName()
	if err != nil {
		resp.State, resp.Message = "none", reason(err)
		return resp, nil
	}
	resp.Plugin = name
	p, err := h.registry().Provider(ctx, name, h.cfg.Memory.Embedding.Options[name])
	if p == nil {
		resp.State, resp.Message = string(sdk.StateError), strings.TrimPrefix(err.Error(), registry.ErrUnknownPlugin.Error()+" ")
		return resp, nil
	}
	pl := p.Plugin()
	resp.Path, resp.SHA256 = pl.Path, pl.SHA256
	start := time.Now()
	if err := p.Ping(ctx); err != nil {
		resp.PingError = err.Error()
	} else {
		resp.PingMs = ms(time.Since(start))
	}
	s, err := statusAfterLoading(ctx, p)
	if err != nil {
		return resp, err
	}
	resp.State, resp.Progress, resp.Message = string(s.State), s.Progress, s.Message
	if info, err := p.Info(ctx); err == nil {
		resp.Version, resp.Model, resp.Dimensions = info.Version, info.ModelID, info.Dimensions
	}
	return resp, nil
}
