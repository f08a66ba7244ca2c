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
