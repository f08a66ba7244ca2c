package providers

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/embedq"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/requests"
	"github.com/memhost/memhost/modelstore"
)

// ModelStore is the models folder of the configuration in force.
func (s *ProviderService) ModelStore() *modelstore.Store {
	return &modelstore.Store{Dir: s.k.Path(s.k.Config().Memory.Embedding.ModelsDir)}
}

// ModelMissing tells the embedding queue from the models folder whether
// the local provider's model is missing (embedq.Options.ModelMissing):
// with the words the plugin gives while its last download failed lately
// (it retries only after the failure's backoff), or with none when a
// download is due. Options it cannot resolve are the plugin's to refuse.
func (s *ProviderService) ModelMissing(name string, options map[string]string) (string, bool) {
	if name != embedq.DefaultPlugin {
		return "", false
	}
	st := s.ModelStore()
	ref, err := st.Resolve(options["model"], options["modelURL"], options["sha256"])
	if err != nil || ref.Present() {
		return "", false
	}
	// The plugin's clock: the record holds wall-clock times.
	if f, ok := st.LastFailure(ref.Name); ok && time.Now().Before(f.Next()) {
		f.Name = ref.Name
		return f.Reason(), true
	}
	return "", true
}

// Models lists the downloaded models and interrupted downloads.
func (s *ProviderService) Models(ctx context.Context, _ memhost.ModelsRequest) (memhost.ModelsResponse, error) {
	st := s.ModelStore()
	list, err := st.List()
	return memhost.ModelsResponse{Dir: st.Dir, Models: list}, err
}

// PullModel downloads a model: the default model by name (or ""), or any
// GGUF by URL, verified against sha when given (the default model's digest
// is known). An interrupted pull resumes when run again. A local file (a
// path, or a file:// URL) is copied into the models folder and checked
// the same way.
func (s *ProviderService) PullModel(ctx context.Context, req memhost.PullModelRequest) (memhost.PullResponse, error) {
	st := s.ModelStore()
	if src, ok := modelstore.LocalSource(req.Model); ok {
		// A file the user has (offline, or downloaded by hand): copied in.
		_, err := os.Stat(filepath.Join(st.Dir, filepath.Base(src)))
		already := err == nil
		ref, err := st.Install(ctx, src, req.SHA256, req.Progress)
		switch {
		case errors.Is(err, modelstore.ErrNotFound):
			return memhost.PullResponse{}, fault.Errorf(fault.NotFound, "model", "%v", err)
		case errors.Is(err, modelstore.ErrChecksum), errors.Is(err, modelstore.ErrBadName):
			return memhost.PullResponse{}, fault.BadInputf("model", "%v", err)
		case err != nil:
			return memhost.PullResponse{}, err
		}
		resp := memhost.PullResponse{Name: ref.Name, Path: ref.Path, From: src, Already: already}
		fi, err := os.Stat(ref.Path)
		if err != nil {
			return resp, err
		}
		resp.Size = fi.Size()
		resp.SHA256, err = modelstore.FileSHA256(ref.Path)
		return resp, err
	}
	ref, err := st.Resolve(req.Model, "", req.SHA256)
	if errors.Is(err, modelstore.ErrNotFound) {
		return memhost.PullResponse{}, fault.Errorf(fault.NotFound, "model", "%s is not a known model name: give its URL (https://.../NAME.gguf)", req.Model)
	}
	if err != nil {
		return memhost.PullResponse{}, fault.BadInputf("model", "%v", err)
	}
	progress := req.Progress
	resp := memhost.PullResponse{Name: ref.Name, Path: ref.Path, Already: ref.Present()}
	if err := st.Pull(ctx, ref, progress); err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ctx.Err() == nil { // the network or the model's server
			return resp, fault.Errorf(fault.Unavailable, "model", "%w", err)
		}
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
func (s *ProviderService) RemoveModel(ctx context.Context, req memhost.RemoveModelRequest) (memhost.RemoveModelResponse, error) {
	resp := memhost.RemoveModelResponse{Removed: req.Name}
	// Under the notebook's lock, which every write takes, so that a run
	// still going in a server the client gave up on and its retry here
	// do not both look before either removes.
	unlock, err := s.k.Notebook().Lock(ctx)
	if err != nil {
		return memhost.RemoveModelResponse{}, err
	}
	defer unlock()
	var missing error
	if !s.hasModel(req.Name) {
		// Nothing to remove: the store says why (no such model, a bad name).
		missing = modelError(s.ModelStore().Remove(req.Name))
	}
	var landed *requests.Record
	if _, err := s.k.Once().Guard(once.Request{Op: api.OpRemoveModel.Name, ID: req.RequestID, Resp: &resp}, req.Name, "", &landed)(missing); err != nil || landed != nil {
		if err != nil {
			return memhost.RemoveModelResponse{}, err
		}
		return resp, nil
	}
	if err := modelError(s.ModelStore().Remove(req.Name)); err != nil {
		return memhost.RemoveModelResponse{}, err
	}
	return resp, nil
}

// modelError gives the model store's errors their kinds.
func modelError(err error) error {
	switch {
	case errors.Is(err, modelstore.ErrNotFound):
		return fault.Errorf(fault.NotFound, "name", "%v", err)
	case errors.Is(err, modelstore.ErrBadName):
		return fault.BadInputf("name", "%v", err)
	}
	return err
}

// hasModel reports whether the model store holds a model (or a partial
// download) of that name, with or without its .gguf extension.
func (s *ProviderService) hasModel(name string) bool {
	models, err := s.ModelStore().List()
	if err != nil {
		return true // unknown: not gone
	}
	for _, m := range models {
		if strings.EqualFold(strings.TrimSuffix(m.Name, ".gguf"), strings.TrimSuffix(name, ".gguf")) {
			return true
		}
	}
	return false
}

// FailedDownloads reads the models folder's failure records.
func (s *ProviderService) FailedDownloads() []memhost.FailedDownload {
	var out []memhost.FailedDownload
	for _, f := range s.ModelStore().Failures() {
		out = append(out, memhost.FailedDownload{Name: f.Name, At: f.At, Err: f.Err, Offline: f.Offline, Count: f.Count, NextTry: f.Next().UTC().Format(time.RFC3339)})
	}
	return out
}
