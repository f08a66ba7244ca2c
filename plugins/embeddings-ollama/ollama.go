package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memhost/memhost/plugins/internal/ollamahost"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/sdk"
)

// version is this plugin's version.
const version = "1.0.0"

// Options, as set with `memhost plugins use ollama --set key=value`.
type options struct {
	url            string        // default $OLLAMA_HOST, else http://127.0.0.1:11434
	model          string        // default embeddinggemma
	batchSize      int           // texts per /api/embed request; default 32
	timeout        time.Duration // per request; default 60s
	keepAlive      string        // Ollama's keep_alive; default: Ollama's own (5m)
	queryPrefix    string        // default by model family (see prefixes)
	documentPrefix string
}

func defaultOptions(getenv func(string) string) options {
	return options{url: hostURL(getenv("OLLAMA_HOST")), model: "embeddinggemma", batchSize: 32, timeout: 60 * time.Second}
}

// hostURL turns OLLAMA_HOST into a base URL.
var hostURL = ollamahost.URL

// prefixes are the instructions known embedding families expect before
// queries and documents; a model not listed gets none.
var prefixes = []struct{ family, query, document string }{
	{"embeddinggemma", "task: search result | query: ", "title: none | text: "},
	{"nomic-embed", "search_query: ", "search_document: "},
	{"e5", "query: ", "passage: "},
	{"mxbai-embed-large", "Represent this sentence for searching relevant passages: ", ""},
	{"snowflake-arctic-embed", "Represent this sentence for searching relevant passages: ", ""},
}

func familyPrefixes(model string) (string, string) {
	m := strings.ToLower(model)
	for _, p := range prefixes {
		if strings.Contains(m, p.family) {
			return p.query, p.document
		}
	}
	return "", ""
}

// Provider embeds through a running Ollama server. It is safe for
// concurrent use.
type Provider struct {
	getenv func(string) string
	log    hclog.Logger

	mu      sync.Mutex
	opt     options
	prefixQ string
	prefixD string
	client  *http.Client
	// Learned from the server once it answered.
	dims   int
	digest string
}

var _ sdk.Embedder = (*Provider)(nil)

// New returns a provider with the default options.
func New(getenv func(string) string, log hclog.Logger) *Provider {
	p := &Provider{getenv: getenv, log: log}
	p.apply(defaultOptions(getenv))
	return p
}

func (p *Provider) apply(o options) {
	q, d := familyPrefixes(o.model)
	if o.queryPrefix != "" {
		q = o.queryPrefix
	}
	if o.documentPrefix != "" {
		d = o.documentPrefix
	}
	p.opt, p.prefixQ, p.prefixD = o, q, d
	p.client = &http.Client{Timeout: o.timeout}
	p.dims, p.digest = 0, ""
}

// Configure sets the options; unknown keys and bad values are refused.
func (p *Provider) Configure(ctx context.Context, o map[string]string) error {
	opt := defaultOptions(p.getenv)
	for k, v := range o {
		switch k {
		case "url":
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return sdk.BadRequest("option url=%q: want http://host:port", v)
			}
			opt.url = strings.TrimRight(v, "/")
		case "model":
			if strings.TrimSpace(v) == "" {
				return sdk.BadRequest("option model is empty")
			}
			opt.model = v
		case "batchSize":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 2048 {
				return sdk.BadRequest("option batchSize=%q: want 1..2048", v)
			}
			opt.batchSize = n
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil {
				if secs, err2 := strconv.Atoi(v); err2 == nil {
					d, err = time.Duration(secs)*time.Second, nil
				}
			}
			if err != nil || d <= 0 {
				return sdk.BadRequest("option timeout=%q: want a duration such as 30s", v)
			}
			opt.timeout = d
		case "keepAlive":
			opt.keepAlive = v
		case "queryPrefix":
			opt.queryPrefix = v
		case "documentPrefix":
			opt.documentPrefix = v
		default:
			return sdk.BadRequest("unknown option %q (ollama takes url, model, batchSize, timeout, keepAlive, queryPrefix, documentPrefix)", k)
		}
	}
	p.mu.Lock()
	p.apply(opt)
	p.mu.Unlock()
	return nil
}

func (p *Provider) snapshot() (options, *http.Client) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.opt, p.client
}

// fullName adds Ollama's default tag.
func fullName(model string) string {
	if strings.Contains(model, ":") {
		return model
	}
	return model + ":latest"
}

// Info describes the model; dimensions and digest are known once Status
// has reached the server.
func (p *Provider) Info(ctx context.Context) (sdk.Info, error) {
	if _, err := p.check(ctx); err != nil && !errors.Is(err, sdk.ErrNotReady) {
		return sdk.Info{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	id := "ollama/" + fullName(p.opt.model)
	if p.digest != "" {
		id += "@" + p.digest[:min(12, len(p.digest))]
	}
	return sdk.Info{Name: "ollama", Version: version, ModelID: id, Dimensions: p.dims, MaxInputTokens: 2048}, nil
}

// Status is ready when the server answers, has the model, and the model
// embeds; otherwise error, with what to do about it.
func (p *Provider) Status(ctx context.Context) (sdk.Status, error) {
	if _, err := p.check(ctx); err != nil {
		return sdk.Status{State: sdk.StateError, Message: sdk.StatusMessage(err)}, nil
	}
	return sdk.Status{State: sdk.StateReady, Progress: 1}, nil
}

// check asks the server for the model and learns its digest and
// dimensions. Errors wrap sdk.ErrNotReady with an actionable message.
func (p *Provider) check(ctx context.Context) (int, error) {
	opt, client := p.snapshot()
	var tags struct {
		Models []struct {
			Name   string `json:"name"`
			Model  string `json:"model"`
			Digest string `json:"digest"`
		} `json:"models"`
	}
	cctx, cancel := context.WithTimeout(ctx, min(opt.timeout, 5*time.Second))
	defer cancel()
	if err := p.do(cctx, client, http.MethodGet, opt.url+"/api/tags", nil, &tags); err != nil {
		return 0, err
	}
	want, digest, found := fullName(opt.model), "", false
	for _, m := range tags.Models {
		if fullName(m.Name) == want || fullName(m.Model) == want {
			digest, found = m.Digest, true
			break
		}
	}
	if !found {
		return 0, sdk.NotReady("model %s is not pulled: run `ollama pull %s`", opt.model, opt.model)
	}
	var show struct {
		Capabilities []string `json:"capabilities"`
	}
	if err := p.do(cctx, client, http.MethodPost, opt.url+"/api/show", map[string]any{"model": opt.model}, &show); err != nil {
		return 0, err
	}
	if show.Capabilities != nil && !slices.Contains(show.Capabilities, "embedding") {
		return 0, sdk.NotReady("%s is not an embedding model (its capabilities: %s); choose one such as embeddinggemma or nomic-embed-text", opt.model, strings.Join(show.Capabilities, ", "))
	}
	p.mu.Lock()
	known := p.dims > 0 && p.digest == digest
	dims := p.dims
	p.mu.Unlock()
	if known {
		return dims, nil
	}
	// A probe embedding gives the true output size.
	vecs, err := p.post(cctx, opt, client, []string{"memhost"})
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	if p.opt.model == opt.model {
		p.dims, p.digest = len(vecs[0]), digest
	}
	p.mu.Unlock()
	return len(vecs[0]), nil
}

// Embed embeds texts in batches of batchSize, retrying connection errors
// and 5xx answers with backoff.
func (p *Provider) Embed(ctx context.Context, texts []string, kind sdk.Kind) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var dims int
	err := retry(ctx, p.log, func() (err error) {
		dims, err = p.check(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	opt, client := p.snapshot()
	prefix := p.prefixD
	if kind == sdk.KindQuery {
		prefix = p.prefixQ
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += opt.batchSize {
		batch := texts[start:min(start+opt.batchSize, len(texts))]
		in := make([]string, len(batch))
		for i, t := range batch {
			in[i] = prefix + t
		}
		vecs, err := p.post(ctx, opt, client, in)
		if err != nil {
			return nil, err
		}
		for i, v := range vecs {
			if len(v) != dims {
				return nil, fmt.Errorf("Ollama returned a vector of %d dimensions for text %d; %s has %d", len(v), start+i, opt.model, dims)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// post calls /api/embed once (with retries) and checks the answer's shape.
func (p *Provider) post(ctx context.Context, opt options, client *http.Client, inputs []string) ([][]float32, error) {
	req := map[string]any{"model": opt.model, "input": inputs, "truncate": true}
	if opt.keepAlive != "" {
		req["keep_alive"] = opt.keepAlive
	}
	var resp struct {
		Embeddings [][]float32 `json:"embeddings"`
	}
	if err := retry(ctx, p.log, func() error { return p.do(ctx, client, http.MethodPost, opt.url+"/api/embed", req, &resp) }); err != nil {
		return nil, err
	}
	if len(resp.Embeddings) != len(inputs) {
		return nil, fmt.Errorf("Ollama returned %d embeddings for %d texts", len(resp.Embeddings), len(inputs))
	}
	for i, v := range resp.Embeddings {
		if len(v) == 0 || len(v) != len(resp.Embeddings[0]) {
			return nil, fmt.Errorf("Ollama returned embeddings of different lengths (%d and %d, text %d)", len(resp.Embeddings[0]), len(v), i)
		}
	}
	return resp.Embeddings, nil
}

// retry runs fn up to 4 times while it fails with a transientError,
// waiting 200 ms, 400 ms, 800 ms between tries, within ctx.
func retry(ctx context.Context, log hclog.Logger, fn func() error) error {
	backoff := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := fn()
		var te *transientError
		if err == nil || !errors.As(err, &te) || attempt == 4 || ctx.Err() != nil {
			return err
		}
		log.Info("Ollama request failed; retrying", "attempt", attempt, "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// transientError is worth retrying: no connection, or a 5xx.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// do sends a JSON request and decodes the JSON answer, turning Ollama's
// {"error": "..."} answers and connection failures into clear errors.
func (p *Provider) do(ctx context.Context, client *http.Client, method, u string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		base := strings.TrimSuffix(strings.TrimSuffix(u, "/api/tags"), "/api/embed")
		base = strings.TrimSuffix(base, "/api/show")
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return &transientError{sdk.NotReady("Ollama at %s did not answer in time: %v", base, err)}
		}
		return &transientError{sdk.NotReady("Ollama is not reachable at %s: start it with `ollama serve`", base)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return &transientError{fmt.Errorf("reading Ollama's answer: %w", err)}
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal(data, &e)
		msg := e.Error
		if msg == "" {
			msg = strings.TrimSpace(string(data))
		}
		switch {
		case resp.StatusCode >= 500:
			return &transientError{fmt.Errorf("Ollama answered %d: %s", resp.StatusCode, msg)}
		case resp.StatusCode == http.StatusNotFound || strings.Contains(msg, "try pulling it first"):
			model := modelOf(body)
			return sdk.NotReady("model %s is not pulled: run `ollama pull %s`", model, model)
		case strings.Contains(msg, "does not support embeddings"):
			return sdk.NotReady("%s is not an embedding model: %s", modelOf(body), msg)
		}
		return fmt.Errorf("Ollama answered %d: %s", resp.StatusCode, msg)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("Ollama returned malformed JSON (%v): %.80q", err, data)
	}
	return nil
}

func modelOf(body any) string {
	if m, ok := body.(map[string]any); ok {
		if s, ok := m["model"].(string); ok {
			return s
		}
	}
	return "the model"
}

func main() {
	log := sdk.Logger()
	sdk.Serve(New(os.Getenv, log))
}
