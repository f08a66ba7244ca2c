package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/internal/syncbuf"
	"github.com/memhost/memhost/internal/testbin"
	"github.com/memhost/memhost/sdk"
	"github.com/memhost/memhost/sdk/sdktest"
)

// testPlugins are the packages of the plugins the tests run, by file
// name.
var testPlugins = map[string]string{
	Prefix + "hello":           "../examples/embeddings-hello",
	Prefix + "faulty":          "./testdata/faulty",
	GeneratorPrefix + "openai": "../plugins/generator-openai",
	GeneratorPrefix + "ollama": "../plugins/generator-ollama",
}

// binary is the plugin of that file name, built once (internal/testbin):
// copy it, never change it.
func binary(t testing.TB, file string) string {
	t.Helper()
	pkg, ok := testPlugins[file]
	if !ok {
		t.Fatalf("no test plugin %s", file)
	}
	return testbin.Path(t, pkg, "")
}

// pluginDir copies the named built plugins into a fresh folder.
func pluginDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		copyFile(t, binary(t, Prefix+n), filepath.Join(dir, Prefix+n))
	}
	return dir
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func newRegistry(t *testing.T, opts Options) *Registry {
	t.Helper()
	r := New(opts)
	t.Cleanup(r.Close)
	return r
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	first, second := pluginDir(t, "hello"), pluginDir(t, "hello", "faulty")
	os.WriteFile(filepath.Join(second, Prefix+"notexec"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(second, "unrelated-tool"), []byte("x"), 0o755)
	r := newRegistry(t, Options{Dirs: []string{first, second, filepath.Join(t.TempDir(), "missing")}})
	ps := r.Plugins()
	if len(ps) != 2 || ps[0].Name != "faulty" || ps[1].Name != "hello" {
		t.Fatalf("Plugins = %+v", ps)
	}
	if !strings.HasPrefix(ps[1].Path, first) {
		t.Errorf("hello from %s, want the first folder", ps[1].Path)
	}
	if len(ps[1].SHA256) != 64 {
		t.Errorf("sha256 %q", ps[1].SHA256)
	}
	_, warnings := r.Discover()
	joined := strings.Join(warnings, "\n")
	if !strings.Contains(joined, "notexec: not an executable") || !strings.Contains(joined, `plugin "hello" is already`) {
		t.Errorf("warnings: %v", warnings)
	}
}

func TestConformanceThroughRegistry(t *testing.T) {
	t.Parallel()
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "hello")}})
	p, err := r.Provider(context.Background(), "hello", map[string]string{"dimensions": "32"})
	if err != nil {
		t.Fatal(err)
	}
	sdktest.Run(t, p, sdktest.Options{})
	if err := p.Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func TestUnknownPlugin(t *testing.T) {
	t.Parallel()
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "hello", "faulty")}})
	_, err := r.Provider(context.Background(), "olama", nil)
	if !errors.Is(err, ErrUnknownPlugin) || !strings.Contains(err.Error(), "installed: faulty, hello") {
		t.Errorf("unknown plugin: %v", err)
	}
	if names := r.Names(); strings.Join(names, ",") != "faulty,hello" {
		t.Errorf("Names = %v", names)
	}
}

// TestCrashRestartsAndReplaysConfig: a plugin killed from outside, or
// crashing in a call, is started again with its options.
func TestCrashRestartsAndReplaysConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "faulty")}, MaxBackoff: 100 * time.Millisecond})
	p, err := r.Provider(ctx, "faulty", map[string]string{"dimensions": "5"})
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	if pid == 0 {
		t.Fatal("no pid")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	waitGone(t, pid)
	// The first call after the kill may fail; within the backoff it comes back.
	v := embedEventually(t, p, []string{"hello"})
	if len(v[0]) != 5 {
		t.Errorf("after restart, %d dimensions: configuration not replayed", len(v[0]))
	}
	if p.Pid() == pid || p.Pid() == 0 {
		t.Errorf("pid after restart %d (was %d)", p.Pid(), pid)
	}
	// A crash inside a call.
	if _, err := p.Embed(ctx, []string{"crash"}, sdk.KindDocument); err == nil {
		t.Error("Embed of a crashing plugin succeeded")
	}
	st, err := p.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("status right after the crash: %+v", st)
	if v := embedEventually(t, p, []string{"again"}); len(v[0]) != 5 {
		t.Errorf("after crash, %d dimensions", len(v[0]))
	}
}

func embedEventually(t *testing.T, p *Provider, texts []string) [][]float32 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := p.Embed(context.Background(), texts, sdk.KindDocument)
		if err == nil {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin did not come back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for range 200 {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestHungCallTimesOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "faulty")}, EmbedTimeout: 300 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	p, err := r.Provider(ctx, "faulty", nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	start := time.Now()
	_, err = p.Embed(ctx, []string{"hang"}, sdk.KindDocument)
	if err == nil || !strings.Contains(err.Error(), "did not answer within") {
		t.Errorf("hung Embed: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("hung Embed returned after %v", d)
	}
	waitGone(t, pid)
	if syscall.Kill(pid, 0) == nil {
		t.Error("the hung plugin process was left running")
	}
	embedEventually(t, p, []string{"fine"})
}

func TestBadVectorsAreRejected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "faulty")}})
	p, err := r.Provider(ctx, "faulty", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"nan", "wrongdims"} {
		_, err := p.Embed(ctx, []string{text, "ok"}, sdk.KindDocument)
		if !errors.Is(err, ErrBadVectors) {
			t.Errorf("Embed(%q): %v, want ErrBadVectors", text, err)
		}
	}
	if _, err := p.Embed(ctx, []string{"ok"}, sdk.KindDocument); err != nil {
		t.Errorf("good call after bad ones: %v", err)
	}
}

// TestReconfiguredDuringEmbed: vectors of other dimensions than the
// provider last recorded, from a plugin whose Info now says so (another
// caller configured it meanwhile), are ErrReconfigured, not ErrBadVectors.
func TestReconfiguredDuringEmbed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "hello")}})
	p, err := r.Provider(ctx, "hello", map[string]string{"dimensions": "32"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Embed(ctx, []string{"warm"}, sdk.KindDocument); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.info.Dimensions = 64 // as if a Configure had not been recorded yet
	p.mu.Unlock()
	_, err = p.Embed(ctx, []string{"text"}, sdk.KindDocument)
	if !errors.Is(err, ErrReconfigured) || errors.Is(err, ErrBadVectors) {
		t.Errorf("Embed after an unrecorded reconfigure: %v, want ErrReconfigured", err)
	}
}

func TestChangedBinaryIsRefused(t *testing.T) {
	t.Parallel()
	dir := pluginDir(t, "hello", "faulty")
	r := newRegistry(t, Options{Dirs: []string{dir}})
	r.Discover()
	// Replace hello with another program after discovery.
	copyFile(t, binary(t, Prefix+"faulty"), filepath.Join(dir, Prefix+"hello"))
	_, err := r.Provider(context.Background(), "hello", nil)
	if !errors.Is(err, ErrChecksum) {
		t.Errorf("changed binary: %v, want ErrChecksum", err)
	}
}

func TestNonPluginExecutable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, Prefix+"script"), []byte("#!/bin/sh\necho not a plugin\n"), 0o755)
	r := newRegistry(t, Options{Dirs: []string{dir}, StartTimeout: 2 * time.Second})
	_, err := r.Provider(context.Background(), "script", nil)
	if err == nil || !strings.Contains(err.Error(), "did not start") {
		t.Errorf("non-plugin: %v", err)
	}
}

func TestCloseKillsPlugins(t *testing.T) {
	t.Parallel()
	r := New(Options{Dirs: []string{pluginDir(t, "hello")}})
	p, err := r.Provider(context.Background(), "hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	r.Close()
	waitGone(t, pid)
	if syscall.Kill(pid, 0) == nil {
		t.Error("plugin still running after Close")
	}
	if _, err := r.Provider(context.Background(), "hello", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Provider after Close: %v", err)
	}
}

// TestPluginLogsKeepTheirLevels: a plugin's hclog output reaches the
// host's logger under the plugin's name with its level.
func TestPluginLogsKeepTheirLevels(t *testing.T) {
	t.Parallel()
	var buf syncbuf.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Debug})
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "faulty")}, Logger: log})
	if _, err := r.Provider(context.Background(), "faulty", map[string]string{"dimensions": "4"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), "configured") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	var line string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "configured") {
			line = l
		}
	}
	if !strings.Contains(line, "[WARN]") || !strings.Contains(line, "faulty") || !strings.Contains(line, "options=1") {
		t.Errorf("plugin log line = %q\nall:\n%s", line, buf.String())
	}
}

// TestRecentlyReady: a passed readiness check stands only on the process
// it was made on, within its time, until a Configure or a failed call.
func TestRecentlyReady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRegistry(t, Options{Dirs: []string{pluginDir(t, "faulty")}, MaxBackoff: 100 * time.Millisecond})
	p, err := r.Provider(ctx, "faulty", map[string]string{"dimensions": "5"})
	if err != nil {
		t.Fatal(err)
	}
	info, err := p.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.RecentlyReady(time.Minute); ok {
		t.Fatal("ready before any check was marked")
	}
	mark := func() {
		t.Helper()
		p.MarkReady(info)
		if got, ok := p.RecentlyReady(time.Minute); !ok || got != info {
			t.Fatalf("RecentlyReady right after MarkReady = %+v, %v", got, ok)
		}
	}
	mark()
	if _, ok := p.RecentlyReady(0); ok {
		t.Error("a check older than within still stands")
	}
	if err := p.Configure(ctx, map[string]string{"dimensions": "6"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.RecentlyReady(time.Minute); ok {
		t.Error("the check stands after a Configure")
	}
	mark()
	if _, err := p.Embed(ctx, []string{"crash"}, sdk.KindDocument); err == nil {
		t.Fatal("Embed of a crashing plugin succeeded")
	}
	if _, ok := p.RecentlyReady(time.Minute); ok {
		t.Error("the check stands after a failed call")
	}
	embedEventually(t, p, []string{"back"})
	mark()
	if _, err := p.Embed(ctx, []string{"nan"}, sdk.KindDocument); !errors.Is(err, ErrBadVectors) {
		t.Fatalf("Embed(nan) = %v, want ErrBadVectors", err)
	}
	if _, ok := p.RecentlyReady(time.Minute); ok {
		t.Error("the check stands after vectors that failed their checks")
	}
	mark()
	pid := p.Pid()
	syscall.Kill(pid, syscall.SIGKILL)
	waitGone(t, pid)
	// go-plugin notes the exit just after the process is reaped.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, ok := p.RecentlyReady(time.Minute); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the check stands for a plugin process that died")
		}
	}
}
