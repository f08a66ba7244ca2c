package cpu

/*
// The instruction sets the C and C++ code of this binary (llama.cpp's
// ggml among it) were compiled for, by the names Linux gives them in
// /proc/cpuinfo (and cpu_features below): the same CGO_CFLAGS build every cgo package of it. The
// list holds every x86-64 extension GCC and Clang can be told to use
// (-march) that a CPU may lack; cpu_features below names the same.
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
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

// amx_permitted asks Linux for this process's use of AMX's tile data, as
// llama.cpp's AMX code does before its first use (arch_prctl
// ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA): 1 when granted. A kernel
// or sandbox that refuses it leaves llama.cpp on its other kernels.
static int amx_permitted(void) {
	return syscall(SYS_arch_prctl, 0x1023, 18) == 0;
}

// The CPU's instruction sets, by the same names, as the CPUID
// instruction reports them and the OS has enabled their registers
// (XGETBV): what gcc -march=native reads, so a binary built here always
// passes. /proc/cpuinfo is not this: kernels leave out flags (Linux 6.18
// under Firecracker lists no "abm" on CPUs whose CPUID has LZCNT).
static const char *cpu_features(void) {
	static char out[512];
	unsigned a, b, c, d;
	unsigned max = __get_cpuid_max(0, 0);
	out[0] = 0;
#define HAVE(cond, name) do { if (cond) { __builtin_strcat(out, " " name); } } while (0)
	if (max < 1) {
		return out;
	}
	__cpuid(1, a, b, c, d);
	unsigned c1 = c;
	unsigned long long xcr0 = 0;
	if (c1 & (1u << 27)) { // OSXSAVE: XGETBV is allowed
		unsigned lo, hi;
		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		xcr0 = ((unsigned long long)hi << 32) | lo;
	}
	int ymm = (xcr0 & 0x6) == 0x6;           // SSE and AVX state
	int zmm = ymm && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
	int amx = (xcr0 & 0x60000) == 0x60000;   // XTILECFG, XTILEDATA
	HAVE(c1 & (1u << 0), "pni");
	HAVE(c1 & (1u << 9), "ssse3");
	HAVE(c1 & (1u << 19), "sse4_1");
	HAVE(c1 & (1u << 20), "sse4_2");
	HAVE(c1 & (1u << 22), "movbe");
	HAVE(c1 & (1u << 23), "popcnt");
	HAVE(ymm && (c1 & (1u << 28)), "avx");
	HAVE(ymm && (c1 & (1u << 12)), "fma");
	HAVE(ymm && (c1 & (1u << 29)), "f16c");
	if (max >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		unsigned b7 = b, c7 = c, d7 = d, sub = a;
		HAVE(b7 & (1u << 3), "bmi1");
		HAVE(b7 & (1u << 8), "bmi2");
		HAVE(ymm && (b7 & (1u << 5)), "avx2");
		HAVE(zmm && (b7 & (1u << 16)), "avx512f");
		HAVE(zmm && (b7 & (1u << 17)), "avx512dq");
		HAVE(zmm && (b7 & (1u << 21)), "avx512ifma");
		HAVE(zmm && (b7 & (1u << 28)), "avx512cd");
		HAVE(zmm && (b7 & (1u << 30)), "avx512bw");
		HAVE(zmm && (b7 & (1u << 31)), "avx512vl");
		HAVE(zmm && (c7 & (1u << 1)), "avx512vbmi");
		HAVE(zmm && (c7 & (1u << 6)), "avx512_vbmi2");
		HAVE(c7 & (1u << 8), "gfni");
		HAVE(ymm && (c7 & (1u << 9)), "vaes");
		HAVE(ymm && (c7 & (1u << 10)), "vpclmulqdq");
		HAVE(zmm && (c7 & (1u << 11)), "avx512_vnni");
		HAVE(zmm && (c7 & (1u << 12)), "avx512_bitalg");
		HAVE(zmm && (c7 & (1u << 14)), "avx512_vpopcntdq");
		HAVE(zmm && (d7 & (1u << 23)), "avx512_fp16");
		HAVE(amx && (d7 & (1u << 22)), "amx_bf16");
		HAVE(amx && (d7 & (1u << 24)), "amx_tile");
		HAVE(amx && (d7 & (1u << 25)), "amx_int8");
		if (sub >= 1) {
			__cpuid_count(7, 1, a, b, c, d);
			HAVE(ymm && (a & (1u << 4)), "avx_vnni");
			HAVE(zmm && (a & (1u << 5)), "avx512_bf16");
		}
	}
	if (__get_cpuid_max(0x80000000, 0) >= 0x80000001) {
		__cpuid(0x80000001, a, b, c, d);
		HAVE(c & (1u << 5), "abm");
	}
#undef HAVE
	return out;
}
*/
import "C"

import (
	"strings"
)

func builtFeatures() []string {
	return strings.Fields(C.GoString(C.built_features()))
}

// cpuFeatures are the instruction sets this CPU runs, as CPUID tells
// them (cpu_features above).
func cpuFeatures() map[string]bool {
	have := map[string]bool{}
	for _, f := range strings.Fields(C.GoString(C.cpu_features())) {
		have[f] = true
	}
	return have
}

// amxPermitted reports whether this process may use AMX's tiles.
func amxPermitted() bool { return C.amx_permitted() == 1 }
