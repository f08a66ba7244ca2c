package main

import (
	"io"
	"log/slog"
	"os"
	"testing"
)

// llama.cpp logs through slog.Default at its info level; keep the tests'
// output readable.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})))
	os.Exit(m.Run())
}
