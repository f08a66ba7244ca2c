// Package cpu tells whether the C code of this binary runs on this CPU.
//
// A binary built with -march=native (make build-local) runs the CPU
// kernels of the machine that built it. Copied to a CPU without one of
// those instruction sets it would die of SIGILL inside llama.cpp, which
// the host could only report as a crashed plugin; instead the provider
// compares the instruction sets its C code was compiled for with the
// CPU's before llama.cpp's backend initialises or loads a model, and
// reports the difference as its status. (C++ static initialisers run
// before main and cannot be guarded this way.) This package's C code is
// compiled with the CGO_CFLAGS of llama.cpp's, as every cgo package of
// the binary is.
package cpu

import (
	"fmt"
	"slices"
	"strings"
)

// Mismatch returns why this binary cannot run llama.cpp on this CPU,
// or "" when it can.
func Mismatch() string {
	return missingFeatures(builtFeatures(), cpuFeatures())
}

// missingFeatures names the features of built that cpu lacks.
func missingFeatures(built []string, cpu map[string]bool) string {
	var missing []string
	for _, f := range built {
		if !cpu[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("this memhost-embeddings-local was compiled for a CPU with %s, which this CPU lacks; "+
		"rebuild it on this machine (make build-local), or build a portable one (make build-local LOCAL_CPU=x86-64-v3)",
		strings.Join(missing, ", "))
}

// BF16Kernels reports whether llama.cpp's matrix kernels in this binary
// were compiled with AVX512_BF16, so that a model repacked as BF16
// (package gguf) multiplies faster than as it was quantised.
func BF16Kernels() bool { return slices.Contains(builtFeatures(), "avx512_bf16") }

// AMXKernels reports whether llama.cpp's AMX kernels are in this binary
// (built for a CPU with AMX_INT8 and AVX512_VNNI, package amx) and Linux
// lets this process use them, so that a model's Q5_0 matrices rewritten as
// Q8_0 (package gguf) multiply on AMX. Where it refuses, Q8_0 would run on
// the integer kernels, slower than BF16 (docs/benchmarks.md).
func AMXKernels() bool { return amxBuilt() && amxPermitted() }

// amxBuilt reports whether this binary's C code was compiled for AMX, as
// package amx's guard asks (AMX_INT8 and AVX512_VNNI).
func amxBuilt() bool {
	built := builtFeatures()
	return slices.Contains(built, "amx_int8") && slices.Contains(built, "avx512_vnni")
}
