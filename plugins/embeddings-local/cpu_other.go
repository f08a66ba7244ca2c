//go:build !amd64

package main

// Other architectures build llama.cpp for their baseline (see the
// Makefile), which every CPU of the architecture runs.
func builtFeatures() []string      { return nil }
func cpuFeatures() map[string]bool { return nil }
