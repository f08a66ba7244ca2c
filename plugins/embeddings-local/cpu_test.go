package main

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/sdk"
)

func TestMissingFeatures(t *testing.T) {
	for _, tc := range []struct {
		built []string
		cpu   map[string]bool
		want  string // a part of the message; "" for none
	}{
		{nil, nil, ""},
		{[]string{"avx", "avx2"}, map[string]bool{"avx": true, "avx2": true, "avx512f": true}, ""},
		{[]string{"avx2", "avx512f", "avx512bw"}, map[string]bool{"avx2": true}, "with avx512f, avx512bw, which this CPU lacks"},
		{[]string{"amx-tile"}, map[string]bool{}, "with amx-tile,"},
	} {
		got := missingFeatures(tc.built, tc.cpu)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("missingFeatures(%v, %v) = %q, want %q", tc.built, tc.cpu, got, tc.want)
		}
	}
}

// TestBuiltForThisCPU: the binary under test was compiled for this CPU
// (make's LOCAL_CFLAGS), so nothing is missing; a CPU check that fired
// here would turn the provider off on the machine that built it.
func TestBuiltForThisCPU(t *testing.T) {
	if m := cpuMismatch(); m != "" {
		t.Fatalf("built for another CPU: %s (built with %v)", m, builtFeatures())
	}
	t.Logf("compiled for: %v", builtFeatures())
}

// TestUnusableCPU: on a CPU that lacks what the binary was compiled for,
// the provider loads nothing and says why in its status, configured or not.
func TestUnusableCPU(t *testing.T) {
	why := missingFeatures([]string{"avx512f"}, map[string]bool{})
	p := newProvider(t.TempDir(), hclog.NewNullLogger(), why)
	ctx := context.Background()
	if err := p.Configure(ctx, map[string]string{"threads": "2"}); err != nil {
		t.Fatalf("configure: %v", err)
	}
	if err := p.Configure(ctx, map[string]string{"nonsense": "1"}); err == nil {
		t.Errorf("a bad option was accepted")
	}
	st, err := p.Status(ctx)
	if err != nil || st.State != sdk.StateError || st.Message != why {
		t.Fatalf("status = %+v, %v; want error %q", st, err, why)
	}
	if _, err := p.Embed(ctx, []string{"hello"}, sdk.KindQuery); err == nil {
		t.Errorf("embed answered on an unusable CPU")
	}
}
