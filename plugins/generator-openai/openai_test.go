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
	"github.com/memhost/memhost/internal/fakeopenai"
	"github.com/memhost/memhost/sdk"
	"github.com/memhost/memhost/sdk/sdktest"
)

const key = "sk-test-0123456789abcdef"

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func provider(t *testing.T, srv *fakeopenai.Server, getenv func(string) string, opts map[string]string) *Provider {
	t.Helper()
	p := New(getenv, hclog.NewNullLogger())
	o := map[string]string{"url": srv.Base(), "model": "deepseek-chat", "apiKeyEnv": "DEEPSEEK_API_KEY"}
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
	srv := fakeopenai.New(key, "deepseek-chat")
	defer srv.Close()
	p := New(env(map[string]string{"DEEPSEEK_API_KEY": key}), hclog.NewNullLogger())
	sdktest.RunGenerator(t, p, sdktest.GeneratorOptions{Configure: map[string]string{"url": srv.Base(), "model": "deepseek-chat", "apiKeyEnv": "DEEPSEEK_API_KEY"}})
}

func TestRequestShape(t *testing.T) {
	srv := fakeopenai.New(key, "deepseek-chat")
	defer srv.Close()
	p := provider(t, srv, env(map[string]string{"DEEPSEEK_API_KEY": key}), map[string]string{"maxTokens": "300"})
	schema := json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}`)
	resp, err := p.Complete(context.Background(), sdk.CompleteRequest{Messages: chat.Messages, Schema: schema, Temperature: 0.2})
	if err != nil || resp.Text != `{"summary":"x"}` || resp.Model != "deepseek-chat" || resp.InputTokens == 0 {
		t.Fatalf("Complete = %+v, %v", resp, err)
	}
	req := srv.Requests()[0]
	if req.Header["Authorization"] != "Bearer "+key {
		t.Errorf("Authorization header %q", req.Header["Authorization"])
	}
	rf := req.Body["response_format"].(map[string]any)
	if rf["type"] != "json_schema" || req.Body["max_tokens"] != 300.0 || req.Body["temperature"] != 0.2 || req.Body["stream"] != false {
		t.Errorf("body %v", req.Body)
	}
	var sent, want any
	json.Unmarshal(req.Schema, &sent)
	json.Unmarshal(schema, &want)
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("schema sent %s", req.Schema)
	}
	// json_object (DeepSeek's JSON mode): the schema goes in a system message.
	p = provider(t, srv, env(map[string]string{"DEEPSEEK_API_KEY": key}), map[string]string{"responseFormat": "json_object"})
	if _, err := p.Complete(context.Background(), sdk.CompleteRequest{Messages: chat.Messages, Schema: schema}); err != nil {
		t.Fatal(err)
	}
	req = srv.Requests()[1]
	if rf := req.Body["response_format"].(map[string]any); rf["type"] != "json_object" || req.Messages[0].Role != "system" ||
		!strings.Contains(req.Messages[0].Content, `"summary"`) || !strings.Contains(strings.ToLower(req.Messages[0].Content), "json") {
		t.Errorf("json_object request: %v", req.Body)
	}
}

func TestRetries(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(key, "deepseek-chat")
	defer srv.Close()
	p := provider(t, srv, env(map[string]string{"DEEPSEEK_API_KEY": key}), map[string]string{"retries": "3"})

	// A 429 with Retry-After: 1 is waited out, then answered.
	srv.Push(fakellm.Reply{Status: 429, RetryAfter: "1", Error: "Rate limit reached for requests"})
	start := time.Now()
	if _, err := p.Complete(ctx, chat); err != nil {
		t.Fatalf("after a 429: %v", err)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("Retry-After: 1 waited only %v", d)
	}
	// Two 500s, then an answer. (Retry-After in fractions of a second,
	// which servers do not send, keeps the test short.)
	srv.Push(fakellm.Reply{Status: 500, RetryAfter: "0.05"}, fakellm.Reply{Status: 503, RetryAfter: "0.05"})
	if resp, err := p.Complete(ctx, chat); err != nil || !strings.HasPrefix(resp.Text, "echo: ") {
		t.Fatalf("after two 5xx: %+v, %v", resp, err)
	}
	// Failing for good: the last error, after the retries, with the status.
	srv.Push(fakellm.Reply{Status: 502, Error: "bad gateway", RetryAfter: "0.05"}, fakellm.Reply{Status: 502, Error: "bad gateway", RetryAfter: "0.05"},
		fakellm.Reply{Status: 502, Error: "bad gateway", RetryAfter: "0.05"}, fakellm.Reply{Status: 502, Error: "bad gateway", RetryAfter: "0.05"})
	_, err := p.Complete(ctx, chat)
	if err == nil || !strings.Contains(err.Error(), "failed (502) after 3 retries: bad gateway") {
		t.Errorf("persistent 502: %v", err)
	}
	if n := srv.Pending(); n != 0 {
		t.Errorf("%d scripted replies left: retried too few times", n)
	}
	// A 400 is not retried.
	srv.Push(fakellm.Reply{Status: 400, Error: "Invalid 'messages'"}, fakellm.Reply{})
	if _, err := p.Complete(ctx, chat); !errors.Is(err, sdk.ErrBadRequest) || srv.Pending() != 1 {
		t.Errorf("400: %v (pending %d)", err, srv.Pending())
	}
	srv.Next(fakellm.Request{}) // drop the unused reply
}

func TestBadAnswersAndTimeouts(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(key, "deepseek-chat")
	defer srv.Close()
	p := provider(t, srv, env(map[string]string{"DEEPSEEK_API_KEY": key}), map[string]string{"timeout": "300ms", "retries": "1"})
	srv.Push(fakellm.Reply{Raw: `{"choices": [{"message": {"content": "hal`})
	if _, err := p.Complete(ctx, chat); err == nil || !strings.Contains(err.Error(), "malformed JSON") {
		t.Errorf("malformed answer: %v", err)
	}
	srv.Push(fakellm.Reply{Raw: `{"id":"x","choices":[]}`})
	if _, err := p.Complete(ctx, chat); err == nil || !strings.Contains(err.Error(), "no choices") {
		t.Errorf("no choices: %v", err)
	}
	srv.Push(fakellm.Reply{Content: `{"summary": "cut`, Truncated: true})
	if _, err := p.Complete(ctx, sdk.CompleteRequest{Messages: chat.Messages, Schema: json.RawMessage(`{"type":"object"}`)}); err == nil || !strings.Contains(err.Error(), "cut off") {
		t.Errorf("truncated JSON: %v", err)
	}
	// A hung server: each attempt times out, and the error says so.
	srv.Push(fakellm.Reply{Delay: 2 * time.Second}, fakellm.Reply{Delay: 2 * time.Second})
	start := time.Now()
	_, err := p.Complete(ctx, chat)
	if err == nil || !strings.Contains(err.Error(), "did not answer within 300ms") || time.Since(start) > 1800*time.Millisecond {
		t.Errorf("hung server: %v after %v", err, time.Since(start))
	}
	// The caller's deadline wins over retries.
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	srv.Push(fakellm.Reply{Delay: time.Second})
	if _, err := p.Complete(cctx, chat); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("caller's deadline: %v", err)
	}
}

func TestKeyAndStatus(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(key, "deepseek-chat", "deepseek-reasoner")
	defer srv.Close()
	// No key in the environment.
	p := provider(t, srv, env(nil), nil)
	st, _ := p.Status(ctx)
	if st.State != sdk.StateError || !strings.Contains(st.Message, "no API key; set the environment variable DEEPSEEK_API_KEY") {
		t.Errorf("no key: %+v", st)
	}
	// A wrong key: refused, and the key is in no message.
	wrong := "sk-wrong-key-abcdefghijkl"
	p = provider(t, srv, env(map[string]string{"DEEPSEEK_API_KEY": wrong}), nil)
	st, _ = p.Status(ctx)
	_, err := p.Complete(ctx, chat)
	if st.State != sdk.StateError || !strings.Contains(st.Message, "refused the API key in DEEPSEEK_API_KEY (401)") || !errors.Is(err, sdk.ErrNotReady) {
		t.Errorf("wrong key: %+v, %v", st, err)
	}
	if strings.Contains(st.Message, wrong) || strings.Contains(err.Error(), wrong) {
		t.Errorf("the key leaked into a message: %q / %q", st.Message, err)
	}
	// A model the endpoint does not serve.
	p = provider(t, srv, env(map[string]string{"DEEPSEEK_API_KEY": key}), map[string]string{"model": "gpt-5"})
	if st, _ := p.Status(ctx); !strings.Contains(st.Message, "model gpt-5 is not served at "+srv.Base()+" (it serves deepseek-chat, deepseek-reasoner)") {
		t.Errorf("unknown model: %+v", st)
	}
	// No model list (some servers): ready on trust.
	srv.SetNoModelsRoute(true)
	p = provider(t, srv, env(map[string]string{"DEEPSEEK_API_KEY": key}), nil)
	if st, _ := p.Status(ctx); st.State != sdk.StateReady {
		t.Errorf("no /models route: %+v", st)
	}
	// Down.
	url := srv.Base()
	srv.Close()
	if st, _ := p.Status(ctx); st.State != sdk.StateError || !strings.Contains(st.Message, "not reachable") || !strings.Contains(st.Message, url) {
		t.Errorf("server down: %+v", st)
	}
}

func TestOptions(t *testing.T) {
	p := New(env(nil), hclog.NewNullLogger())
	for _, bad := range []map[string]string{{"colour": "x"}, {"url": "api.openai.com"}, {"apiKeyEnv": "sk-abc123!"}, {"retries": "-1"},
		{"responseFormat": "xml"}, {"timeout": "soon"}, {"model": " "}} {
		if err := p.Configure(context.Background(), bad); !errors.Is(err, sdk.ErrBadRequest) {
			t.Errorf("Configure(%v): %v", bad, err)
		}
	}
	if err := p.Configure(context.Background(), map[string]string{"url": "http://127.0.0.1:8080/v1/chat/completions/", "model": "qwen"}); err != nil {
		t.Fatal(err)
	}
	if p.opt.url != "http://127.0.0.1:8080/v1" {
		t.Errorf("url %q", p.opt.url)
	}
	if info, _ := p.Info(context.Background()); info.ModelID != "openai/qwen@127.0.0.1:8080" {
		t.Errorf("Info %+v", info)
	}
	if _, err := p.Complete(context.Background(), sdk.CompleteRequest{Messages: chat.Messages, Schema: json.RawMessage("{")}); !errors.Is(err, sdk.ErrBadRequest) {
		t.Errorf("broken schema: %v", err)
	}
}
