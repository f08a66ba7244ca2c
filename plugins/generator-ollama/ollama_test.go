package main

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/internal/fakellm"
	"github.com/memhost/memhost/internal/fakeollama"
	"github.com/memhost/memhost/sdk"
	"github.com/memhost/memhost/sdk/sdktest"
)

func noEnv(string) string { return "" }

func models() map[string]fakeollama.Model {
	return map[string]fakeollama.Model{
		"llama3.2:latest":       {Dimensions: 3072, Capabilities: []string{"completion", "tools"}, Digest: "a80c4f17acd5"},
		"embeddinggemma:latest": {Dimensions: 768, Capabilities: []string{"embedding"}, Digest: "85462619ee72"},
	}
}

func provider(t *testing.T, srv *fakeollama.Server, opts map[string]string) *Provider {
	t.Helper()
	p := New(noEnv, hclog.NewNullLogger())
	o := map[string]string{"url": srv.URL}
	for k, v := range opts {
		o[k] = v
	}
	if err := p.Configure(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return p
}

var chat = sdk.CompleteRequest{Messages: []sdk.Message{{Role: "user", Content: "Summarise: we chose Postgres."}}}

func TestConformance(t *testing.T) {
	srv := fakeollama.New(models())
	defer srv.Close()
	sdktest.RunGenerator(t, New(noEnv, hclog.NewNullLogger()), sdktest.GeneratorOptions{Configure: map[string]string{"url": srv.URL}})
}

func TestRequestShape(t *testing.T) {
	srv := fakeollama.New(models())
	defer srv.Close()
	p := provider(t, srv, map[string]string{"numCtx": "8192", "keepAlive": "10m"})
	schema := json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}`)
	resp, err := p.Complete(context.Background(), sdk.CompleteRequest{Messages: chat.Messages, Schema: schema, MaxTokens: 200, Temperature: 0.1})
	if err != nil || resp.Text != `{"summary":"x"}` || resp.Model != "llama3.2:latest" || resp.InputTokens == 0 {
		t.Fatalf("Complete = %+v, %v", resp, err)
	}
	req := srv.Chat.Requests()[0]
	var sent, want any
	json.Unmarshal(req.Schema, &sent)
	json.Unmarshal(schema, &want)
	o := req.Body["options"].(map[string]any)
	if req.Body["stream"] != false || req.Body["keep_alive"] != "10m" || o["num_ctx"] != 8192.0 || o["num_predict"] != 200.0 ||
		o["temperature"] != 0.1 || !reflect.DeepEqual(sent, want) {
		t.Errorf("body %v", req.Body)
	}
}

func TestFaults(t *testing.T) {
	ctx := context.Background()
	srv := fakeollama.New(models())
	defer srv.Close()
	p := provider(t, srv, map[string]string{"timeout": "300ms", "retries": "2"})
	srv.Chat.Push(fakellm.Reply{Status: 503, RetryAfter: "0.05", Error: "server busy"}, fakellm.Reply{Status: 500, RetryAfter: "0.05"})
	if _, err := p.Complete(ctx, chat); err != nil {
		t.Errorf("after two 5xx: %v", err)
	}
	srv.Chat.Push(fakellm.Reply{Status: 429, RetryAfter: "0.05"}, fakellm.Reply{Status: 429, RetryAfter: "0.05"}, fakellm.Reply{Status: 429, RetryAfter: "0.05", Error: "too many requests"})
	if _, err := p.Complete(ctx, chat); err == nil || !strings.Contains(err.Error(), "failed (429) after 2 retries: too many requests") {
		t.Errorf("persistent 429: %v", err)
	}
	srv.Chat.Push(fakellm.Reply{Raw: `{"message": {"role": "assistant", "content": "{\"a\":`})
	if _, err := p.Complete(ctx, chat); err == nil || !strings.Contains(err.Error(), "malformed JSON") {
		t.Errorf("malformed: %v", err)
	}
	srv.Chat.Push(fakellm.Reply{Delay: time.Second}, fakellm.Reply{Delay: time.Second}, fakellm.Reply{Delay: time.Second})
	if _, err := p.Complete(ctx, chat); !errors.Is(err, sdk.ErrNotReady) || !strings.Contains(err.Error(), "did not answer within 300ms") {
		t.Errorf("hung: %v", err)
	}
	for opts, want := range map[string]string{
		"qwen2.5":        "model qwen2.5 is not pulled: run `ollama pull qwen2.5`",
		"embeddinggemma": "embeddinggemma is not a chat model",
	} {
		p := provider(t, srv, map[string]string{"model": opts})
		st, _ := p.Status(ctx)
		if st.State != sdk.StateError || !strings.Contains(st.Message, want) {
			t.Errorf("Status(%s) = %+v, want %q", opts, st, want)
		}
		if _, err := p.Complete(ctx, chat); !errors.Is(err, sdk.ErrNotReady) {
			t.Errorf("Complete(%s): %v", opts, err)
		}
	}
	url := srv.URL
	srv.Close()
	if st, _ := p.Status(ctx); st.Message != "Ollama is not reachable at "+url+": start it with `ollama serve`" {
		t.Errorf("down: %+v", st)
	}
}

func TestOptions(t *testing.T) {
	p := New(func(k string) string {
		if k == "OLLAMA_HOST" {
			return "0.0.0.0:9999"
		}
		return ""
	}, hclog.NewNullLogger())
	if p.opt.url != "http://127.0.0.1:9999" {
		t.Errorf("OLLAMA_HOST: %s", p.opt.url)
	}
	for _, bad := range []map[string]string{{"colour": "x"}, {"numCtx": "-1"}, {"timeout": "soon"}, {"url": "localhost"}, {"model": " "}, {"retries": "99"}} {
		if err := p.Configure(context.Background(), bad); !errors.Is(err, sdk.ErrBadRequest) {
			t.Errorf("Configure(%v): %v", bad, err)
		}
	}
}
