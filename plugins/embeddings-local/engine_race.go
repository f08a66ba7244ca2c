//go:build race

package main

import (
	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/plugins/embeddings-local/gguf"
)

// raceEngine is true: this build does not link llama.cpp (see engine.go),
// and tests of the model's answers skip.
const raceEngine = true

func initEngine() {}

func loadEngine(path string, nBatch, maxSeqs, workers int, progress func(float32), _ hclog.Logger) (engine, error) {
	meta, err := gguf.Read(path)
	if err != nil {
		return nil, err
	}
	progress(1)
	return &wordEngine{n: int(meta.Embedding), size: nBatch, workerCount: workers}, nil
}

// runWorker: a -race build's engine has no worker processes.
func runWorker(string) int { return 2 }
