// Package amx compiles llama.cpp's AMX kernels (ggml-cpu/amx of the
// ollama module) into the binary when it is built for a CPU with AMX
// (-march=native on Sapphire Rapids and later: __AMX_INT8__ and
// __AVX512VNNI__). The Go binding leaves that folder out (it has no Go
// file), and ggml-cpu.cpp, compiled for such a CPU, calls into it: without
// this package the link fails. Built for other CPUs it compiles to
// nothing.
//
// The sources are the module's own, included by path: the Makefile passes
// its ggml folders in CGO_CPPFLAGS (`go list` of a package finds them).
// With them, llama.cpp keeps the weight matrices of the types AMX takes
// (Q4_0, Q4_1, Q8_0, the K-quants) in AMX's layout and multiplies them
// with its int8 tiles; see gguf.Q8_0 for the Q5_0 ones.
package amx

// #cgo CXXFLAGS: -std=c++17
// #cgo CPPFLAGS: -DNDEBUG -DGGML_USE_LLAMAFILE
// #cgo linux CPPFLAGS: -D_GNU_SOURCE
import "C"
