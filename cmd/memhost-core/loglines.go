package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// warnLines is the slog handler of a command's Host: its warnings (an
// index moved aside, a plugin restarting) print as the CLI's own, one line
// each — "memhost: warning: message (key: value, …)" — not as log records.
type warnLines struct {
	mu    *sync.Mutex
	w     io.Writer
	attrs []slog.Attr
}

func newWarnLines(w io.Writer) *slog.Logger {
	return slog.New(&warnLines{mu: &sync.Mutex{}, w: w})
}

func (h *warnLines) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *warnLines) Handle(_ context.Context, r slog.Record) error {
	var parts []string
	add := func(a slog.Attr) bool {
		parts = append(parts, a.Key+": "+a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	line := "memhost: warning: " + r.Message
	if r.Level >= slog.LevelError {
		line = "memhost: " + r.Message
	}
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	line = strings.Join(strings.Fields(line), " ") // one line, whatever the values hold
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := fmt.Fprintln(h.w, line)
	return err
}

func (h *warnLines) WithAttrs(as []slog.Attr) slog.Handler {
	return &warnLines{mu: h.mu, w: h.w, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *warnLines) WithGroup(string) slog.Handler { return h }

// pluginLines is where a command's plugin log (hclog, without times) goes:
// each record prints as the CLI's own warning line — "memhost: warning:
// local plugin: message key=value" — not in hclog's format.
type pluginLines struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *pluginLines) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if _, err := fmt.Fprintln(p.w, pluginLine(line)); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// pluginLine rewords one hclog line: "[WARN]  memhost.local.memhost-
// embeddings-local: text" is "memhost: warning: local plugin: text".
func pluginLine(line string) string {
	prefix := "memhost: warning: "
	if rest, ok := strings.CutPrefix(line, "["); ok {
		level, after, found := strings.Cut(rest, "]")
		if found {
			if level == "ERROR" {
				prefix = "memhost: "
			}
			line = strings.TrimSpace(after)
		}
	}
	if name, text, ok := strings.Cut(line, ": "); ok && !strings.Contains(name, " ") {
		parts := strings.Split(name, ".")
		switch {
		case len(parts) >= 2 && parts[0] == "memhost":
			line = parts[1] + " plugin: " + text
		case len(parts) == 1 && parts[0] == "memhost":
			line = text
		}
	}
	return prefix + strings.Join(strings.Fields(line), " ")
}
