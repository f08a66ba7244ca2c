package main

import (
	"context"
	"hash/fnv"
	"strings"
)

// wordEngine embeds by hashing words into the model's dimensions: enough
// for the Provider's batching, truncation and concurrency to run for real
// in a -race build (engine_race.go) and in tests of the worker pool.
type wordEngine struct{ n, size, workerCount int }

func (e *wordEngine) tokenize(text string) ([]int, error) {
	toks := []int{1}
	for _, w := range strings.Fields(text) {
		h := fnv.New32a()
		h.Write([]byte(strings.ToLower(w)))
		toks = append(toks, int(h.Sum32()%30000)+2)
	}
	return append(toks, 0), nil
}

func (e *wordEngine) batchSize() int { return e.size }
func (e *wordEngine) dims() int      { return e.n }
func (e *wordEngine) workers() int   { return e.workerCount }
func (e *wordEngine) free()          {}
func (e *wordEngine) grow()          {}

func (e *wordEngine) embed(_ context.Context, w int, seqs [][]int) ([][]float32, error) {
	out := make([][]float32, len(seqs))
	for s, toks := range seqs {
		v := make([]float32, e.n)
		for _, t := range toks {
			v[t%e.n]++
		}
		out[s] = v
	}
	return out, nil
}
