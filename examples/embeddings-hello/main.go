// Command memhost-embeddings-hello is a complete, deterministic embeddings
// provider to copy from. It embeds by feature hashing (words and character
// trigrams into 256 buckets, then unit length): no model, so texts that
// share words are close, not texts that share meaning. Build it as
// memhost-embeddings-hello, put it in $MEMHOST_HOME/plugins/, and run
// `memhost plugins use hello`.
package main

import (
	"context"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/memhost/memhost/sdk"
)

// Embedder embeds by feature hashing. Option "dimensions" (default 256).
// The sdk calls it from many goroutines at once (Configure while Embed
// runs): dims is atomic, and each call reads it once.
type Embedder struct{ dims atomic.Int64 }

var _ sdk.Embedder = (*Embedder)(nil)

// New returns the provider with its defaults.
func New() *Embedder {
	e := &Embedder{}
	e.dims.Store(256)
	return e
}

func (e *Embedder) Info(ctx context.Context) (sdk.Info, error) {
	dims := int(e.dims.Load())
	return sdk.Info{Name: "hello", Version: "1.0.0", ModelID: "hello-hash-" + strconv.Itoa(dims),
		Dimensions: dims, MaxInputTokens: 8192}, nil
}

func (e *Embedder) Status(ctx context.Context) (sdk.Status, error) {
	return sdk.Status{State: sdk.StateReady, Progress: 1}, nil
}

func (e *Embedder) Configure(ctx context.Context, options map[string]string) error {
	for k, v := range options {
		n, err := strconv.Atoi(v)
		if k != "dimensions" || err != nil || n < 8 || n > 4096 {
			return sdk.BadRequest("option %s=%q: hello takes only dimensions, 8..4096", k, v)
		}
		e.dims.Store(int64(n))
	}
	return nil
}

func (e *Embedder) Embed(ctx context.Context, texts []string, kind sdk.Kind) ([][]float32, error) {
	dims := int(e.dims.Load())
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = embed(t, dims)
	}
	return out, nil
}

func embed(text string, dims int) []float32 {
	v := make([]float32, dims)
	add := func(feature string, w float32) {
		h := fnv.New32a()
		h.Write([]byte(feature))
		s := h.Sum32()
		sign := float32(1)
		if s&1 == 1 {
			sign = -1
		}
		v[(s>>1)%uint32(dims)] += sign * w
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	for _, w := range words {
		add("w:"+w, 1)
		r := []rune(" " + w + " ")
		for j := 0; j+3 <= len(r); j++ {
			add("g:"+string(r[j:j+3]), 0.3)
		}
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		v[0] = 1 // an empty text still gets a unit vector
		return v
	}
	for j := range v {
		v[j] = float32(float64(v[j]) / math.Sqrt(norm))
	}
	return v
}

func main() { sdk.Serve(New()) }
