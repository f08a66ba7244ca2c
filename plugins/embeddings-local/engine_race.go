//go:build race

package main

import (
	"hash/fnv"
	"strings"
)

// raceEngine is true: this build does not link llama.cpp (see engine.go),
// and tests of the model's answers skip.
const raceEngine = true

func initEngine() {}

// wordEngine embeds by hashing words into the model's dimensions: enough
// for the Provider's batching, truncation and concurrency to run for real.
type wordEngine struct{ n, size int }

func loadEngine(path string, nBatch, maxSeqs, threads int, progress func(float32)) (engine, error) {
	meta, err := readGGUF(path)
	if err != nil {
		return nil, err
	}
	progress(1)
	return &wordEngine{n: int(meta.Embedding), size: nBatch}, nil
}

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
func (e *wordEngine) free()          {}

func (e *wordEngine) embed(seqs [][]int) ([][]float32, error) {
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
