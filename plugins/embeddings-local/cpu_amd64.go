package main

/*
// The instruction sets the C and C++ code of this binary (llama.cpp's
// ggml among it) were compiled for: the same CGO_CFLAGS build them all.
static const char *built_features(void) {
	return ""
#ifdef __SSE3__
	" sse3"
#endif
#ifdef __SSSE3__
	" ssse3"
#endif
#ifdef __SSE4_1__
	" sse4.1"
#endif
#ifdef __SSE4_2__
	" sse4.2"
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
#ifdef __BMI2__
	" bmi2"
#endif
#ifdef __AVX512F__
	" avx512f"
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
#ifdef __AVX512VNNI__
	" avx512vnni"
#endif
#ifdef __AVX512BF16__
	" avx512bf16"
#endif
#ifdef __AVX512VBMI__
	" avx512vbmi"
#endif
#ifdef __AVXVNNI__
	" avxvnni"
#endif
#ifdef __AMX_TILE__
	" amx-tile"
#endif
#ifdef __AMX_INT8__
	" amx-int8"
#endif
	;
}
*/
import "C"

import (
	"strings"

	"golang.org/x/sys/cpu"
)

func builtFeatures() []string {
	return strings.Fields(C.GoString(C.built_features()))
}

func cpuFeatures() map[string]bool {
	x := cpu.X86
	return map[string]bool{
		"sse3": x.HasSSE3, "ssse3": x.HasSSSE3, "sse4.1": x.HasSSE41, "sse4.2": x.HasSSE42,
		"popcnt": x.HasPOPCNT, "avx": x.HasAVX, "avx2": x.HasAVX2, "fma": x.HasFMA, "bmi2": x.HasBMI2,
		"avx512f": x.HasAVX512F, "avx512bw": x.HasAVX512BW, "avx512dq": x.HasAVX512DQ,
		"avx512vl": x.HasAVX512VL, "avx512vnni": x.HasAVX512VNNI, "avx512bf16": x.HasAVX512BF16,
		"avx512vbmi": x.HasAVX512VBMI, "avxvnni": x.HasAVXVNNI,
		"amx-tile": x.HasAMXTile, "amx-int8": x.HasAMXInt8,
	}
}
