package cpu

import (
	"strings"
	"testing"
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
	if m := Mismatch(); m != "" {
		t.Fatalf("built for another CPU: %s (built with %v)", m, builtFeatures())
	}
	t.Logf("compiled for: %v", builtFeatures())
}

// TestAMXKernels: a binary built for AMX, on a CPU and kernel with AMX
// (this one when make built it with -march=native on such a machine),
// uses its AMX kernels; one built without them never does.
func TestAMXKernels(t *testing.T) {
	withAMX := amxBuilt()
	if !withAMX && AMXKernels() {
		t.Fatal("AMXKernels is true in a binary built without AMX")
	}
	if withAMX && cpuFeatures()["amx_int8"] && !AMXKernels() {
		t.Fatal("built for AMX on a CPU with AMX, but AMXKernels is false: Linux refused the tiles (arch_prctl)")
	}
	t.Logf("built with AMX: %v, AMXKernels: %v", withAMX, AMXKernels())
}
