package main

import (
	"context"
	"errors"
)

// engine is the model behind a Provider: llama.cpp in every real build
// (engine_llama.go). Under -race, engine_race.go stands in for it, because
// the race detector instruments Go code only and compiling llama.cpp a
// second time for a race build costs minutes; the Provider's own
// concurrency (configure, load, status, embed) is what the race run checks,
// and the plain test run checks the real model.
//
// An engine has workers: llama.cpp contexts over the one model, each
// decoding on one thread, which the Provider runs side by side. At the
// shapes of embedding (one text of tens to hundreds of tokens a decode)
// llama.cpp's threads spend a third of their time waiting for each other
// at every operation of the graph: two contexts of one thread embed 1.4x
// as many tokens a CPU-second as one context of two threads, and a single
// short query takes 2.8 ms on one thread against 4.9 ms on two
// (docs/benchmarks.md).
type engine interface {
	tokenize(text string) ([]int, error)
	batchSize() int
	// workers is how many workers run now; grow asks for the rest, and
	// for those gone (worker processes start in the background). Worker
	// numbers hold from one grow to the next.
	workers() int
	grow()
	// embed runs one batch on worker w (0 <= w < workers()): a vector
	// per sequence, nil where the model pooled none. Different workers
	// may embed at the same time; one worker embeds one batch at a time.
	// A worker other than 0 may be gone (errWorkerGone), or be killed
	// when ctx ends mid-decode: its batches go to the others.
	embed(ctx context.Context, w int, seqs [][]int) ([][]float32, error)
	dims() int
	free()
}

// errWorkerGone: a worker process died; the engine runs on the others.
var errWorkerGone = errors.New("embedding worker process gone")

// workerEnv, set in a worker process's environment (worker.go), holds
// "nBatch,maxSeqs".
const workerEnv = "MEMHOST_LOCAL_WORKER"
