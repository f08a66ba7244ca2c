//go:build !race

package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Worker processes: the engine's workers after the first.
//
// llama.cpp's float matrix kernel (llamafile's tinyBLAS, which multiplies
// the BF16 weights of repack.go) hands out its blocks of work from one
// static counter per kernel shape, shared by every graph the process
// computes: two contexts decoding at once in one process skip each other's
// blocks and return wrong vectors (seen as cosines of 0.17 to the right
// vector). So the workers after the first are processes of their own: this
// binary again, started with workerEnv set, loading the same model (the
// repacked copy is handed over as an open file, the memory shared) and
// embedding the token sequences it reads on stdin. A worker that dies is
// dropped (errWorkerGone) and its decodes go to the workers left; it also
// exits when its stdin closes, so none outlives the provider.

// workerProc is the parent's side of one worker process.
type workerProc struct {
	cmd *exec.Cmd
	in  *bufio.Writer
	inC io.Closer
	out *bufio.Reader

	mu      sync.Mutex  // one decode at a time
	gone    atomic.Bool // it died: errWorkerGone from now on
	stopped sync.Once
}

// startWorker starts a worker process on the model file f (the model's
// path opened for reading); what it writes on stderr (a crash report,
// llama.cpp's errors) goes to log as warnings.
func startWorker(f *os.File, nBatch, maxSeqs int, log hclog.Logger) (*workerProc, error) {
	exe, err := workerExe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d,%d", workerEnv, nBatch, maxSeqs))
	cmd.ExtraFiles = []*os.File{f} // fd 3
	cmd.Stderr = log.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Warn})
	cmd.SysProcAttr = workerSysProcAttr()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting an embedding worker: %w", err)
	}
	return &workerProc{cmd: cmd, in: bufio.NewWriter(in), inC: in, out: bufio.NewReader(out)}, nil
}

// ready waits for the worker's model: its dimensions, or why it failed.
func (w *workerProc) ready(dims int) error {
	var got uint32
	if err := binary.Read(w.out, binary.LittleEndian, &got); err != nil {
		return fmt.Errorf("embedding worker: %w", w.exitErr(err))
	}
	if got == 0 {
		msg, ok := readMsg(w.out)
		if !ok {
			msg = "it gave no reason"
		}
		return fmt.Errorf("embedding worker: %s", msg)
	}
	if int(got) != dims {
		return fmt.Errorf("embedding worker loaded %d dimensions, not %d", got, dims)
	}
	return nil
}

// embed sends one batch and reads its vectors.
func (w *workerProc) embed(seqs [][]int) ([][]float32, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone.Load() {
		return nil, errWorkerGone
	}
	vecs, err := w.exchange(seqs)
	if errors.Is(err, errWorkerGone) {
		w.gone.Store(true)
		w.stop()
	}
	return vecs, err
}

func (w *workerProc) exchange(seqs [][]int) ([][]float32, error) {
	le := binary.LittleEndian
	buf := le.AppendUint32(nil, uint32(len(seqs)))
	for _, s := range seqs {
		buf = le.AppendUint32(buf, uint32(len(s)))
		for _, t := range s {
			buf = le.AppendUint32(buf, uint32(int32(t)))
		}
	}
	if _, err := w.in.Write(buf); err != nil {
		return nil, errWorkerGone
	}
	if err := w.in.Flush(); err != nil {
		return nil, errWorkerGone
	}
	var status uint32
	if err := binary.Read(w.out, le, &status); err != nil {
		return nil, errWorkerGone
	}
	if status != 0 {
		msg, ok := readMsg(w.out)
		if !ok {
			return nil, errWorkerGone // the stream is out of step: no answer can be trusted
		}
		return nil, errors.New(msg)
	}
	vecs := make([][]float32, len(seqs))
	for i := range vecs {
		var n uint32
		if err := binary.Read(w.out, le, &n); err != nil {
			return nil, errWorkerGone
		}
		if n == 0 {
			continue
		}
		if n > maxVectorLen {
			return nil, errWorkerGone // out of step, not a vector
		}
		v := make([]float32, n)
		if err := binary.Read(w.out, le, v); err != nil {
			return nil, errWorkerGone
		}
		vecs[i] = v
	}
	return vecs, nil
}

// stop closes the worker's stdin (it exits) and waits a moment for it,
// once however many callers.
func (w *workerProc) stop() {
	w.stopped.Do(func() {
		w.inC.Close()
		done := make(chan struct{})
		go func() { w.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			w.cmd.Process.Kill()
			<-done
		}
	})
}

func (w *workerProc) exitErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		w.stop()
		return fmt.Errorf("exited (%v)", w.cmd.ProcessState)
	}
	return err
}

// maxVectorLen bounds the length a worker's answer may give a vector;
// longer means the stream is out of step.
const maxVectorLen = 1 << 16

// readMsg reads a worker's error message; ok is false when the stream
// did not hold a whole one.
func readMsg(r io.Reader) (msg string, ok bool) {
	var n uint32
	if binary.Read(r, binary.LittleEndian, &n) != nil || n > 1<<16 {
		return "", false
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", false
	}
	return string(b), true
}

// runWorker is a worker process's main: load the model from fd 3, then
// embed batches from stdin until it closes.
func runWorker(spec string) int {
	var nBatch, maxSeqs int
	if a, b, ok := strings.Cut(spec, ","); ok {
		nBatch, _ = strconv.Atoi(a)
		maxSeqs, _ = strconv.Atoi(b)
	}
	out := bufio.NewWriter(os.Stdout)
	le := binary.LittleEndian
	fail := func(msg string) int {
		out.Write(le.AppendUint32(le.AppendUint32(nil, 0), uint32(len(msg))))
		out.WriteString(msg)
		out.Flush()
		return 1
	}
	if nBatch <= 0 || maxSeqs <= 0 {
		return fail("bad " + workerEnv + " " + strconv.Quote(spec))
	}
	// Its stderr is the provider's warnings (startWorker): of llama.cpp's
	// lines only errors, its warnings being the provider's own at load.
	slog.SetLogLoggerLevel(slog.LevelError)
	initEngine()
	eng, err := newLlamaEngine("/proc/self/fd/3", nBatch, maxSeqs, func(float32) {})
	if err != nil {
		return fail(err.Error())
	}
	os.NewFile(3, "model").Close() // mapped now
	out.Write(le.AppendUint32(nil, uint32(eng.dims())))
	out.Flush()
	in := bufio.NewReader(os.Stdin)
	for {
		var n uint32
		if err := binary.Read(in, le, &n); err != nil {
			return 0 // the provider closed stdin, or is gone
		}
		if n > uint32(maxSeqs) {
			return fail(fmt.Sprintf("a batch of %d sequences, over %d", n, maxSeqs))
		}
		seqs := make([][]int, n)
		for i := range seqs {
			var l uint32
			if err := binary.Read(in, le, &l); err != nil || l > uint32(nBatch) {
				return 1
			}
			raw := make([]int32, l)
			if err := binary.Read(in, le, raw); err != nil {
				return 1
			}
			seqs[i] = make([]int, l)
			for j, t := range raw {
				seqs[i][j] = int(t)
			}
		}
		vecs, err := eng.embed(context.Background(), 0, seqs)
		if err != nil {
			msg := err.Error()
			out.Write(le.AppendUint32(le.AppendUint32(nil, 1), uint32(len(msg))))
			out.WriteString(msg)
		} else {
			buf := le.AppendUint32(nil, 0)
			for _, v := range vecs {
				buf = le.AppendUint32(buf, uint32(len(v)))
				for _, x := range v {
					buf = le.AppendUint32(buf, math.Float32bits(x))
				}
			}
			out.Write(buf)
		}
		if out.Flush() != nil {
			return 0
		}
	}
}
