//go:build !race

package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/ollama/ollama/llama"

	_ "github.com/memhost/memhost/plugins/embeddings-local/amx" // llama.cpp's AMX kernels
)

// raceEngine is false: this build runs llama.cpp.
const raceEngine = false

func initEngine() { llama.BackendInit() }

// llamaEngine runs worker 0 in this process and the others as worker
// processes (worker.go), started at the first call with work for them and
// again for those that died.
type llamaEngine struct {
	model *llama.Model
	lctx  *llama.Context
	batch *llama.Batch
	n     int // dimensions, read at load: a worker may be ready after free()

	path            string // the model file, for worker processes
	nBatch, maxSeqs int
	want            int            // workers wanted
	log             hclog.Logger   // why a worker process did not start, and their stderr
	decodeTimeout   time.Duration  // a worker process's decode taking longer is killed
	restartWait     time.Duration  // starts of worker processes are this far apart
	loading         sync.WaitGroup // the goroutines waiting for started workers' models

	mu       sync.Mutex
	procs    []*workerProc // workers 1.., as they become ready
	starting []*workerProc // loading the model
	started  time.Time     // the last start
	freed    bool
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
	return &llamaEngine{model: model, lctx: lctx, batch: batch, n: model.NEmbd(), path: path, nBatch: nBatch, maxSeqs: maxSeqs, want: 1}, nil
}

// loadEngine loads the model into this process; the other workers start
// at grow. log hears why a worker process could not start, and what
// worker processes write on stderr.
func loadEngine(path string, nBatch, maxSeqs, workers int, progress func(float32), log hclog.Logger) (engine, error) {
	e, err := newLlamaEngine(path, nBatch, maxSeqs, progress)
	if err != nil {
		return nil, err
	}
	e.want, e.log, e.decodeTimeout, e.restartWait = workers, log, 2*time.Minute, 10*time.Second
	return e, nil
}

// grow starts the worker processes missing (never started, or gone) and
// waits for their model in the background: a process that embeds one
// query at a time (a one-shot recall) never pays for them. Starts are
// restartWait apart, so a worker that dies at once every time is not
// started again in a loop.
func (e *llamaEngine) grow() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.procs = slices.DeleteFunc(e.procs, func(w *workerProc) bool { return w.gone.Load() })
	n := e.want - 1 - len(e.procs) - len(e.starting)
	if n < 1 || e.freed || time.Since(e.started) < e.restartWait {
		return
	}
	e.started = time.Now()
	f, err := os.Open(e.path)
	if err != nil {
		e.log.Warn(notStarted, "err", err)
		return
	}
	defer f.Close()
	for range n {
		w, err := startWorker(f, e.nBatch, e.maxSeqs, e.log)
		if err != nil {
			e.log.Warn(notStarted, "err", err)
			return
		}
		e.starting = append(e.starting, w)
		e.loading.Go(func() { e.ready(w) })
	}
}

const notStarted = "an embedding worker process did not start; embedding on fewer"

// ready waits for a started worker's model, then makes it the next worker.
func (e *llamaEngine) ready(w *workerProc) {
	err := w.ready(e.n)
	e.mu.Lock()
	e.starting = slices.DeleteFunc(e.starting, func(s *workerProc) bool { return s == w })
	freed := e.freed // then free() stopped it
	if err == nil && !freed {
		e.procs = append(e.procs, w)
	}
	e.mu.Unlock()
	if err != nil && !freed {
		e.log.Warn(notStarted, "err", err)
		w.stop()
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
func (e *llamaEngine) dims() int { return e.n }

func (e *llamaEngine) embed(ctx context.Context, w int, seqs [][]int) ([][]float32, error) {
	if w > 0 {
		e.mu.Lock()
		p := e.procs[w-1]
		e.mu.Unlock()
		// A worker stuck in a decode (stopped, deadlocked) is killed: its
		// decodes go to the others, as a dead worker's.
		ctx, cancel := context.WithTimeout(ctx, e.decodeTimeout)
		defer cancel()
		defer context.AfterFunc(ctx, func() { p.cmd.Process.Kill() })()
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

// free stops the worker processes, those still loading too, and frees
// the model; no worker is started or reads the model after it.
func (e *llamaEngine) free() {
	e.mu.Lock()
	e.freed = true
	procs := slices.Concat(e.procs, e.starting)
	e.mu.Unlock()
	for _, w := range procs {
		w.stop()
	}
	e.loading.Wait()
	e.batch.Free()
	llama.FreeModel(e.model) // the context goes with the process; llama.go has no free for it
	e.model = nil            // a use after free is a nil dereference, not a read of freed memory
}
