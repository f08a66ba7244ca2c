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
	if spec := os.Getenv(workerEnv); spec != "" {
		os.Exit(runWorker(spec)) // a worker process of a provider under test
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})))
	os.Exit(m.Run())
}
