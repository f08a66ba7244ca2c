// Command linkprobe links llama.cpp's ggml (its CPU backend among it) and
// nothing else: make cpu-levels builds it for each CPU level to show that
// every level links (see the Makefile).
package main

import (
	_ "github.com/ollama/ollama/ml/backend/ggml/ggml/src"

	_ "github.com/memhost/memhost/plugins/embeddings-local/amx" // what ggml-cpu calls on AMX CPUs
)

func main() {}
