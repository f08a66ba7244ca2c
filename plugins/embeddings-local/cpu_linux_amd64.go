package main

/*
// The instruction sets the C and C++ code of this binary (llama.cpp's
// ggml among it) were compiled for, by the names Linux gives them in
// /proc/cpuinfo: the same CGO_CFLAGS build every cgo package of it. The
// list holds every x86-64 extension GCC and Clang can be told to use
// (-march) that a CPU may lack.
static const char *built_features(void) {
	return ""
#ifdef __SSE3__
	" pni"
#endif
#ifdef __SSSE3__
	" ssse3"
#endif
#ifdef __SSE4_1__
	" sse4_1"
#endif
#ifdef __SSE4_2__
	" sse4_2"
#endif
#ifdef __POPCNT__
	" popcnt"
#endif
#ifdef __AVX__
	" avx"
#endif
#ifdef __AVX2__
	" avx2"
#endif
#ifdef __FMA__
	" fma"
#endif
#ifdef __F16C__
	" f16c"
#endif
#ifdef __BMI__
	" bmi1"
#endif
#ifdef __BMI2__
	" bmi2"
#endif
#ifdef __LZCNT__
	" abm"
#endif
#ifdef __MOVBE__
	" movbe"
#endif
#ifdef __GFNI__
	" gfni"
#endif
#ifdef __VAES__
	" vaes"
#endif
#ifdef __VPCLMULQDQ__
	" vpclmulqdq"
#endif
#ifdef __AVX512F__
	" avx512f"
#endif
#ifdef __AVX512CD__
	" avx512cd"
#endif
#ifdef __AVX512BW__
	" avx512bw"
#endif
#ifdef __AVX512DQ__
	" avx512dq"
#endif
#ifdef __AVX512VL__
	" avx512vl"
#endif
#ifdef __AVX512IFMA__
	" avx512ifma"
#endif
#ifdef __AVX512VBMI__
	" avx512vbmi"
#endif
#ifdef __AVX512VBMI2__
	" avx512_vbmi2"
#endif
#ifdef __AVX512VNNI__
	" avx512_vnni"
#endif
#ifdef __AVX512BITALG__
	" avx512_bitalg"
#endif
#ifdef __AVX512VPOPCNTDQ__
	" avx512_vpopcntdq"
#endif
#ifdef __AVX512BF16__
	" avx512_bf16"
#endif
#ifdef __AVX512FP16__
	" avx512_fp16"
#endif
#ifdef __AVXVNNI__
	" avx_vnni"
#endif
#ifdef __AMX_TILE__
	" amx_tile"
#endif
#ifdef __AMX_INT8__
	" amx_int8"
#endif
#ifdef __AMX_BF16__
	" amx_bf16"
#endif
	;
}
*/
import "C"

import (
	"bufio"
	"os"
	"strings"
)

func builtFeatures() []string {
	return strings.Fields(C.GoString(C.built_features()))
}

// cpuFeatures reads the CPU's flags as the kernel reports them (one
// "flags" line per CPU; the first is every CPU's on the machines memhost
// runs on). Unreadable, it returns nil, and every built feature counts
// as missing: better keyword search than SIGILL.
func cpuFeatures() map[string]bool {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "flags" {
			have := map[string]bool{}
			for _, fl := range strings.Fields(v) {
				have[fl] = true
			}
			return have
		}
	}
	return nil
}
