package main

import (
	"context"
	"math"
	"testing"

	"github.com/memhost/memhost/sdk"
)

// TestRepackSameVectors: the model repacked for this binary's kernels
// (Q8_0 for AMX, else BF16: repackTarget) gives the vectors of the model
// as it was quantised, within rounding (cosine > 0.999 for each text), so
// vectors stored before the repacking stay comparable; and the repacking
// is what a default load does.
func TestRepackSameVectors(t *testing.T) {
	if raceEngine {
		t.Skip("a -race build has no llama.cpp (engine.go)")
	}
	if _, ok := repackTarget(); !ok {
		t.Skip("this build's kernels have neither AMX nor AVX512_BF16: models load as they are")
	}
	texts := append(chunks(6), "What is Sarah's phone number?", "Sarah Chen - Phone: 555-1234", "Bananas are yellow.")
	ctx := context.Background()
	packed, err := loaded(t, map[string]string{"bf16": "false"}).Embed(ctx, texts, sdk.KindDocument)
	if err != nil {
		t.Fatal(err)
	}
	repacked, err := loaded(t, nil).Embed(ctx, texts, sdk.KindDocument)
	if err != nil {
		t.Fatal(err)
	}
	worst := 1.0
	for i := range texts {
		c := cos(packed[i], repacked[i])
		worst = math.Min(worst, c)
		if maxDiff(packed[i], repacked[i]) == 0 {
			t.Errorf("text %d: the same vector: the default load did not repack", i)
		}
	}
	if worst < 0.999 {
		t.Errorf("worst cosine between the packed and repacked model's vectors = %.5f, want > 0.999", worst)
	}
	t.Logf("worst cosine %.6f", worst)
}

// maxDiff is the largest difference between two vectors' components.
func maxDiff(a, b []float32) float64 {
	var d float64
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}
