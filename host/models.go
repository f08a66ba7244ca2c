package host

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/memhost/memhost/modelstore"
)

// ModelsResponse lists the models folder.
type ModelsResponse struct {
	Dir    string             `json:"dir"`
	Models []modelstore.Model `json:"models"`
}

func (h *Host) modelStore() *modelstore.Store {
	return &modelstore.Store{Dir: h.path(h.cfg.Memory.Embedding.ModelsDir)}
}

// Models lists the downloaded models and interrupted downloads.
func (h *Host) Models(ctx context.Context) (ModelsResponse, error) {
	st := h.modelStore()
	list, err := st.List()
	return ModelsResponse{Dir: st.Dir, Models: list}, err
}

// PullResponse describes a model in place.
type PullResponse struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	Already bool   `json:"already"` // it was there before
}

// PullModel downloads a model: the default model by name (or ""), or any
// GGUF by URL, verified against sha when given (the default model's digest
// is known). An interrupted pull resumes when run again.
func (h *Host) PullModel(ctx context.Context, model, sha string, progress modelstore.Progress) (PullResponse, error) {
	st := h.modelStore()
	ref, err := st.Resolve(model, "", sha)
	if errors.Is(err, modelstore.ErrNotFound) {
		return PullResponse{}, fmt.Errorf("%w: %s is not a known model name: give its URL (memhost models pull https://.../NAME.gguf)", ErrBadInput, model)
	}
	if err != nil {
		return PullResponse{}, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	resp := PullResponse{Name: ref.Name, Path: ref.Path, Already: ref.Present()}
	if err := st.Pull(ctx, ref, progress); err != nil {
		return resp, err
	}
	fi, err := os.Stat(ref.Path)
	if err != nil {
		return resp, err
	}
	resp.Size = fi.Size()
	resp.SHA256, err = modelstore.FileSHA256(ref.Path)
	return resp, err
}

// RemoveModel deletes a model (and a partial download of it).
func (h *Host) RemoveModel(ctx context.Context, name string) error {
	err := h.modelStore().Remove(name)
	if errors.Is(err, modelstore.ErrNotFound) {
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	return err
}
