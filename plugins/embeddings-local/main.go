// Command memhost-embeddings-local is memhost's default embeddings
// provider: GGUF sentence-embedding models run by llama.cpp in this
// process, downloaded into $MEMHOST_HOME/models when missing. It is its own
// Go module so that memhost itself never links llama.cpp.
//
// llama.cpp logs plain lines on stderr, which memhost shows at debug level.
package main

import (
	"os"
	"path/filepath"

	"github.com/memhost/memhost/sdk"
)

// modelsDir is where models live: $MEMHOST_MODELS_DIR (set by memhost),
// else $MEMHOST_HOME/models, else ~/.memhost/models.
func modelsDir() string {
	if d := os.Getenv("MEMHOST_MODELS_DIR"); d != "" {
		return d
	}
	if h := os.Getenv("MEMHOST_HOME"); h != "" {
		return filepath.Join(h, "models")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".memhost", "models")
}

func main() {
	if spec := os.Getenv(workerEnv); spec != "" {
		os.Exit(runWorker(spec)) // one of a provider's worker processes (worker.go)
	}
	log := sdk.Logger()
	sdk.Serve(New(modelsDir(), log))
}
