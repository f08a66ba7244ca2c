package providers

import (
	"context"
	"errors"
	"unicode"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/registry"
	"github.com/memhost/memhost/sdk"
)

// Plugins starts each installed plugin to ask its version, model and
// status. Plugins other than the active ones are stopped again.
func (s *ProviderService) Plugins(ctx context.Context, _ memhost.PluginsRequest) (memhost.PluginsResponse, error) {
	emb, err := s.k.Queue().Plugins(ctx)
	if err != nil {
		return memhost.PluginsResponse{Plugins: emb.Plugins, Generators: []memhost.PluginInfo{}, Warnings: emb.Warnings}, err
	}
	gens, warnings := s.generatorList(ctx)
	return memhost.PluginsResponse{Plugins: emb.Plugins, Generators: gens, Warnings: append(emb.Warnings, warnings...)}, ctx.Err()
}

// UsePlugin makes a plugin the active provider. The plugin is started and
// configured first, so unknown plugins and rejected options leave
// config.yaml as it was; config.yaml is then edited under its lock (comments
// kept) and the configuration in force replaced. Re-embedding for the new
// model happens in the background; keyword search answers meanwhile, and
// vectors already in the cache are reused.
func (s *ProviderService) UsePlugin(ctx context.Context, req memhost.UsePluginRequest) (memhost.UseResponse, error) {
	name := req.Name
	if err := checkOptions(req.Set); err != nil {
		return memhost.UseResponse{}, err
	}
	s.reg.Discover()
	opts := map[string]string{}
	for k, v := range s.k.Config().Memory.Embedding.Options[name] {
		opts[k] = v
	}
	for k, v := range req.Set {
		if v == "" {
			delete(opts, k)
		} else {
			opts[k] = v
		}
	}
	p, release, err := s.reg.Acquire(ctx, name, opts)
	defer release()
	if errors.Is(err, registry.ErrUnknownPlugin) {
		return memhost.UseResponse{}, fault.Errorf(fault.NotFound, "name", "%w", err)
	}
	if err != nil {
		return memhost.UseResponse{}, pluginFault(err)
	}
	info, err := p.Info(ctx)
	if err != nil {
		return memhost.UseResponse{}, pluginFault(err)
	}
	st, _ := p.Status(ctx)
	if err := s.writeConfig(func(path string) error { return config.SetPlugin(path, name, req.Set) }); err != nil {
		return memhost.UseResponse{}, err
	}
	s.k.EditConfig(func(c *config.Config) {
		c.Memory.Embedding.Plugin = name
		c.Memory.Embedding.Options[name] = opts
	})
	resp := memhost.UseResponse{Plugin: name, Options: opts, Model: info.ModelID, Dimensions: info.Dimensions, Status: string(st.State), Message: st.Message}
	if _, err := s.k.Indexer().Sync(ctx); err != nil { // count the pages edited by hand too
		return resp, err
	}
	emb, pending, err := s.k.Vectors().Counts(ctx)
	if err != nil {
		return resp, err
	}
	if current, _ := s.k.Vectors().Model(ctx); current.Model != info.ModelID || current.Dimensions != info.Dimensions {
		pending += emb
	}
	resp.Pending = pending
	if pending > 0 {
		s.k.Queue().Wake()
	}
	return resp, nil
}

// checkOptions refuses plugin options holding a control character (but
// tab and line breaks in a value: a query prefix may span lines). No
// option means one, config.yaml would keep it, and a plugin's refusal
// (or the file system's, for a model path) would not say which input held
// it.
func checkOptions(set map[string]string) error {
	for k, v := range set {
		for _, r := range k {
			if unicode.IsControl(r) {
				return fault.BadInputf("set", "option name %q holds a control character (%U)", k, r)
			}
		}
		for _, r := range v {
			if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
				return fault.BadInputf("set", "option %s=%q holds a control character (%U)", k, v, r)
			}
		}
	}
	return nil
}

// pluginFault gives a plugin's failure its kind: options it refused are
// bad input, an ended context stays canceled, the rest is unavailable.
func pluginFault(err error) error {
	switch {
	case errors.Is(err, sdk.ErrBadRequest):
		return fault.Errorf(fault.BadInput, "set", "%w", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fault.Errorf(fault.Unavailable, "name", "%w", err)
}
