package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/internal/fakeollama"
	"github.com/memhost/memhost/sdk"
	"github.com/memhost/memhost/sdk/sdktest"
)

func noEnv(string) string { return "" }

func gemma() map[string]fakeollama.Model {
	return map[string]fakeollama.Model{
		"embeddinggemma:latest": {Dimensions: 48, Capabilities: []string{"embedding"}, Digest: "85462619ee72553d3c8a5ac6d9bd6a1a5d61e2ab0fbd8c6a5d5b8b3f0e5d1a2b"},
		"llama3.2:latest":       {Dimensions: 3072, Capabilities: []string{"completion", "tools"}, Digest: "a80c4f17acd5"},
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

func TestConformance(t *testing.T) {
	srv := fakeollama.New(gemma())
	defer srv.Close()
	sdktest.Run(t, provider(t, srv, nil), sdktest.Options{})
}

func TestHappyPathAndBatching(t *testing.T) {
	ctx := context.Background()
	srv := fakeollama.New(gemma())
	defer srv.Close()
	p := provider(t, srv, map[string]string{"batchSize": "2", "keepAlive": "10m"})
	info, err := p.Info(ctx)
	if err != nil || info.Dimensions != 48 || info.ModelID != "ollama/embeddinggemma:latest@85462619ee72" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	before, _ := srv.EmbedCalls()
	texts := []string{"a one", "b two", "c three", "d four", "e five"}
	v, err := p.Embed(ctx, texts, sdk.KindDocument)
	if err != nil || len(v) != 5 {
		t.Fatalf("Embed = %d vectors, %v", len(v), err)
	}
	calls, sizes := srv.EmbedCalls()
	if calls-before != 3 || !equalInts(sizes[len(sizes)-3:], []int{2, 2, 1}) {
		t.Errorf("batches: %d calls, sizes %v", calls-before, sizes)
	}
	req := srv.LastEmbedRequest()
	if req["truncate"] != true || req["keep_alive"] != "10m" || req["model"] != "embeddinggemma" {
		t.Errorf("request body %v", req)
	}
	// embeddinggemma's document prefix was sent, and the vector is that of the prefixed text.
	want := fakeollama.Vector("title: none | text: e five", 48)
	for i := range want {
		if float32(want[i]) != v[4][i] {
			t.Fatalf("vector of text 4 is not the prefixed text's")
		}
	}
	q, err := p.Embed(ctx, []string{"e five"}, sdk.KindQuery)
	if err != nil {
		t.Fatal(err)
	}
	if in := srv.LastEmbedRequest()["input"].([]any)[0]; in != "task: search result | query: e five" {
		t.Errorf("query input %q", in)
	}
	if equalVec(q[0], v[4]) {
		t.Error("query and document embeddings of one text are equal: prefixes not applied")
	}
}

func TestStatusMessages(t *testing.T) {
	ctx := context.Background()
	srv := fakeollama.New(gemma())
	tests := []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"model": "nomic-embed-text"}, "model nomic-embed-text is not pulled: run `ollama pull nomic-embed-text`"},
		{map[string]string{"model": "llama3.2"}, "llama3.2 is not an embedding model"},
	}
	for _, tt := range tests {
		p := provider(t, srv, tt.opts)
		st, err := p.Status(ctx)
		if err != nil || st.State != sdk.StateError || !strings.Contains(st.Message, tt.want) {
			t.Errorf("Status(%v) = %+v, %v; want error %q", tt.opts, st, err, tt.want)
		}
		if _, err := p.Embed(ctx, []string{"x"}, sdk.KindDocument); !errors.Is(err, sdk.ErrNotReady) {
			t.Errorf("Embed(%v): %v, want ErrNotReady", tt.opts, err)
		}
	}
	p := provider(t, srv, nil)
	url := srv.URL
	srv.Close() // server down
	st, _ := p.Status(ctx)
	if want := "Ollama is not reachable at " + url + ": start it with `ollama serve`"; st.State != sdk.StateError || st.Message != want {
		t.Errorf("server down: %+v, want %q", st, want)
	}
	start := time.Now()
	if _, err := p.Embed(ctx, []string{"x"}, sdk.KindDocument); !errors.Is(err, sdk.ErrNotReady) || time.Since(start) > 2*time.Second {
		t.Errorf("Embed with the server down: %v after %v", err, time.Since(start))
	}
}

func TestNotEmbeddingWithoutCapabilities(t *testing.T) {
	// Older servers do not report capabilities: the probe's error tells.
	srv := fakeollama.New(map[string]fakeollama.Model{"llama3.2:latest": {Dimensions: 8, Capabilities: []string{"completion"}}})
	defer srv.Close()
	p := provider(t, srv, map[string]string{"model": "llama3.2"})
	st, _ := p.Status(context.Background())
	if !strings.Contains(st.Message, "is not an embedding model") {
		t.Errorf("Status = %+v", st)
	}
}

func TestSlowServerTimesOut(t *testing.T) {
	srv := fakeollama.New(gemma())
	defer srv.Close()
	p := provider(t, srv, map[string]string{"timeout": "200ms"})
	if _, err := p.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.Lock()
	srv.Delay = 2 * time.Second
	srv.Unlock()
	start := time.Now()
	_, err := p.Embed(context.Background(), []string{"x"}, sdk.KindDocument)
	if err == nil || time.Since(start) > 1800*time.Millisecond {
		t.Errorf("slow server: %v after %v", err, time.Since(start))
	}
	// Cancellation is honoured too.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	p = provider(t, srv, map[string]string{"timeout": "30s"})
	start = time.Now()
	if _, err := p.Embed(ctx, []string{"x"}, sdk.KindDocument); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Errorf("cancelled: %v after %v", err, time.Since(start))
	}
}

func TestBadAnswers(t *testing.T) {
	ctx := context.Background()
	srv := fakeollama.New(gemma())
	defer srv.Close()
	p := provider(t, srv, nil)
	if _, err := p.Info(ctx); err != nil {
		t.Fatal(err)
	}
	for _, fault := range []string{"wrong length", "malformed"} {
		srv.Lock()
		srv.WrongLength, srv.Malformed = fault == "wrong length", fault == "malformed"
		srv.Unlock()
		_, err := p.Embed(ctx, []string{"x", "y"}, sdk.KindDocument)
		if err == nil {
			t.Errorf("%s: accepted", fault)
			continue
		}
		t.Logf("%s: %v", fault, err)
	}
	srv.Lock()
	srv.WrongLength, srv.Malformed, srv.FailNext = false, false, 2 // two 503s, then fine
	srv.Unlock()
	if v, err := p.Embed(ctx, []string{"x"}, sdk.KindDocument); err != nil || len(v) != 1 {
		t.Errorf("after two 503s: %v", err)
	}
	srv.Lock()
	srv.FailNext = 10
	srv.Unlock()
	if _, err := p.Embed(ctx, []string{"x"}, sdk.KindDocument); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("persistent 503: %v", err)
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
	for _, bad := range []map[string]string{{"colour": "x"}, {"batchSize": "0"}, {"timeout": "soon"}, {"url": "localhost"}, {"model": " "}} {
		if err := p.Configure(context.Background(), bad); !errors.Is(err, sdk.ErrBadRequest) {
			t.Errorf("Configure(%v): %v", bad, err)
		}
	}
	if err := p.Configure(context.Background(), map[string]string{"model": "nomic-embed-text", "queryPrefix": "Q: "}); err != nil {
		t.Fatal(err)
	}
	if p.prefixQ != "Q: " || p.prefixD != "search_document: " {
		t.Errorf("prefixes %q %q", p.prefixQ, p.prefixD)
	}
	for in, want := range map[string]string{"": "http://127.0.0.1:11434", "myhost": "http://myhost:11434", "https://x.example": "https://x.example:443", "http://[::1]:8080": "http://[::1]:8080"} {
		if got := hostURL(in); got != want {
			t.Errorf("hostURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalVec(a, b []float32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestEmbed404: the model vanished between the check and the embedding.
func TestEmbed404(t *testing.T) {
	srv := fakeollama.New(gemma())
	defer srv.Close()
	p := provider(t, srv, nil)
	srv.Lock()
	srv.EmbedNotFound = true
	srv.Unlock()
	_, err := p.Embed(context.Background(), []string{"x"}, sdk.KindDocument)
	if !errors.Is(err, sdk.ErrNotReady) || !strings.Contains(err.Error(), "run `ollama pull embeddinggemma`") {
		t.Errorf("404 from /api/embed: %v", err)
	}
}

// TestRetriesUntilServerIsBack: connection refused is retried with backoff
// within the call, so a server restarting a moment later is not an error.
func TestRetriesUntilServerIsBack(t *testing.T) {
	srv := fakeollama.New(gemma())
	p := provider(t, srv, nil)
	srv.Close()
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		time.Sleep(300 * time.Millisecond)
		srv.Restart()
	}()
	defer func() { <-restarted; srv.Close() }() // the restarted server, not the first
	v, err := p.Embed(context.Background(), []string{"x"}, sdk.KindDocument)
	if err != nil || len(v) != 1 {
		t.Errorf("Embed across a restart: %v", err)
	}
}
