package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/embedq"
	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/registry"
	"github.com/memhost/memhost/sdk"
)

// PluginsRequest asks for the installed plugins; it has no parameters.
type PluginsRequest struct{}

// PluginInfo describes an installed plugin.
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
func (h *Host) Plugins(ctx context.Context, _ PluginsRequest) (PluginsResponse, error) {
	found, warnings := h.reg.Discover()
	resp := PluginsResponse{Plugins: []PluginInfo{}, Warnings: append([]string{}, warnings...)}
	active, _ := h.queue.ProviderName()
	options := h.config().Memory.Embedding.Options
	for _, pl := range found {
		info, st, err := h.describe(ctx, pl.Name, options[pl.Name])
		if err != nil {
			resp.Warnings = append(resp.Warnings, fmt.Sprintf("skipping %s: %v", pl.Path, err))
			h.stopUnlessActive(pl.Name)
			continue
		}
		resp.Plugins = append(resp.Plugins, PluginInfo{
			Name: pl.Name, Path: pl.Path, SHA256: pl.SHA256, Version: info.Version, Model: info.ModelID,
			Dimensions: info.Dimensions, Status: string(st.State), Progress: st.Progress, Message: st.Message,
			Active: pl.Name == active,
		})
		h.stopUnlessActive(pl.Name)
	}
	return resp, nil
}

// describe starts (or finds) a plugin and asks its info and status,
// holding it meanwhile.
func (h *Host) describe(ctx context.Context, name string, options map[string]string) (sdk.Info, sdk.Status, error) {
	p, release, err := h.reg.Acquire(ctx, name, options)
	defer release()
	if err != nil {
		return sdk.Info{}, sdk.Status{}, err
	}
	st, err := embedq.StatusAfterLoading(ctx, p)
	if err != nil {
		return sdk.Info{}, st, err
	}
	info, err := p.Info(ctx)
	return info, st, err
}

// stopUnlessActive stops a plugin that is not the active provider (now:
// another goroutine may have switched to it meanwhile).
func (h *Host) stopUnlessActive(name string) {
	if active, _ := h.queue.ProviderName(); name != active {
		h.reg.Stop(name)
	}
}

// UsePluginRequest makes Name the active provider, with its options
// updated by Set (an empty value removes an option).
type UsePluginRequest struct {
	Name string            `json:"name"`
	Set  map[string]string `json:"set,omitempty"`
}

// UseResponse says what UsePlugin did.
type UseResponse struct {
	Plugin     string            `json:"plugin"`
	Options    map[string]string `json:"options"`
	Model      string            `json:"model"`
	Dimensions int               `json:"dimensions"`
	Status     string            `json:"status"`
	Message    string            `json:"message,omitempty"`
	Pending    int               `json:"pending"` // chunks to embed for this model
}

// UsePlugin makes a plugin the active provider. The plugin is started and
// configured first, so unknown plugins and rejected options leave
// config.yaml as it was; config.yaml is then edited under its lock (comments
// kept) and the configuration in force replaced. Re-embedding for the new
// model happens in the background; keyword search answers meanwhile, and
// vectors already in the cache are reused.
func (h *Host) UsePlugin(ctx context.Context, req UsePluginRequest) (UseResponse, error) {
	name := req.Name
	h.reg.Discover()
	opts := map[string]string{}
	for k, v := range h.config().Memory.Embedding.Options[name] {
		opts[k] = v
	}
	for k, v := range req.Set {
		if v == "" {
			delete(opts, k)
		} else {
			opts[k] = v
		}
	}
	p, release, err := h.reg.Acquire(ctx, name, opts)
	defer release()
	if errors.Is(err, registry.ErrUnknownPlugin) {
		return UseResponse{}, fault.Errorf(fault.NotFound, "name", "%w", err)
	}
	if err != nil {
		return UseResponse{}, fault.Errorf(fault.Unavailable, "name", "%w", err)
	}
	info, err := p.Info(ctx)
	if err != nil {
		return UseResponse{}, fault.Errorf(fault.Unavailable, "name", "%w", err)
	}
	st, _ := p.Status(ctx)
	if err := h.writeConfig(func(path string) error { return config.SetPlugin(path, name, req.Set) }); err != nil {
		return UseResponse{}, err
	}
	h.editConfig(func(c *config.Config) {
		c.Memory.Embedding.Plugin = name
		c.Memory.Embedding.Options[name] = opts
	})
	resp := UseResponse{Plugin: name, Options: opts, Model: info.ModelID, Dimensions: info.Dimensions, Status: string(st.State), Message: st.Message}
	if _, err := h.indexer.Sync(ctx); err != nil { // count the pages edited by hand too
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
		h.queue.Wake()
	}
	return resp, nil
}

// writeConfig runs edit on config.yaml's path under an exclusive flock of
// brain/config.lock, so two processes editing it never lose an edit.
func (h *Host) writeConfig(edit func(path string) error) error {
	f, err := os.OpenFile(filepath.Join(h.home, "brain", "config.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return edit(filepath.Join(h.home, config.FileName))
}

// PluginStatusRequest asks for the active provider's state; it has no
// parameters.
type PluginStatusRequest struct{}

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
func (h *Host) PluginStatus(ctx context.Context, _ PluginStatusRequest) (PluginStatusResponse, error) {
	var resp PluginStatusResponse
	st, err := h.Status(ctx, StatusRequest{})
	if err != nil {
		return resp, err
	}
	resp.Mode, resp.Reason, resp.Pending, resp.Embedded = st.Mode, st.Reason, st.Pending, st.Embedded
	name, err := h.queue.ProviderName()
	if err != nil {
		resp.State, resp.Message = "none", embedq.Reason(err)
		return resp, nil
	}
	resp.Plugin = name
	p, release, err := h.reg.Acquire(ctx, name, h.config().Memory.Embedding.Options[name])
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
		resp.PingMs = ms(time.Since(start))
	}
	s, err := embedq.StatusAfterLoading(ctx, p)
	if err != nil {
		return resp, err
	}
	resp.State, resp.Progress, resp.Message = string(s.State), s.Progress, s.Message
	if info, err := p.Info(ctx); err == nil {
		resp.Version, resp.Model, resp.Dimensions = info.Version, info.ModelID, info.Dimensions
	}
	return resp, nil
}
