//go:build !race

package main

import (
	"fmt"

	"github.com/ollama/ollama/llama"
)

// raceEngine is false: this build runs llama.cpp.
const raceEngine = false

func initEngine() { llama.BackendInit() }

type llamaEngine struct {
	model *llama.Model
	lctx  *llama.Context
	batch *llama.Batch
}

func loadEngine(path string, nBatch, maxSeqs, threads int, progress func(float32)) (engine, error) {
	model, err := llama.LoadModelFromFile(path, llama.ModelParams{UseMmap: true, Progress: progress})
	if err != nil {
		return nil, fmt.Errorf("%s: %v (corrupt, or an architecture this llama.cpp cannot load)", path, err)
	}
	lctx, err := llama.NewContextWithModel(model, llama.NewContextParams(nBatch, nBatch, maxSeqs, threads, false, ""))
	if err != nil {
		llama.FreeModel(model)
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	batch, err := llama.NewBatch(nBatch, maxSeqs, 0)
	if err != nil {
		llama.FreeModel(model)
		return nil, err
	}
	return &llamaEngine{model: model, lctx: lctx, batch: batch}, nil
}

func (e *llamaEngine) tokenize(text string) ([]int, error) {
	return e.model.Tokenize(text, true, false)
}
func (e *llamaEngine) batchSize() int { return e.batch.Size() }
func (e *llamaEngine) dims() int      { return e.model.NEmbd() }

func (e *llamaEngine) embed(seqs [][]int) ([][]float32, error) {
	e.batch.Clear()
	for s, toks := range seqs {
		for pos, tok := range toks {
			e.batch.Add(tok, nil, pos, true, s)
		}
	}
	defer e.lctx.KvCacheClear()
	if err := e.lctx.Decode(e.batch); err != nil {
		return nil, err
	}
	out := make([][]float32, len(seqs))
	for s := range seqs {
		out[s] = e.lctx.GetEmbeddingsSeq(s)
	}
	return out, nil
}

func (e *llamaEngine) free() {
	e.batch.Free()
	llama.FreeModel(e.model) // the context goes with the process; llama.go has no free for it
}
