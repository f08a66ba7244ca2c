package main

// engine is the model behind a Provider: llama.cpp in every real build
// (engine_llama.go). Under -race, engine_race.go stands in for it, because
// the race detector instruments Go code only and compiling llama.cpp a
// second time for a race build costs minutes; the Provider's own
// concurrency (configure, load, status, embed) is what the race run checks,
// and the plain test run checks the real model.
type engine interface {
	tokenize(text string) ([]int, error)
	batchSize() int
	// embed runs one batch: a vector per sequence, nil where the model
	// pooled none.
	embed(seqs [][]int) ([][]float32, error)
	dims() int
	free()
}
