package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/modelstore"
	"github.com/memhost/memhost/sdk"

	"github.com/memhost/memhost/plugins/embeddings-local/cpu"
	"github.com/memhost/memhost/plugins/embeddings-local/gguf"
)

const version = "1.0.0"

// maxTokensPerDecode: encoder models need a whole batch in one ubatch,
// whose default size in llama.cpp is 512 tokens.
const maxTokensPerDecode = 512

// maxSeqs is how many texts share one decode.
const maxSeqs = 16

// defaultPackTokens is how many tokens of several texts may share one
// decode by default: none, one text per decode. Measured on MiniLM, 2
// cores (docs/benchmarks.md): an encoder attends across the whole decode,
// so packing ~100-token chunks is slower (-5% at 128 tokens, -44% at 512),
// and it gains only ~9% on short texts while changing vectors by up to
// 6e-4 (other matmul kernels for other shapes), past the 1e-4 that lets a
// batch equal one-by-one. Option packTokens turns it on.
const defaultPackTokens = 0

// options, as set with `memhost plugins use local --set key=value`.
type options struct {
	model          string // path, name in the models folder, or URL; "" = the default model
	modelURL       string // where the default (or a named, missing) model is downloaded from
	sha256         string // expected digest of a downloaded model
	threads        int    // workers: llama.cpp contexts of one thread each (engine.go)
	bf16           bool   // repack weight matrices for this binary's kernels: Q8_0 for AMX, else BF16 for AVX512_BF16 (repackTarget)
	batchSize      int    // tokens per decode, at most 512
	contextSize    int    // tokens kept of each text; default the model's context, at most 512
	queryPrefix    *string
	documentPrefix *string
	normalize      bool
	packTokens     int // tokens of several texts per decode; 0: one text per decode
}

func defaultOptions() options {
	return options{threads: runtime.NumCPU(), bf16: true, batchSize: maxTokensPerDecode, normalize: true, packTokens: defaultPackTokens}
}

// familyPrefixes are the instructions known model families expect.
func familyPrefixes(name string) (query, document string) {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "nomic-embed"):
		return "search_query: ", "search_document: "
	case strings.Contains(n, "e5-") || strings.HasPrefix(n, "e5"):
		return "query: ", "passage: "
	case strings.Contains(n, "bge-") && strings.Contains(n, "en"):
		return "Represent this sentence for searching relevant passages: ", ""
	case strings.Contains(n, "embeddinggemma"):
		return "task: search result | query: ", "title: none | text: "
	}
	return "", ""
}

// Provider embeds with llama.cpp. Configure starts loading (downloading
// first when the model is missing) in the background; Status reports
// downloading, loading, ready or error. It is safe for concurrent use;
// embeddings are computed one call at a time, each on every worker of
// the engine (engine.go).
type Provider struct {
	store *modelstore.Store
	log   hclog.Logger

	mu       sync.Mutex
	opt      options
	gen      int // bumped by Configure; stale background work checks it
	state    sdk.State
	progress float64
	message  string
	retryAt  time.Time // a failed download is retried after this
	missing  string    // the model file a failed download left missing
	meta     gguf.Meta
	modelID  string
	prefixQ  string
	prefixD  string
	nCtx     int
	cancel   context.CancelFunc

	embedMu sync.Mutex // guards eng during use
	eng     engine

	// unusable, when set, is why llama.cpp cannot run on this CPU
	// (package cpu): the provider stays in error with it and loads nothing.
	unusable string
}

var _ sdk.Embedder = (*Provider)(nil)

var backend sync.Once

// New returns an unconfigured provider over a models folder.
func New(modelsDir string, log hclog.Logger) *Provider {
	return newProvider(modelsDir, log, cpu.Mismatch())
}

func newProvider(modelsDir string, log hclog.Logger, unusable string) *Provider {
	p := &Provider{store: &modelstore.Store{Dir: modelsDir}, log: log, state: sdk.StateLoading, message: "not configured yet", opt: defaultOptions(), unusable: unusable}
	if unusable != "" {
		// llama.cpp's backend is not even initialised: its CPU setup
		// may run instructions this CPU lacks.
		p.state, p.message = sdk.StateError, unusable
		return p
	}
	backend.Do(initEngine)
	return p
}

// Configure sets the options and (re)starts loading the model.
func (p *Provider) Configure(ctx context.Context, o map[string]string) error {
	opt := defaultOptions()
	for k, v := range o {
		var err error
		switch k {
		case "model":
			opt.model = v
		case "modelURL":
			opt.modelURL = v
		case "sha256":
			opt.sha256 = strings.ToLower(v)
			if _, herr := hex.DecodeString(v); herr != nil || len(v) != 64 {
				err = errors.New("want 64 hex digits")
			}
		case "threads":
			opt.threads, err = positive(v, 256)
		case "batchSize":
			opt.batchSize, err = positive(v, maxTokensPerDecode)
		case "contextSize":
			opt.contextSize, err = positive(v, maxTokensPerDecode)
		case "queryPrefix":
			opt.queryPrefix = &v
		case "documentPrefix":
			opt.documentPrefix = &v
		case "normalize":
			opt.normalize, err = strconv.ParseBool(v)
		case "bf16":
			opt.bf16, err = strconv.ParseBool(v)
		case "packTokens":
			opt.packTokens, err = positive(v, maxTokensPerDecode)
		default:
			return sdk.BadRequest("unknown option %q (local takes model, modelURL, sha256, threads, bf16, batchSize, contextSize, queryPrefix, documentPrefix, normalize, packTokens)", k)
		}
		if err != nil {
			return sdk.BadRequest("option %s=%q: %v", k, v, err)
		}
	}
	ref, err := p.store.Resolve(opt.model, opt.modelURL, opt.sha256)
	if err != nil {
		return sdk.BadRequest("option model=%q: %v", opt.model, err)
	}
	if p.unusable != "" {
		return nil // the options are valid; the state stays the CPU's error
	}
	meta := headerMeta(ref)
	p.mu.Lock()
	if p.cancel != nil {
		p.cancel()
	}
	p.gen++
	gen := p.gen
	p.opt = opt
	// What the last options left (an error) is not this one's state, nor
	// is the last model's description this one's.
	p.state, p.progress, p.message = sdk.StateLoading, 0, "preparing "+ref.Name
	p.meta, p.modelID, p.nCtx = meta, "", 0
	bg, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.mu.Unlock()
	p.unload()
	go p.prepare(bg, gen, ref, meta)
	return nil
}

// headerMeta reads a present model's metadata, so that Info gives its
// dimensions while it loads. A missing or unusable file gives none: the
// load (after a download) reads it again and reports what is wrong.
func headerMeta(ref modelstore.Ref) gguf.Meta {
	if !ref.Present() {
		return gguf.Meta{}
	}
	meta, err := gguf.Read(ref.Path)
	if err != nil || !meta.IsEmbedding() {
		return gguf.Meta{}
	}
	return meta
}

// notDownloaded puts the provider in error for a model whose download
// failed: a short reason for every search to show (the error itself is in
// the log, and in memhost status from the failure record), and a retry
// once the backoff has passed.
func (p *Provider) notDownloaded(gen int, ref modelstore.Ref, f modelstore.Failure) {
	p.mu.Lock()
	if gen == p.gen {
		p.retryAt, p.missing = f.Next(), ref.Path
	}
	p.mu.Unlock()
	f.Name = ref.Name
	p.setState(gen, sdk.StateError, 0, f.Reason())
}

func positive(v string, maxv int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxv {
		return 0, fmt.Errorf("want 1..%d", maxv)
	}
	return n, nil
}

// setState records the state if gen is still current.
func (p *Provider) setState(gen int, st sdk.State, progress float64, msg string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if gen != p.gen {
		return false
	}
	p.state, p.progress, p.message = st, progress, msg
	return true
}

// prepare downloads the model when missing, then loads it; meta is its
// metadata when Configure could read it.
func (p *Provider) prepare(ctx context.Context, gen int, ref modelstore.Ref, meta gguf.Meta) {
	if !ref.Present() {
		// A download that failed lately (in any process) is not tried
		// again before its backoff has passed.
		if f, ok := p.store.LastFailure(ref.Name); ok && time.Now().Before(f.Next()) && ref.URL != "" {
			p.notDownloaded(gen, ref, f)
			return
		}
		p.setState(gen, sdk.StateDownloading, 0, "downloading "+ref.Name+": connecting")
		err := p.store.Pull(ctx, ref, func(done, total int64) {
			if total > 0 {
				p.setState(gen, sdk.StateDownloading, math.Min(1, float64(done)/float64(total)), fmt.Sprintf("downloading %s: %d of %d MB", ref.Name, done>>20, total>>20))
			}
		})
		// Another memhost process is downloading it: wait for its file,
		// or take over if that process goes away.
		for errors.Is(err, modelstore.ErrBusy) && ctx.Err() == nil {
			p.setState(gen, sdk.StateDownloading, 0, "downloading "+ref.Name+" (in another memhost process)")
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
			if ref.Present() {
				err = nil
				break
			}
			err = p.store.Pull(ctx, ref, nil)
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			f, ok := p.store.LastFailure(ref.Name)
			if !ok { // not recorded (no URL, or the models folder is read-only)
				f = modelstore.Failure{Name: ref.Name, At: time.Now(), Err: err.Error(), Offline: modelstore.IsOffline(err), Count: 1}
			}
			p.log.Info("model download failed", "model", ref.Name, "err", err, "next", f.Next().Format(time.TimeOnly))
			p.notDownloaded(gen, ref, f)
			return
		}
	}
	p.setState(gen, sdk.StateLoading, 0, "loading "+ref.Name)
	if err := p.load(gen, ref, meta); err != nil {
		p.log.Error("model load failed", "model", ref.Path, "err", err)
		p.setState(gen, sdk.StateError, 0, err.Error())
	}
}

func (p *Provider) load(gen int, ref modelstore.Ref, meta gguf.Meta) error {
	if meta.Architecture == "" { // not read yet: the model was downloaded since
		var err error
		if meta, err = gguf.Read(ref.Path); err != nil {
			return err
		}
	}
	if !meta.IsEmbedding() {
		return fmt.Errorf("%s is not an embedding model (architecture %s, no pooling): choose a sentence-embedding GGUF such as %s", ref.Path, meta.Architecture, modelstore.DefaultName)
	}
	sum, err := modelstore.FileSHA256(ref.Path)
	if err != nil {
		return err
	}
	p.mu.Lock()
	opt := p.opt
	p.mu.Unlock()
	nCtx := meta.Context
	if nCtx <= 0 || nCtx > maxTokensPerDecode {
		nCtx = maxTokensPerDecode
	}
	if opt.contextSize > 0 && opt.contextSize < nCtx {
		nCtx = opt.contextSize
	}
	nBatch := max(min(opt.batchSize, maxTokensPerDecode), nCtx)
	path := ref.Path
	if target, ok := repackTarget(); opt.bf16 && ok {
		if path, err = p.repackedModel(ref.Path, sum, target); err != nil {
			p.log.Warn("model loaded as it is: repacking it failed", "model", ref.Path, "as", repackVersions[target], "err", err)
			path = ref.Path
		}
	}
	progress := func(f float32) { p.setState(gen, sdk.StateLoading, float64(f), "loading "+ref.Name) }
	eng, err := loadEngine(path, nBatch, maxSeqs, opt.threads, progress, p.log)
	if err != nil && path != ref.Path {
		p.log.Warn("model loaded as it is: its repacked copy did not load (removed; the next load makes it again)", "model", ref.Path, "copy", path, "err", err)
		os.Remove(path)
		eng, err = loadEngine(ref.Path, nBatch, maxSeqs, opt.threads, progress, p.log)
	}
	if err != nil {
		return err
	}
	q, d := familyPrefixes(ref.Name + " " + meta.Name)
	if opt.queryPrefix != nil {
		q = *opt.queryPrefix
	}
	if opt.documentPrefix != nil {
		d = *opt.documentPrefix
	}
	p.embedMu.Lock()
	p.mu.Lock()
	if gen != p.gen { // configured again meanwhile
		p.mu.Unlock()
		p.embedMu.Unlock()
		eng.free()
		return nil
	}
	p.eng = eng
	p.meta, p.nCtx, p.prefixQ, p.prefixD = meta, nCtx, q, d
	p.modelID = modelID(ref.Name, sum, q, d, opt.normalize, nCtx, meta.Context)
	p.state, p.progress, p.message = sdk.StateReady, 1, ""
	p.mu.Unlock()
	p.embedMu.Unlock()
	p.log.Info("model ready", "model", ref.Path, "dimensions", eng.dims(), "context", nCtx)
	return nil
}

// modelID names the vectors: the model file and its digest, plus a hash of
// the settings that change vectors when they differ from the defaults.
func modelID(name, sum, q, d string, normalize bool, nCtx, modelCtx int) string {
	id := strings.TrimSuffix(name, ".gguf") + "@" + sum[:12]
	dq, dd := familyPrefixes(name)
	if q != dq || d != dd || !normalize || nCtx != min(max(modelCtx, 1), maxTokensPerDecode) {
		h := sha256.Sum256([]byte(fmt.Sprintf("%q|%q|%v|%d", q, d, normalize, nCtx)))
		id += "+" + hex.EncodeToString(h[:4])
	}
	return id
}

func (p *Provider) unload() {
	p.embedMu.Lock()
	defer p.embedMu.Unlock()
	if p.eng != nil {
		p.eng.free()
	}
	p.eng = nil
}

// Info describes the model; dimensions are 0 until its file is there
// (read from the file's header while the model loads).
func (p *Provider) Info(ctx context.Context) (sdk.Info, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	info := sdk.Info{Name: "local", Version: version, ModelID: p.modelID, Dimensions: p.meta.Embedding, MaxInputTokens: p.nCtx}
	if info.ModelID == "" {
		name := p.opt.model
		if name == "" {
			name = modelstore.DefaultName
		}
		info.ModelID = strings.TrimSuffix(filepath.Base(name), ".gguf")
	}
	return info, nil
}

// Status reports readiness; a failed download is retried once its wait
// has passed.
func (p *Provider) Status(ctx context.Context) (sdk.Status, error) {
	p.mu.Lock()
	st := sdk.Status{State: p.state, Progress: p.progress, Message: p.message}
	missing := p.missing
	retry := p.state == sdk.StateError && !p.retryAt.IsZero() && time.Now().After(p.retryAt)
	p.mu.Unlock()
	// A model installed meanwhile (memhost models pull FILE) is loaded
	// now, not after the download's backoff.
	if fi, err := os.Stat(missing); st.State == sdk.StateError && missing != "" && err == nil && fi.Mode().IsRegular() {
		retry = true
	}
	if retry {
		p.mu.Lock()
		retry = p.state == sdk.StateError && !p.retryAt.IsZero() // one caller retries
		p.retryAt, p.missing = time.Time{}, ""
		p.mu.Unlock()
	}
	if retry {
		p.log.Info("retrying the model download")
		p.Configure(ctx, p.optionMap())
		p.mu.Lock()
		st = sdk.Status{State: p.state, Progress: p.progress, Message: p.message}
		p.mu.Unlock()
	}
	return st, nil
}

// optionMap is the current options as Configure takes them.
func (p *Provider) optionMap() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.opt
	m := map[string]string{"threads": strconv.Itoa(o.threads), "bf16": strconv.FormatBool(o.bf16), "batchSize": strconv.Itoa(o.batchSize), "normalize": strconv.FormatBool(o.normalize)}
	for k, v := range map[string]string{"model": o.model, "modelURL": o.modelURL, "sha256": o.sha256} {
		if v != "" {
			m[k] = v
		}
	}
	if o.contextSize > 0 {
		m["contextSize"] = strconv.Itoa(o.contextSize)
	}
	if o.packTokens > 0 {
		m["packTokens"] = strconv.Itoa(o.packTokens)
	}
	if o.queryPrefix != nil {
		m["queryPrefix"] = *o.queryPrefix
	}
	if o.documentPrefix != nil {
		m["documentPrefix"] = *o.documentPrefix
	}
	return m
}

// Embed embeds texts, several per llama.cpp decode.
func (p *Provider) Embed(ctx context.Context, texts []string, kind sdk.Kind) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.embedMu.Lock()
	defer p.embedMu.Unlock()
	p.mu.Lock()
	state, msg, nCtx, normalize, pack := p.state, p.message, p.nCtx, p.opt.normalize, p.opt.packTokens
	prefix := p.prefixD
	if kind == sdk.KindQuery {
		prefix = p.prefixQ
	}
	p.mu.Unlock()
	if state != sdk.StateReady || p.eng == nil {
		return nil, sdk.NotReady("%s", msg)
	}
	seqs := make([][]int, len(texts))
	for i, t := range texts {
		toks, err := p.eng.tokenize(prefix + t)
		if err != nil {
			return nil, fmt.Errorf("tokenizing text %d: %w", i, err)
		}
		if len(toks) == 0 {
			toks, _ = p.eng.tokenize(" ")
		}
		if len(toks) > nCtx {
			p.log.Debug("text truncated to the model's context", "text", i, "tokens", len(toks), "kept", nCtx)
			last := toks[len(toks)-1] // keep the end-of-sequence token
			toks = append(toks[:nCtx-1:nCtx-1], last)
		}
		seqs[i] = toks
	}
	// Decodes: one text each by default (several with packTokens), run
	// on the engine's workers side by side, each taking the next.
	type decode struct{ start, end int }
	var decodes []decode
	for start := 0; start < len(seqs); {
		end, tokens := start, 0
		for end < len(seqs) && end-start < maxSeqs && tokens+len(seqs[end]) <= p.eng.batchSize() &&
			(end == start || tokens+len(seqs[end]) <= pack) {
			tokens += len(seqs[end])
			end++
		}
		decodes = append(decodes, decode{start, end})
		start = end
	}
	if len(decodes) > 1 {
		p.eng.grow()
		defer p.eng.grow() // replaces the workers this call found gone
	}
	out := make([][]float32, len(texts))
	workers := make([]int, p.eng.workers())
	for w := range workers {
		workers[w] = w
	}
	// Rounds: a worker process that dies hands its decode back, and the
	// next round runs what is left on the workers left (worker 0, in this
	// process, is never gone).
	for len(decodes) > 0 {
		var next atomic.Int64
		var mu sync.Mutex
		var left []decode
		var alive []int
		errs := make([]error, min(len(workers), len(decodes)))
		var wg sync.WaitGroup
		for k := range errs {
			w := workers[k]
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= len(decodes) {
						mu.Lock()
						alive = append(alive, w)
						mu.Unlock()
						return
					}
					if err := ctx.Err(); err != nil {
						errs[k] = err
						return
					}
					d := decodes[i]
					vecs, err := p.eng.embed(ctx, w, seqs[d.start:d.end])
					if errors.Is(err, errWorkerGone) {
						p.log.Warn("an embedding worker process is gone; the others go on", "worker", w)
						mu.Lock()
						left = append(left, d)
						mu.Unlock()
						return
					}
					if err != nil {
						errs[k] = fmt.Errorf("llama.cpp decode: %w", err)
						return
					}
					for j := d.start; j < d.end; j++ {
						v := vecs[j-d.start]
						if v == nil {
							errs[k] = fmt.Errorf("llama.cpp returned no embedding for text %d (does the model pool sentence embeddings?)", j)
							return
						}
						if normalize {
							unit(v)
						}
						out[j] = v
					}
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		// Workers this round did not need stay for the next.
		for _, w := range workers[len(errs):] {
			alive = append(alive, w)
		}
		slices.Sort(alive)
		decodes, workers = left, alive
	}
	return out, nil
}

func unit(v []float32) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	s := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= s
	}
}
