package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/memhost/memhost/sdk"
)

// unknownGenerator is ErrUnknownPlugin worded for a generator.
type unknownGenerator struct{ msg string }

func (e *unknownGenerator) Error() string        { return e.msg }
func (e *unknownGenerator) Is(target error) bool { return target == ErrUnknownPlugin }

// ErrBadAnswer means a generator returned an answer memhost will not use:
// empty, not UTF-8, or not JSON when a schema asked for JSON.
var ErrBadAnswer = errors.New("generator returned an unusable answer")

// Generator is a running generator plugin (a Provider of a registry of
// Kind Generators), seen as an sdk.Generator: started on first use,
// restarted after a crash with its options replayed, every call with a
// timeout. It is safe for concurrent use.
type Generator struct {
	p *Provider
}

var _ sdk.Generator = (*Generator)(nil)

// Generator is Acquire for a registry of generators: the running
// generator plugin name, configured with options and held until release.
// A registry of another kind refuses.
func (r *Registry) Generator(ctx context.Context, name string, options map[string]string) (*Generator, func(), error) {
	if r.opts.Kind != Generators {
		return nil, func() {}, fmt.Errorf("registry of %s plugins asked for generator %q", r.opts.Kind, name)
	}
	p, release, err := r.Acquire(ctx, name, options)
	if p == nil {
		return nil, release, err
	}
	return &Generator{p: p}, release, err
}

// Plugin is the binary this generator runs.
func (g *Generator) Plugin() Plugin { return g.p.Plugin() }

// Info asks the plugin for its description.
func (g *Generator) Info(ctx context.Context) (sdk.Info, error) { return g.p.Info(ctx) }

// Status is Provider.Status: it never fails and never waits for a start.
func (g *Generator) Status(ctx context.Context) (sdk.Status, error) { return g.p.Status(ctx) }

// Configure sets the plugin's options (replayed after restarts).
func (g *Generator) Configure(ctx context.Context, options map[string]string) error {
	return g.p.Configure(ctx, options)
}

// Ping checks the plugin process answers.
func (g *Generator) Ping(ctx context.Context) error { return g.p.Ping(ctx) }

// Pid is the plugin's process id, 0 when not running.
func (g *Generator) Pid() int { return g.p.Pid() }

// Complete asks the plugin to answer a chat within
// Options.CompleteTimeout and checks the answer: not empty, UTF-8, and
// one JSON value when req.Schema is set (whether it follows the schema is
// the caller's check). A plugin that hangs past the timeout is killed and
// restarted on the next call.
func (g *Generator) Complete(ctx context.Context, req sdk.CompleteRequest) (sdk.CompleteResponse, error) {
	p := g.p
	var resp sdk.CompleteResponse
	err := p.call(ctx, p.opts.CompleteTimeout, func(ctx context.Context, e sdk.Provider) (err error) {
		gen, ok := e.(sdk.Generator)
		if !ok {
			return fmt.Errorf("%w: an %s plugin does not generate", sdk.ErrBadRequest, p.opts.Kind)
		}
		resp, err = gen.Complete(ctx, req)
		return err
	})
	if err != nil {
		return sdk.CompleteResponse{}, err
	}
	text := strings.TrimSpace(resp.Text)
	switch {
	case text == "":
		return resp, fmt.Errorf("plugin %s: %w: empty text", p.plugin.Name, ErrBadAnswer)
	case !utf8.ValidString(resp.Text):
		return resp, fmt.Errorf("plugin %s: %w: text is not UTF-8", p.plugin.Name, ErrBadAnswer)
	case len(req.Schema) > 0 && !validJSON(text):
		return resp, fmt.Errorf("plugin %s: %w: a JSON answer was asked for, got %.80q", p.plugin.Name, ErrBadAnswer, text)
	}
	return resp, nil
}

func validJSON(s string) bool { return json.Valid([]byte(s)) }
