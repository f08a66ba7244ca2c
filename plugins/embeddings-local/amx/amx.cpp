// llama.cpp's ggml-cpu/amx/amx.cpp, for a CPU with AMX only (amx.go).
#if defined(__AMX_INT8__) && defined(__AVX512VNNI__)
#if !__has_include("amx/amx.cpp")
#error "building for a CPU with AMX needs ggml's sources on the include path: build with make (it sets CGO_CPPFLAGS), or add -mno-amx-int8 to CGO_CFLAGS and CGO_CXXFLAGS"
#endif
#include "amx/amx.cpp"
#endif
