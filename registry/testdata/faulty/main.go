// Command faulty is a test plugin that misbehaves on request: a text of
// "crash" kills the process ("crash-once" the first time in a home), "hang" never answers, "slow" answers after a
// second, "nan" returns NaN, "wrongdims" returns vectors longer than Info
// says. Otherwise it embeds like a tiny deterministic provider of option
// "dimensions" (default 8).
//
// Its environment adds three more: MEMHOST_FAULTY_START_DELAY (a Go
// duration) delays the handshake, as a plugin loading a model before it
// serves would; MEMHOST_FAULTY_PID_FILE names a file it writes its process
// id to as it starts, so tests can find a process whose start has not
// finished; MEMHOST_FAULTY_SLOW_FILE names a file it creates when a "slow"
// text arrives, so tests know the call is in flight.
package main

import (
	"context"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/sdk"
)

// faulty must be safe for concurrent use (sdk.Embedder): gRPC serves
// Configure and Embed on separate goroutines.
type faulty struct {
	mu   sync.Mutex
	dims int
}

func (f *faulty) dimensions() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dims
}

func (f *faulty) Info(context.Context) (sdk.Info, error) {
	d := f.dimensions()
	return sdk.Info{Name: "faulty", Version: "0", ModelID: "faulty-" + strconv.Itoa(d), Dimensions: d}, nil
}

func (f *faulty) Status(context.Context) (sdk.Status, error) {
	return sdk.Status{State: sdk.StateReady, Progress: 1}, nil
}

func (f *faulty) Configure(_ context.Context, o map[string]string) error {
	hclog.Default().Warn("configured", "options", len(o))
	dims := 8
	if d, ok := o["dimensions"]; ok {
		n, err := strconv.Atoi(d)
		if err != nil {
			return sdk.BadRequest("dimensions %q is not a number", d)
		}
		dims = n
	}
	f.mu.Lock()
	f.dims = dims
	f.mu.Unlock()
	return nil
}

func (f *faulty) Embed(ctx context.Context, texts []string, _ sdk.Kind) ([][]float32, error) {
	dims := f.dimensions()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32(len(t)%7+j) / 10
		}
		switch t {
		case "crash":
			os.Exit(3)
		case "crash-once": // the first time in a home only
			marker := os.Getenv("MEMHOST_HOME") + "/faulty-crashed"
			if _, err := os.Stat(marker); err != nil {
				os.WriteFile(marker, nil, 0o644)
				os.Exit(3)
			}
		case "hang":
			time.Sleep(time.Hour)
		case "slow":
			if path := os.Getenv("MEMHOST_FAULTY_SLOW_FILE"); path != "" {
				os.WriteFile(path, nil, 0o644) // the call has arrived
			}
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case "nan":
			v[0] = float32(math.NaN())
		case "wrongdims":
			v = append(v, 1)
		}
		out[i] = v
	}
	if len(texts) > 0 && texts[0] == "wrongdims" {
		for i := range out {
			if len(out[i]) == dims {
				out[i] = append(out[i], 1)
			}
		}
	}
	return out, nil
}

func main() {
	if path := os.Getenv("MEMHOST_FAULTY_PID_FILE"); path != "" {
		// Renamed into place so a reader never sees half a number.
		if os.WriteFile(path+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o644) == nil {
			os.Rename(path+".tmp", path)
		}
	}
	if d, err := time.ParseDuration(os.Getenv("MEMHOST_FAULTY_START_DELAY")); err == nil {
		time.Sleep(d)
	}
	sdk.Serve(&faulty{dims: 8})
}
