package cmdapp

import (
	"strings"
	"testing"
)

// TestWarnLines: the Host's warnings print as one CLI warning line each;
// below warning level nothing prints.
func TestWarnLines(t *testing.T) {
	var b strings.Builder
	log := NewWarnLines(&b).With("plugin", "hello")
	log.Info("quiet")
	log.Warn("index is corrupt; moved it aside", "aside", "brain/memory.db.corrupt-1", "err", "malformed\nsecond line")
	want := "memhost: warning: index is corrupt; moved it aside (plugin: hello, aside: brain/memory.db.corrupt-1, err: malformed second line)\n"
	if got := b.String(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestPluginLines(t *testing.T) {
	for in, want := range map[string]string{
		`[WARN]  memhost.local.memhost-embeddings-local: model load failed: model=/m.gguf err="bad magic"`: `memhost: warning: local plugin: model load failed: model=/m.gguf err="bad magic"`,
		`[ERROR] memhost.hello: plugin exited: code=2`:                                                     `memhost: hello plugin: plugin exited: code=2`,
		`[WARN]  memhost: plugin restarting: name=local`:                                                   `memhost: warning: plugin restarting: name=local`,
		"[WARN]  memhost.ollama: two\nlines":                                                               "memhost: warning: ollama plugin: two",
	} {
		var b strings.Builder
		(&PluginLines{w: &b}).Write([]byte(in + "\n"))
		if got, _, _ := strings.Cut(b.String(), "\n"); got != want {
			t.Errorf("%q:\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestTilde(t *testing.T) {
	a := &App{IO: Stdio{Getenv: func(k string) string {
		if k == "HOME" {
			return "/home/ann"
		}
		return ""
	}}}
	for in, want := range map[string]string{
		"/home/ann/.memhost":           "~/.memhost",
		"/home/ann":                    "~",
		"/home/anna/.memhost":          "/home/anna/.memhost",
		"/srv/memhost/bin/memhost-x":   "/srv/memhost/bin/memhost-x",
		"relative/path":                "relative/path",
		"/home/ann/../bob/.memhost":    "/home/ann/../bob/.memhost",
		"/home/ann/src/memhost/bin/mh": "~/src/memhost/bin/mh",
	} {
		if got := a.Tilde(in); got != want {
			t.Errorf("tilde(%q) = %q, want %q", in, got, want)
		}
	}
}
