//go:build !(linux && amd64)

package cpu

// Other architectures build llama.cpp for their baseline (see the
// Makefile), which every CPU of the architecture runs; amd64 outside Linux
// is not checked (its CPUID reading is written for Linux's feature names).
func builtFeatures() []string      { return nil }
func cpuFeatures() map[string]bool { return nil }
func amxPermitted() bool           { return false }
