package sdktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memhost/memhost/sdk"
)

// GeneratorOptions tune RunGenerator.
type GeneratorOptions struct {
	// Configure is passed to Configure before the checks (and again after
	// the unknown-option check); nil skips the call.
	Configure map[string]string
	// ReadyTimeout bounds the wait for StateReady. Default 2 minutes.
	ReadyTimeout time.Duration
}

// routeSchema is the kind of schema memhost asks generators to follow.
const routeSchema = `{
  "type": "object",
  "properties": {
    "category": {"type": "string", "enum": ["lists", "reference", "knowledge"]},
    "page": {"type": "string", "minLength": 1},
    "tags": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["category", "page", "tags"],
  "additionalProperties": false
}`

// RunGenerator checks that g behaves as memhost expects of a generator:
// Status moves sanely to ready, Info names the provider and model, a chat
// gets a non-empty answer, an answer asked for with a JSON schema is JSON
// that follows it, invalid requests and unknown options are refused with
// sdk.ErrBadRequest, cancellation is honoured, and concurrent calls work
// (run the test with -race).
func RunGenerator(t *testing.T, g sdk.Generator, opt GeneratorOptions) {
	t.Helper()
	if opt.ReadyTimeout == 0 {
		opt.ReadyTimeout = 2 * time.Minute
	}
	ctx := context.Background()
	if opt.Configure != nil {
		if err := g.Configure(ctx, opt.Configure); err != nil {
			t.Fatalf("Configure(%v): %v", opt.Configure, err)
		}
	}
	t.Run("status-reaches-ready", func(t *testing.T) { waitReady(t, g, opt.ReadyTimeout) })
	t.Run("info", func(t *testing.T) {
		info, err := g.Info(ctx)
		if err != nil || info.Name == "" || info.ModelID == "" {
			t.Errorf("Info = %+v, %v; want a name and a model id", info, err)
		}
	})
	chat := []sdk.Message{
		{Role: "system", Content: "You file notes for a memory notebook."},
		{Role: "user", Content: "Where does \"Sarah Chen - Phone: 555-1234\" belong?"},
	}
	t.Run("text", func(t *testing.T) {
		resp, err := g.Complete(ctx, sdk.CompleteRequest{Messages: chat, MaxTokens: 200})
		if err != nil || resp.Text == "" || resp.Model == "" {
			t.Errorf("Complete = %+v, %v; want text and the model's name", resp, err)
		}
	})
	t.Run("json-schema", func(t *testing.T) {
		resp, err := g.Complete(ctx, sdk.CompleteRequest{Messages: chat, Schema: json.RawMessage(routeSchema)})
		if err != nil {
			t.Fatalf("Complete with a schema: %v", err)
		}
		if err := followsRouteSchema(resp.Text); err != nil {
			t.Errorf("answer does not follow the schema (%v): %.200q", err, resp.Text)
		}
	})
	t.Run("bad-requests", func(t *testing.T) {
		for name, req := range map[string]sdk.CompleteRequest{
			"no messages":  {},
			"unknown role": {Messages: []sdk.Message{{Role: "wizard", Content: "hi"}}},
		} {
			if _, err := g.Complete(ctx, req); !errors.Is(err, sdk.ErrBadRequest) {
				t.Errorf("%s: err = %v, want sdk.ErrBadRequest", name, err)
			}
		}
	})
	t.Run("unknown-option", func(t *testing.T) {
		if err := g.Configure(ctx, map[string]string{"no-such-option": "1"}); !errors.Is(err, sdk.ErrBadRequest) {
			t.Errorf("Configure(unknown option): %v, want sdk.ErrBadRequest", err)
		}
		if err := g.Configure(ctx, opt.Configure); err != nil {
			t.Fatalf("Configure(%v) again: %v", opt.Configure, err)
		}
	})
	t.Run("cancellation", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		start := time.Now()
		if _, err := g.Complete(cctx, sdk.CompleteRequest{Messages: chat}); !errors.Is(err, context.Canceled) {
			t.Errorf("Complete with a cancelled context: %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("cancelled Complete took %v", d)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := g.Complete(ctx, sdk.CompleteRequest{Messages: chat}); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent Complete: %v", err)
		}
	})
	t.Run("still-ready", func(t *testing.T) {
		st, err := g.Status(ctx)
		if err != nil || st.State != sdk.StateReady {
			t.Errorf("Status after the checks = %+v, %v; want ready", st, err)
		}
	})
}

// followsRouteSchema checks an answer against routeSchema by hand (the
// suite imports nothing a plugin's module would not have).
func followsRouteSchema(text string) error {
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	for k := range v {
		if k != "category" && k != "page" && k != "tags" {
			return fmt.Errorf("property %q not in the schema", k)
		}
	}
	switch c, _ := v["category"].(string); c {
	case "lists", "reference", "knowledge":
	default:
		return fmt.Errorf("category %v is not one of lists, reference, knowledge", v["category"])
	}
	if p, _ := v["page"].(string); p == "" {
		return fmt.Errorf("page %v is not a non-empty string", v["page"])
	}
	tags, ok := v["tags"].([]any)
	if !ok {
		return fmt.Errorf("tags %v is not an array", v["tags"])
	}
	for _, tag := range tags {
		if _, ok := tag.(string); !ok {
			return fmt.Errorf("tag %v is not a string", tag)
		}
	}
	return nil
}
