// Package sdktest is the conformance suite for memhost plugins: Run for
// embeddings providers, RunGenerator for generators. Run it from a
// provider's own tests, on the provider in-process or through its plugin
// binary:
//
//	func TestConformance(t *testing.T) {
//		sdktest.Run(t, New(), sdktest.Options{})
//	}
package sdktest

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost/sdk"
)

// Options tune the suite.
type Options struct {
	// Configure is passed to Configure before the checks; nil skips the
	// call.
	Configure map[string]string
	// ReadyTimeout bounds the wait for StateReady. Default 2 minutes.
	ReadyTimeout time.Duration
	// Tolerance is the largest difference allowed between a vector
	// embedded alone and in a batch. Default 1e-4.
	Tolerance float64
}

// Run checks that e behaves as memhost expects: dimensions match Info,
// output is deterministic and finite, a batch equals one-by-one, empty and
// over-long inputs are handled, cancellation is honoured, and Status moves
// sanely to ready.
func Run(t *testing.T, e sdk.Embedder, opt Options) {
	t.Helper()
	if opt.ReadyTimeout == 0 {
		opt.ReadyTimeout = 2 * time.Minute
	}
	if opt.Tolerance == 0 {
		opt.Tolerance = 1e-4
	}
	ctx := context.Background()
	if opt.Configure != nil {
		if err := e.Configure(ctx, opt.Configure); err != nil {
			t.Fatalf("Configure(%v): %v", opt.Configure, err)
		}
	}
	t.Run("status-reaches-ready", func(t *testing.T) { waitReady(t, e, opt.ReadyTimeout) })
	info, err := e.Info(ctx)
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	t.Run("info", func(t *testing.T) {
		if info.Name == "" || info.ModelID == "" {
			t.Errorf("Info has no name or model id: %+v", info)
		}
		if info.Dimensions <= 0 {
			t.Errorf("Info.Dimensions = %d once ready", info.Dimensions)
		}
	})
	texts := []string{
		"Sarah Chen - Phone: 555-1234",
		"What is Sarah's phone number?",
		"The weekly planning meeting is on Tuesdays.",
		"会议记录保存在共享文件夹里。",
	}
	embed := func(t *testing.T, texts []string, kind sdk.Kind) [][]float32 {
		t.Helper()
		v, err := e.Embed(ctx, texts, kind)
		if err != nil {
			t.Fatalf("Embed(%d texts, %v): %v", len(texts), kind, err)
		}
		if len(v) != len(texts) {
			t.Fatalf("Embed(%d texts) returned %d vectors", len(texts), len(v))
		}
		for i, vec := range v {
			if len(vec) != info.Dimensions {
				t.Fatalf("vector %d has %d dimensions, Info says %d", i, len(vec), info.Dimensions)
			}
			for j, x := range vec {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("vector %d has %v at %d", i, x, j)
				}
			}
		}
		return v
	}
	t.Run("dimensions-and-finite", func(t *testing.T) {
		embed(t, texts, sdk.KindDocument)
		embed(t, texts[1:2], sdk.KindQuery)
	})
	t.Run("deterministic", func(t *testing.T) {
		a, b := embed(t, texts, sdk.KindDocument), embed(t, texts, sdk.KindDocument)
		for i := range a {
			if d := maxDiff(a[i], b[i]); d > 0 {
				t.Errorf("text %d: two embeddings differ by %g", i, d)
			}
		}
	})
	t.Run("batch-equals-one-by-one", func(t *testing.T) {
		batch := embed(t, texts, sdk.KindDocument)
		for i, text := range texts {
			one := embed(t, []string{text}, sdk.KindDocument)[0]
			if d := maxDiff(batch[i], one); d > opt.Tolerance {
				t.Errorf("text %d: batch and one-by-one differ by %g (> %g)", i, d, opt.Tolerance)
			}
		}
	})
	t.Run("empty-input", func(t *testing.T) {
		v, err := e.Embed(ctx, nil, sdk.KindDocument)
		if err != nil || len(v) != 0 {
			t.Errorf("Embed(no texts) = %d vectors, %v; want none, no error", len(v), err)
		}
		embed(t, []string{""}, sdk.KindDocument)
		embed(t, []string{"   "}, sdk.KindQuery)
	})
	t.Run("over-long-input", func(t *testing.T) {
		n := max(info.MaxInputTokens, 512) * 8
		embed(t, []string{strings.Repeat("memory notebook search ", n/3)}, sdk.KindDocument)
	})
	t.Run("cancellation", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		start := time.Now()
		_, err := e.Embed(cctx, texts, sdk.KindDocument)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Embed with a cancelled context: err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("cancelled Embed took %v", d)
		}
	})
	t.Run("still-ready", func(t *testing.T) {
		st, err := e.Status(ctx)
		if err != nil || st.State != sdk.StateReady {
			t.Errorf("Status after the checks = %+v, %v; want ready", st, err)
		}
	})
}

// waitReady polls Status until ready, checking every answer is sane.
func waitReady(t *testing.T, e interface {
	Status(context.Context) (sdk.Status, error)
}, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := -1.0
	var lastState sdk.State
	for {
		st, err := e.Status(context.Background())
		if err != nil {
			t.Fatalf("Status: %v", err)
		}
		switch st.State {
		case sdk.StateReady:
			return
		case sdk.StateDownloading, sdk.StateLoading:
			if st.Progress < 0 || st.Progress > 1 || math.IsNaN(st.Progress) {
				t.Fatalf("Status progress %v outside 0..1", st.Progress)
			}
			if st.State == lastState && st.Progress < last {
				t.Errorf("Status progress went back from %v to %v while %s", last, st.Progress, st.State)
			}
			last, lastState = st.Progress, st.State
		case sdk.StateError:
			t.Fatalf("provider in error: %s", st.Message)
		default:
			t.Fatalf("Status state %q is not one of ready, downloading, loading, error", st.State)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after %v: %+v", timeout, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func maxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}
