//go:build !race

package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/ollama/ollama/llama"
)

// raceEngine is false: this build runs llama.cpp.
const raceEngine = false

func initEngine() { llama.BackendInit() }

// llamaEngine runs worker 0 in this process and the others as worker
// processes (worker.go), started at the first call with work for them.
type llamaEngine struct {
	model *llama.Model
	lctx  *llama.Context
	batch *llama.Batch

	path            string // the model file, for worker processes
	nBatch, maxSeqs int
	want            int // workers wanted
	warn            func(error)
	growing         sync.Once
	mu              sync.Mutex
	procs           []*workerProc // workers 1.., as they become ready
	freed           bool
}

// newLlamaEngine loads the model into this process with one context of
// one thread.
func newLlamaEngine(path string, nBatch, maxSeqs int, progress func(float32)) (*llamaEngine, error) {
	model, err := llama.LoadModelFromFile(path, llama.ModelParams{UseMmap: true, Progress: progress})
	if err != nil {
		return nil, fmt.Errorf("%s: %v (corrupt, or an architecture this llama.cpp cannot load)", path, err)
	}
	lctx, err := llama.NewContextWithModel(model, llama.NewContextParams(nBatch, nBatch, maxSeqs, 1, false, ""))
	if err != nil {
		llama.FreeModel(model)
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	batch, err := llama.NewBatch(nBatch, maxSeqs, 0)
	if err != nil {
		llama.FreeModel(model)
		return nil, err
	}
	return &llamaEngine{model: model, lctx: lctx, batch: batch, path: path, nBatch: nBatch, maxSeqs: maxSeqs, want: 1, warn: func(error) {}}, nil
}

// loadEngine loads the model into this process; the other workers start
// at grow. warn hears why a worker process could not start.
func loadEngine(path string, nBatch, maxSeqs, workers int, progress func(float32), warn func(error)) (engine, error) {
	e, err := newLlamaEngine(path, nBatch, maxSeqs, progress)
	if err != nil {
		return nil, err
	}
	e.want, e.warn = workers, warn
	return e, nil
}

// grow starts the worker processes, once, in the background: a process
// that embeds one query at a time (a one-shot recall) never pays for them.
func (e *llamaEngine) grow() {
	if e.want < 2 {
		return
	}
	e.growing.Do(func() { go e.startWorkers() })
}

func (e *llamaEngine) startWorkers() {
	f, err := os.Open(e.path)
	if err != nil {
		e.warn(err)
		return
	}
	defer f.Close()
	var started []*workerProc
	for range e.want - 1 {
		w, err := startWorker(f, e.nBatch, e.maxSeqs)
		if err != nil {
			e.warn(err)
			break
		}
		started = append(started, w)
	}
	for _, w := range started {
		if err := w.ready(e.dims()); err != nil {
			e.warn(err)
			w.stop()
			continue
		}
		e.mu.Lock()
		if e.freed {
			e.mu.Unlock()
			w.stop()
			continue
		}
		e.procs = append(e.procs, w)
		e.mu.Unlock()
	}
}

func (e *llamaEngine) tokenize(text string) ([]int, error) {
	return e.model.Tokenize(text, true, false)
}
func (e *llamaEngine) batchSize() int { return e.batch.Size() }
func (e *llamaEngine) workers() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return 1 + len(e.procs)
}
func (e *llamaEngine) dims() int { return e.model.NEmbd() }

func (e *llamaEngine) embed(w int, seqs [][]int) ([][]float32, error) {
	if w > 0 {
		e.mu.Lock()
		p := e.procs[w-1]
		e.mu.Unlock()
		return p.embed(seqs)
	}
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
	e.mu.Lock()
	e.freed = true
	procs := e.procs
	e.mu.Unlock()
	for _, w := range procs {
		w.stop()
	}
	e.batch.Free()
	llama.FreeModel(e.model) // the context goes with the process; llama.go has no free for it
}
