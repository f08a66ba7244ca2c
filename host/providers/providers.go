// Package providers holds the operations on the plugins and models the
// host runs: listing and choosing embeddings providers, the generator
// plugin (started, configured and bounded by its timeout), and the models
// folder (list, pull, remove).
package providers

import (
	"context"
	"path/filepath"

	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/embedq"
	"github.com/memhost/memhost/host/indexer"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/index/vectors"
	"github.com/memhost/memhost/internal/fsx"
	"github.com/memhost/memhost/registry"
)

// Kernel is what the service uses of the host.
type Kernel interface {
	Home() string
	Path(p string) string
	Config() *config.Config
	EditConfig(edit func(*config.Config))
	Vectors() *vectors.DB
	Indexer() *indexer.Indexer
	Queue() *embedq.Queue
	Notebook() *notebook.Notebook
	Once() *once.Writes
}

// ProviderService runs the plugins and models operations.
type ProviderService struct {
	k    Kernel
	reg  *registry.Registry // embeddings providers
	gens *registry.Registry // generators
}

// New returns the service over the host's two plugin registries.
func New(k Kernel, reg, gens *registry.Registry) *ProviderService {
	return &ProviderService{k: k, reg: reg, gens: gens}
}

// writeConfig runs edit on config.yaml's path under an exclusive flock of
// brain/config.lock, so two processes editing it never lose an edit.
func (s *ProviderService) writeConfig(edit func(path string) error) error {
	unlock, err := fsx.Lock(context.Background(), filepath.Join(s.k.Home(), "brain", "config.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	return edit(filepath.Join(s.k.Home(), config.FileName))
}
