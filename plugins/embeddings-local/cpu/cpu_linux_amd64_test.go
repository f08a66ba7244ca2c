package cpu

import (
	"os"
	"strings"
	"testing"
)

// TestCPUIDAgreesWithKernel: every instruction set the kernel lists in
// /proc/cpuinfo, among those a binary can be built for, is one CPUID
// reports too, so the bit table of cpu_features names each set right.
// (The other way round need not hold: Linux 6.18 under Firecracker lists
// no "abm" where CPUID has it, which turned off the local provider built
// on that very machine.)
func TestCPUIDAgreesWithKernel(t *testing.T) {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	var kernel []string
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			kernel = strings.Fields(v)
			break
		}
	}
	known := map[string]bool{}
	for _, f := range strings.Fields("pni ssse3 sse4_1 sse4_2 popcnt avx avx2 fma f16c bmi1 bmi2 abm movbe gfni vaes vpclmulqdq " +
		"avx512f avx512cd avx512bw avx512dq avx512vl avx512ifma avx512vbmi avx512_vbmi2 avx512_vnni avx512_bitalg " +
		"avx512_vpopcntdq avx512_bf16 avx512_fp16 avx_vnni amx_tile amx_int8 amx_bf16") {
		known[f] = true
	}
	have := cpuFeatures()
	checked := 0
	for _, f := range kernel {
		if !known[f] {
			continue
		}
		checked++
		if !have[f] {
			t.Errorf("the kernel lists %s, CPUID (cpuFeatures) does not", f)
		}
	}
	if len(kernel) > 0 && checked == 0 {
		t.Errorf("none of the kernel's flags is one a build can use: %v", kernel)
	}
	t.Logf("kernel lists %d of the known sets; CPUID: %v", checked, have)
}
