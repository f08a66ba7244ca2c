package registry

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost/internal/fakellm"
	"github.com/memhost/memhost/internal/fakeollama"
	"github.com/memhost/memhost/internal/fakeopenai"
	"github.com/memhost/memhost/sdk"
	"github.com/memhost/memhost/sdk/sdktest"
)

// generatorDir copies the named generator binaries, built once, into a
// fresh folder.
func generatorDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		copyFile(t, binary(t, GeneratorPrefix+n), filepath.Join(dir, GeneratorPrefix+n))
	}
	return dir
}

const testKey = "sk-registry-test-key-0123"

func openaiOptions(srv *fakeopenai.Server) map[string]string {
	return map[string]string{"url": srv.Base(), "model": "deepseek-chat", "apiKeyEnv": "MEMHOST_TEST_DEEPSEEK_KEY", "retries": "2"}
}

// TestGeneratorConformanceThroughRegistry runs both generator binaries
// through go-plugin against fake servers speaking their APIs; the OpenAI
// key reaches the plugin through its environment only.
func TestGeneratorConformanceThroughRegistry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	oai := fakeopenai.New(testKey, "deepseek-chat")
	defer oai.Close()
	oll := fakeollama.New(map[string]fakeollama.Model{"llama3.2:latest": {Capabilities: []string{"completion"}}})
	defer oll.Close()
	r := newRegistry(t, Options{Kind: Generators, Dirs: []string{generatorDir(t, "openai", "ollama")}, Env: []string{"MEMHOST_TEST_DEEPSEEK_KEY=" + testKey}})
	if ps := r.Plugins(); len(ps) != 2 || ps[0].Name != "ollama" || ps[1].Name != "openai" {
		t.Fatalf("Plugins = %+v", ps)
	}
	t.Run("openai", func(t *testing.T) {
		g, release, err := r.Generator(ctx, "openai", openaiOptions(oai))
		defer release()
		if err != nil {
			t.Fatal(err)
		}
		sdktest.RunGenerator(t, g, sdktest.GeneratorOptions{Configure: openaiOptions(oai)})
		if err := g.Ping(ctx); err != nil || g.Pid() == 0 {
			t.Errorf("Ping: %v, pid %d", err, g.Pid())
		}
	})
	t.Run("ollama", func(t *testing.T) {
		g, release, err := r.Generator(ctx, "ollama", map[string]string{"url": oll.URL})
		defer release()
		if err != nil {
			t.Fatal(err)
		}
		sdktest.RunGenerator(t, g, sdktest.GeneratorOptions{Configure: map[string]string{"url": oll.URL}})
	})
}

// TestGeneratorFaultsThroughPlugin: what the fake servers script reaches
// the host through the plugin process as the right error, or as an answer
// after the plugin's retries.
func TestGeneratorFaultsThroughPlugin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := fakeopenai.New(testKey, "deepseek-chat")
	defer srv.Close()
	r := newRegistry(t, Options{Kind: Generators, Dirs: []string{generatorDir(t, "openai")}, Env: []string{"MEMHOST_TEST_DEEPSEEK_KEY=" + testKey}})
	g, release, err := r.Generator(ctx, "openai", openaiOptions(srv))
	defer release()
	if err != nil {
		t.Fatal(err)
	}
	chat := sdk.CompleteRequest{Messages: []sdk.Message{{Role: "user", Content: "hello"}}}
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)

	srv.Push(fakellm.Reply{Status: 429, RetryAfter: "0.05"}, fakellm.Reply{Status: 500, RetryAfter: "0.05"})
	if resp, err := g.Complete(ctx, chat); err != nil || resp.Text != "echo: hello" {
		t.Errorf("after a 429 and a 500: %+v, %v", resp, err)
	}
	srv.Push(fakellm.Reply{Raw: `{"choices": [`})
	if _, err := g.Complete(ctx, chat); err == nil || !strings.Contains(err.Error(), "malformed JSON") {
		t.Errorf("malformed JSON: %v", err)
	}
	// The model answers prose where JSON was asked for: refused here.
	srv.Push(fakellm.Reply{Content: "Sure! Here is the JSON you asked for: {a: 1}"})
	if _, err := g.Complete(ctx, sdk.CompleteRequest{Messages: chat.Messages, Schema: schema}); !errors.Is(err, ErrBadAnswer) {
		t.Errorf("prose for JSON: %v, want ErrBadAnswer", err)
	}
	srv.Push(fakellm.Reply{Content: "   "})
	if _, err := g.Complete(ctx, chat); !errors.Is(err, ErrBadAnswer) {
		t.Errorf("blank answer: %v, want ErrBadAnswer", err)
	}
	// A bad request crosses the wire as ErrBadRequest.
	if _, err := g.Complete(ctx, sdk.CompleteRequest{}); !errors.Is(err, sdk.ErrBadRequest) {
		t.Errorf("no messages: %v", err)
	}
	// The key never appears in what the plugin says.
	if st, _ := g.Status(ctx); st.State != sdk.StateReady || strings.Contains(st.Message, testKey) {
		t.Errorf("Status = %+v", st)
	}
}

// TestGeneratorHangAndCrash: a plugin that does not answer within
// CompleteTimeout is killed and the next call starts it again; a plugin
// killed from outside comes back with its options replayed.
func TestGeneratorHangAndCrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := fakeopenai.New(testKey, "deepseek-chat", "deepseek-reasoner")
	defer srv.Close()
	r := newRegistry(t, Options{Kind: Generators, Dirs: []string{generatorDir(t, "openai")}, CompleteTimeout: 500 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, Env: []string{"MEMHOST_TEST_DEEPSEEK_KEY=" + testKey}})
	opts := openaiOptions(srv)
	opts["model"] = "deepseek-reasoner"
	g, release, err := r.Generator(ctx, "openai", opts)
	defer release()
	if err != nil {
		t.Fatal(err)
	}
	chat := sdk.CompleteRequest{Messages: []sdk.Message{{Role: "user", Content: "hello"}}}
	pid := g.Pid()
	srv.Push(fakellm.Reply{Delay: 5 * time.Second})
	start := time.Now()
	_, err = g.Complete(ctx, chat)
	if err == nil || !strings.Contains(err.Error(), "did not answer within 500ms") || time.Since(start) > 3*time.Second {
		t.Errorf("hung call: %v after %v", err, time.Since(start))
	}
	waitGone(t, pid)
	if syscall.Kill(pid, 0) == nil {
		t.Error("the hung plugin was left running")
	}
	completeEventually(t, g, chat)
	pid = g.Pid()
	syscall.Kill(pid, syscall.SIGKILL)
	waitGone(t, pid)
	completeEventually(t, g, chat)
	if g.Pid() == pid || g.Pid() == 0 {
		t.Errorf("pid after restart %d (was %d)", g.Pid(), pid)
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.Model != "deepseek-reasoner" {
		t.Errorf("after the restart the plugin asked for %q: options not replayed", last.Model)
	}
}

func completeEventually(t *testing.T, g *Generator, req sdk.CompleteRequest) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := g.Complete(context.Background(), req)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("generator did not come back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestGeneratorDiscoveryAndPinning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := generatorDir(t, "openai", "ollama")
	copyFile(t, binary(t, Prefix+"hello"), filepath.Join(dir, Prefix+"hello"))
	gens := newRegistry(t, Options{Kind: Generators, Dirs: []string{dir}})
	embs := newRegistry(t, Options{Dirs: []string{dir}})
	if got := strings.Join(gens.Names(), ","); got != "ollama,openai" {
		t.Errorf("generator names %q", got)
	}
	if got := strings.Join(embs.Names(), ","); got != "hello" {
		t.Errorf("embeddings names %q: generators must not be listed", got)
	}
	_, release, err := gens.Generator(ctx, "deepseek", nil)
	release()
	if !errors.Is(err, ErrUnknownPlugin) || err.Error() != `unknown generator plugin "deepseek" (installed: ollama, openai)` {
		t.Errorf("unknown generator: %v", err)
	}
	if _, _, err := embs.Generator(ctx, "openai", nil); err == nil {
		t.Error("an embeddings registry handed out a generator")
	}
	// The binary changes after discovery: refused.
	gens.Discover()
	b, _ := os.ReadFile(binary(t, GeneratorPrefix+"ollama"))
	if err := os.WriteFile(filepath.Join(dir, GeneratorPrefix+"openai"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	_, release, err = gens.Generator(ctx, "openai", nil)
	release()
	if !errors.Is(err, ErrChecksum) {
		t.Errorf("changed binary: %v, want ErrChecksum", err)
	}
}
