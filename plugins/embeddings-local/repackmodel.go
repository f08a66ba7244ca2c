package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memhost/memhost/internal/fsx"

	"github.com/memhost/memhost/plugins/embeddings-local/cpu"
	"github.com/memhost/memhost/plugins/embeddings-local/gguf"
)

// repackVersions are the derived files' versions, in their kinds, by
// target: a change to repack.go's output bumps one, so that no file of an
// older layout is loaded.
var repackVersions = map[gguf.Target]string{gguf.BF16: "bf16v1", gguf.Q8_0: "q8v1"}

// repackTarget is what the model is rewritten as for this binary's
// kernels: Q8_0 where llama.cpp's AMX kernels are in it (1.7x the BF16
// kernel's tokens a CPU-second on a Xeon with both), BF16 where its
// kernels have AVX512_BF16; ok false: loaded as it is.
func repackTarget() (target gguf.Target, ok bool) {
	switch {
	case cpu.AMXKernels():
		return gguf.Q8_0, true
	case cpu.BF16Kernels():
		return gguf.BF16, true
	}
	return 0, false
}

// repackedModel returns the path of the model at src repacked as target
// (repack.go), made once and kept in the models folder by the model's
// digest and the target's version (modelstore's DerivedPath): later loads,
// and the worker processes, map it like any model file, at no cost. A
// model with nothing to repack gives src itself.
func (p *Provider) repackedModel(src, digest string, target gguf.Target) (string, error) {
	path := p.store.DerivedPath(src, digest, repackVersions[target])
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return path, nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	out.Grow(2 * len(data))
	n, err := gguf.Repack(data, &out, target)
	if err != nil {
		return "", fmt.Errorf("repacking %s: %w", src, err)
	}
	if n == 0 {
		return src, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	d, err := fsx.OpenDir(filepath.Dir(path))
	if err != nil {
		return "", err
	}
	defer d.Close()
	if err := d.WriteFile(filepath.Base(path), out.Bytes(), 0o644); err != nil {
		return "", err
	}
	return path, nil
}
