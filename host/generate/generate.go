// Package generate holds what every user of the text generator shares:
// ErrNoGenerator, and CompleteJSON, which asks for an answer following a
// JSON schema and checks it. It imports fault, registry and sdk.
package generate

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/registry"
	"github.com/memhost/memhost/sdk"
)

// ErrNoGenerator means no generator plugin is configured: what needs a
// text model (remember's auto routing, compaction summaries,
// consolidation) says so and the rest of memhost works without one.
var ErrNoGenerator error = &fault.Error{Kind: fault.Unavailable, Field: "generator",
	Message: "no generator configured: set memory.generator.plugin (ollama or openai)"}

// schemas caches compiled answer schemas by their text.
var schemas sync.Map // string → *jsonschema.Resolved

func resolveSchema(schema string) (*jsonschema.Resolved, error) {
	if rs, ok := schemas.Load(schema); ok {
		return rs.(*jsonschema.Resolved), nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		return nil, fmt.Errorf("answer schema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("answer schema: %w", err)
	}
	schemas.Store(schema, rs)
	return rs, nil
}

// CompleteJSON asks g to answer msgs with JSON following schema, checks
// the answer against the schema and decodes it into out. An answer that
// is not JSON or does not follow the schema is registry.ErrBadAnswer with the
// reason; nothing is decoded into out then. Callers decide whether to
// retry (consolidation) or fall back (routing).
func CompleteJSON(ctx context.Context, g sdk.Generator, msgs []sdk.Message, schema string, maxTokens int, out any) (sdk.CompleteResponse, error) {
	rs, err := resolveSchema(schema)
	if err != nil {
		return sdk.CompleteResponse{}, err
	}
	resp, err := g.Complete(ctx, sdk.CompleteRequest{Messages: msgs, Schema: json.RawMessage(schema), MaxTokens: maxTokens})
	if err != nil {
		return resp, err
	}
	var v any
	if err := json.Unmarshal([]byte(resp.Text), &v); err != nil {
		return resp, fmt.Errorf("%w: not JSON (%v): %.120q", registry.ErrBadAnswer, err, resp.Text)
	}
	if err := rs.Validate(v); err != nil {
		return resp, fmt.Errorf("%w: it does not follow the schema: %v", registry.ErrBadAnswer, err)
	}
	if err := json.Unmarshal([]byte(resp.Text), out); err != nil {
		return resp, fmt.Errorf("%w: %v", registry.ErrBadAnswer, err)
	}
	return resp, nil
}
