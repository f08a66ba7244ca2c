package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memhost/memhost/internal/fsx"

	"github.com/memhost/memhost/plugins/embeddings-local/gguf"
)

// bf16Version is in the derived file's kind: a change to repack.go's
// output bumps it, so that no file of an older layout is loaded.
const bf16Version = "bf16v1"

// bf16Model returns the path of the model at src repacked as BF16
// (repack.go), made once and kept in the models folder by the model's
// digest (modelstore's DerivedPath): later loads, and the worker
// processes, map it like any model file, at no cost. A model with nothing
// to repack gives src itself.
func (p *Provider) bf16Model(src, digest string) (string, error) {
	path := p.store.DerivedPath(src, digest, bf16Version)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return path, nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	out.Grow(2 * len(data))
	n, err := gguf.Repack(data, &out)
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
