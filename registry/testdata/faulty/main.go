// Command faulty is a test plugin that misbehaves on request: a text of
// "crash" kills the process, "hang" never answers, "nan" returns NaN,
// "wrongdims" returns vectors longer than Info says. Otherwise it embeds
// like a tiny deterministic provider of option "dimensions" (default 8).
package main

import (
	"context"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/sdk"
)

type faulty struct{ dims int }

func (f *faulty) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "faulty", Version: "0", ModelID: "faulty-" + strconv.Itoa(f.dims), Dimensions: f.dims}, nil
}

func (f *faulty) Status(context.Context) (sdk.Status, error) {
	return sdk.Status{State: sdk.StateReady, Progress: 1}, nil
}

func (f *faulty) Configure(_ context.Context, o map[string]string) error {
	hclog.Default().Warn("configured", "options", len(o))
	f.dims = 8
	if d, ok := o["dimensions"]; ok {
		n, err := strconv.Atoi(d)
		if err != nil {
			return sdk.BadRequest("dimensions %q is not a number", d)
		}
		f.dims = n
	}
	return nil
}

func (f *faulty) Embed(ctx context.Context, texts []string, _ sdk.Kind) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, f.dims)
		for j := range v {
			v[j] = float32(len(t)%7+j) / 10
		}
		switch t {
		case "crash":
			os.Exit(3)
		case "hang":
			time.Sleep(time.Hour)
		case "nan":
			v[0] = float32(math.NaN())
		case "wrongdims":
			v = append(v, 1)
		}
		out[i] = v
	}
	if len(texts) > 0 && texts[0] == "wrongdims" {
		for i := range out {
			if len(out[i]) == f.dims {
				out[i] = append(out[i], 1)
			}
		}
	}
	return out, nil
}

func main() { sdk.Serve(&faulty{dims: 8}) }
