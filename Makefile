# memhost. Targets: build (bin/memhost and every plugin of the repo beside
# it), demo (build, then the main job on a fresh home), test (vet, gofmt,
# every test with -race on a year's last minutes, the docs' walkthroughs
# replayed, llama.cpp linked at every CPU level, the suite on two DST
# changes: test-dates, cpu-levels,
# readme-tour, readme-federation, readme-guide), fuzz (every fuzz target for FUZZTIME each), bench
# (figures for docs/benchmarks.md), crash (CRASH_KILLS SIGKILLs, then the
# checks after each), proto (regenerate sdk/proto with pinned tools).
GO   ?= go
export GO # the go command of scripts/test-dates.sh too
TAGS := sqlite_fts5

# Compiler warnings from vendored C and C++ (llama.cpp's ggml, SQLite) are
# not ours to fix and would bury the build's output: hidden unless
# `make CWARN= ...` asks for them. Go's build cache is keyed on these flags,
# so the same flags are used everywhere and each cgo package compiles once
# per machine.
CWARN ?= -w

# sqlite-vec's SIMD distance code, on x86-64 CPUs with AVX: 2.5x faster
# vector search. Without it (plain go build, other CPUs) results are the same.
# SQLITE_MAX_MMAP_SIZE lets SQLite map an index past 2 GB (index.mmapSize):
# at a million chunks the vectors lie past that, and a search read them a
# system call a page. Without it SQLite maps 2 GB, with the same results.
MMAP := -DSQLITE_MAX_MMAP_SIZE=68719476736
ifeq ($(shell uname -m),x86_64)
ifneq ($(shell grep -qw avx /proc/cpuinfo 2>/dev/null && echo yes),)
export CGO_CFLAGS ?= -O2 -g -mavx -DSQLITE_VEC_ENABLE_AVX $(MMAP) $(CWARN)
endif
endif
export CGO_CFLAGS ?= -O2 -g $(MMAP) $(CWARN)

# Pinned code generators for `make proto`; protoc itself is Debian's
# protobuf-compiler (3.21.12).
PROTOC_GEN_GO      := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
TOOLS := $(CURDIR)/bin/tools

.PHONY: build demo test test-dates fuzz crash bench proto fmt clean screenshots readme-federation readme-tour readme-guide simulate simulate-year

# llama.cpp's CPU kernels are compiled for one CPU level, chosen here:
# ggml's cgo flags give none, i.e. SSE2 only, 9x slower on these machines,
# and the Go binding has no runtime dispatch between levels. LOCAL_CPU is
# the -march: native (the default) builds for the building machine, and
# that binary runs on CPUs with the same instruction sets; copied to one
# that lacks some, the plugin reports which (plugins/embeddings-local/cpu/cpu.go)
# and search stays keyword-only. LOCAL_CPU=x86-64-v3 (AVX2, FMA: x86-64
# CPUs since 2015) builds one to copy.
#
# AMX (Sapphire Rapids and later): with __AMX_INT8__ defined, ggml-cpu.cpp
# calls llama.cpp's AMX kernels, whose folder (ggml-cpu/amx/) the Go
# binding does not compile; the plugin's amx package includes them, given
# the module's ggml folders in CGO_CPPFLAGS (LOCAL_INC). With them, and
# the model's Q5_0 matrices rewritten as Q8_0 (exact), embedding takes 1.7x
# the BF16 kernel's tokens a CPU-second there (docs/benchmarks.md).
#
# LOCAL_FPMATH lets the compiler reorder float sums into SIMD sums. ggml's
# f32 dot product (ggml_vec_dot_f32, the attention's) runs 64 floats a
# step with AVX-512 and adds what is left one float at a time, in order:
# MiniLM's heads are 32 wide, so every dot of its attention was the
# scalar remainder, 28% of the embedding time. Reordered: 16%, and 1,000
# WordNet pages embed in 38.7-40.1 s instead of 46.1-46.6 (docs/
# benchmarks.md). Infinities and NaNs keep their meaning (no
# -ffinite-math-only): the attention masks are -INFINITY.
LOCAL_CPU ?= native
LOCAL_FPMATH := -fassociative-math -fno-signed-zeros -fno-trapping-math
ifeq ($(shell uname -m),x86_64)
LOCAL_CFLAGS ?= -O3 -march=$(LOCAL_CPU) $(LOCAL_FPMATH)
else
LOCAL_CFLAGS ?= -O2 -g $(LOCAL_FPMATH)
endif
# ggml's sources in the module cache: `go list` of a package downloads its
# module when missing (`go list -m` would not).
LOCAL_GGML = $(or $(shell cd plugins/embeddings-local && $(GO) list -f '{{.Dir}}' github.com/ollama/ollama/ml/backend/ggml/ggml/src),$(error cannot find llama.cpp's ggml sources: go list github.com/ollama/ollama/ml/backend/ggml/ggml/src failed in plugins/embeddings-local))
LOCAL_INC = -I$(LOCAL_GGML)/ggml-cpu -I$(LOCAL_GGML) -I$(LOCAL_GGML)/../include
LOCAL = cd plugins/embeddings-local && CGO_CPPFLAGS="$(LOCAL_INC)" CGO_CFLAGS="$(LOCAL_CFLAGS) $(CWARN)" CGO_CXXFLAGS="$(LOCAL_CFLAGS) $(CWARN)"

# cpu-levels: llama.cpp's CPU code (ggml) compiles and links at every level
# that takes a different path through it: AMX CPUs (as -march=native sees
# them on Sapphire Rapids), AVX-512, AVX2 only, the x86-64 baseline, and
# arm64 (cross-compiled with Debian's g++-aarch64-linux-gnu, installed when
# missing). A link probe, not the plugin: llama.cpp's own code is the same
# at every level, and this takes ~30 s a level cold instead of ~2.5 min.
CPU_LEVELS := sapphirerapids skylake-avx512 haswell x86-64
cpu-levels:
	@for m in $(CPU_LEVELS); do \
		f="-O2 -march=$$m $(CWARN)"; echo "linking ggml for -march=$$m"; \
		(cd plugins/embeddings-local && CGO_CPPFLAGS="$(LOCAL_INC)" CGO_CFLAGS="$$f" CGO_CXXFLAGS="$$f" $(GO) build -o /dev/null ./testdata/linkprobe) || exit 1; \
	done
	@command -v aarch64-linux-gnu-g++ >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends g++-aarch64-linux-gnu; }
	@echo "linking ggml for arm64"
	cd plugins/embeddings-local && GOARCH=arm64 CGO_ENABLED=1 CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ \
		CGO_CFLAGS="-O2 $(CWARN)" CGO_CXXFLAGS="-O2 $(CWARN)" $(GO) build -o /dev/null ./testdata/linkprobe

.PHONY: build-core build-local need-git cpu-levels
# build: memhost and every plugin of the repo; build-core: all but the
# llama.cpp plugin, which is what takes long the first time.
build: build-core build-local need-git

build-core:
	@echo "building bin/memhost, bin/memhost-core and the hello and ollama plugins (SQLite is cgo: about 2 min the first time on 2 cores, seconds after)"
	$(GO) build -tags $(TAGS) -o bin/memhost-core ./cmd/memhost-core
	CGO_ENABLED=0 $(GO) build -o bin/memhost ./cmd/memhost  # static: no dynamic loader, ~4 ms less per call
	$(GO) build -o bin/memhost-embeddings-hello ./examples/embeddings-hello
	$(GO) build -o bin/memhost-embeddings-ollama ./plugins/embeddings-ollama
	$(GO) build -o bin/memhost-generator-ollama ./plugins/generator-ollama
	$(GO) build -o bin/memhost-generator-openai ./plugins/generator-openai

build-local:
	@echo "building bin/memhost-embeddings-local (llama.cpp is C++: about 2.5 min the first time on 2 cores, seconds after)"
	$(LOCAL) $(GO) build -o ../../bin/memhost-embeddings-local .

# Git federation (memhost git init, sync --remote) runs the git binary;
# Debian's git is installed when it is missing.
need-git:
	@command -v git >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git; }

# The demo needs no model, so not the llama.cpp plugin either: it runs on
# keyword search, then on the hello plugin.
demo: build-core
	./scripts/demo.sh

# The git federation walkthroughs of docs/guide/federation.md replayed as
# written, on temporary homes with two servers (~15 s); exits 2 without
# running when 127.0.0.1:4321 is taken, since the walkthrough's first server
# listens there.
readme-federation: build-core need-git
	./scripts/readme-federation.sh

# The commands of every other docs/guide page replayed as written, a page on
# a fresh home with keyword search only (~30 s); exits 2 like the above.
readme-guide: build-core need-git
	./scripts/readme-guide.sh

# The README's tour and its server example replayed as written, for a new
# user on an offline machine with the model file at hand (~5 s): needs the
# llama.cpp plugin and the MiniLM of ../shared/models (TOUR_MODEL=PATH for
# another copy); exits 2 without running when that file is missing or
# 127.0.0.1:4321 is taken, since the example's server listens there.
TOUR_MODEL ?= $(CURDIR)/../shared/models/all-MiniLM-L6-v2-Q4_K_M.gguf
readme-tour: build-core build-local
	./scripts/readme-tour.sh $(TOUR_MODEL)

# The MCP server (stdio and streamable HTTP) checked by an independent
# client, the MCP Inspector's CLI from npm, installed into bin/npm; skips
# with a message when npm or its registry cannot be reached. Not part of
# `make test`: it installs from the network.
mcp-inspector:
	$(GO) build -tags $(TAGS) -o bin/memhost-core ./cmd/memhost-core
	CGO_ENABLED=0 $(GO) build -o bin/memhost ./cmd/memhost
	./scripts/mcp-inspector.sh bin

# The local provider is a module of its own (llama.cpp, cgo): its tests run
# from its folder, with the shared MiniLM model when ../shared/models has it.
test: build-core build-local need-git cpu-levels
	./scripts/chromium.sh
	$(GO) vet -tags $(TAGS) ./...
	$(LOCAL) $(GO) vet ./...
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	@# Every test with -race, on the last minutes of a year in UTC: the
	@# suite's run on that day (scripts/test-dates.sh). The one test that
	@# skips itself under -race (a CPU-time ratio) runs on its own.
	./scripts/test-dates.sh --race --days=year
	$(GO) test -tags $(TAGS) -count=1 -run '^TestRenderLinear$$' ./server/dashboard/pagehtml/
	@# The local provider twice: with llama.cpp as build-local compiled it
	@# (the model's vectors), and under -race, where engine_race.go stands in
	@# for llama.cpp so that it is not compiled a second time (engine.go).
	$(LOCAL) $(GO) test ./...
	$(LOCAL) $(GO) test -race ./...
	$(MAKE) --no-print-directory mcp-inspector
	@# The docs' walkthroughs as written (skipped, saying why, when
	@# 127.0.0.1:4321 is taken), then the suite on the two DST changes.
	./scripts/readme-federation.sh || [ $$? -eq 2 ]
	./scripts/readme-guide.sh || [ $$? -eq 2 ]
	./scripts/readme-tour.sh $(TOUR_MODEL) || [ $$? -eq 2 ]
	$(MAKE) --no-print-directory simulate
	./scripts/test-dates.sh --days=dst

# The suite (without -race) with the calendar clock moved across a month's
# and a year's end and two DST changes (scripts/test-dates.sh); make test
# runs the first of these days with -race instead.
test-dates:
	./scripts/test-dates.sh

# Fuzz targets, as package:target; go test runs one -fuzz target of a
# package at a time. Their seed corpora run in `make test` as it is.
FUZZ_TARGETS := \
	host/chunk:FuzzSplit host/chunk:FuzzSplitOptions host/chunk:FuzzEstimateTokens \
	host/markdown:FuzzHeadingText \
	host/notebook:FuzzEdit host/notebook:FuzzFrontmatter host/notebook:FuzzClean \
	host/sessions:FuzzReadLines host/sessions:FuzzClaudeTurns host/sessions:FuzzImport \
	host/config:FuzzParse host/facts:FuzzParse
FUZZTIME ?= 60s
FUZZPARALLEL ?= $(shell nproc 2>/dev/null || echo 1)
# Minimizing each new interesting input may take up to 60 s by default,
# most of a short run; a crasher is still written, less minimized.
FUZZMINIMIZETIME ?= 5s

# Runs every target, then fails naming those that failed; a failing input
# is written to the package's testdata/fuzz/<target>/.
fuzz:
	@failed=""; for pt in $(FUZZ_TARGETS); do \
		pkg=$${pt%%:*}; target=$${pt#*:}; \
		echo "== $$pkg $$target"; \
		$(GO) test -tags $(TAGS) -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) \
			-fuzzminimizetime $(FUZZMINIMIZETIME) -parallel $(FUZZPARALLEL) ./$$pkg || failed="$$failed $$pt"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz failed:$$failed"; exit 1; fi

# The crash harness (internal/crashtest) kills memhost with SIGKILL at
# random points of ingest, append, remember, write, daily-log, sync,
# rebuild, embed and serve (its writers run every kind of short write, and
# the launcher re-runs the one the kill interrupted), and checks the home
# after each kill; TestServerDiesAfterWrite kills the server right after
# each kind of write, before its answer, and checks the re-run wrote
# nothing more. `make test` runs both, the first with 20 kills. It logs every kill, then a summary: kills
# per operation, those that landed mid-operation, failures. A failure
# names its seed and round; CRASH_SEED=N reproduces the run.
CRASH_KILLS ?= 200
CRASH_SEED  ?= 13
crash:
	MEMHOST_CRASH_KILLS=$(CRASH_KILLS) MEMHOST_CRASH_SEED=$(CRASH_SEED) \
		$(GO) test -tags $(TAGS) -run '^(TestCrash|TestServerDiesAfterWrite)$$' -count 1 -v -timeout 60m ./internal/crashtest/

# Benchmarks generate notebooks of 1k and 10k pages (about 100k chunks)
# and embed them through the hello plugin; expect several minutes on 2 cores.
# The English notebook is made of WordNet's glosses (Debian's wordnet-base).
bench:
	test -f /usr/share/wordnet/data.noun || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base; }
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchtime 1x -timeout 60m ./host/ ./index/ ./cmd/memhost-core/
	$(GO) test -run '^$$' -bench . -benchtime 3s ./examples/embeddings-hello/
	$(LOCAL) $(GO) test -run '^$$' -bench . -benchtime 5x -timeout 30m .

proto:
	command -v protoc >/dev/null || { apt-get update -qq && apt-get install -y -qq protobuf-compiler; }
	GOBIN=$(TOOLS) $(GO) install $(PROTOC_GEN_GO)
	GOBIN=$(TOOLS) $(GO) install $(PROTOC_GEN_GO_GRPC)
	PATH=$(TOOLS):$$PATH protoc --proto_path=sdk/proto \
		--go_out=sdk/proto --go_opt=paths=source_relative \
		--go-grpc_out=sdk/proto --go-grpc_opt=paths=source_relative \
		sdk/proto/embedder.proto sdk/proto/generator.proto

fmt:
	gofmt -w .

# A simulated month of an agent's life (cmd/memhost-sim: hooks, daily
# logs, facts, a person's edits, a second machine over git, the server
# killed, the disk full once), audited: fails when anything acknowledged
# is lost, doubled or torn, or the machines disagree. About a minute with
# the hello plugin; the report is $(SIM_OUT)/report.md. make test runs it.
SIM_OUT ?= $(CURDIR)/bin/sim
simulate: build-core need-git
	@rm -rf $(SIM_OUT)
	$(GO) run ./cmd/memhost-sim -days 31 -bin bin -bench ../shared/bench -out $(SIM_OUT)

# A simulated year with the shipped MiniLM model, as a benchmark (62 min on
# 2 cores, most of it the prompt hook's wait for new vectors; see "A
# simulated year" in docs/benchmarks.md): its report and charts are copied
# to docs/sim/, which docs/benchmarks.md shows.
simulate-year: build-core build-local need-git
	@rm -rf $(SIM_OUT)-year
	$(GO) run ./cmd/memhost-sim -days 365 -bin bin -bench ../shared/bench -model $(TOUR_MODEL) -out $(SIM_OUT)-year
	mkdir -p docs/sim && cp $(SIM_OUT)-year/report.md $(SIM_OUT)-year/*.svg docs/sim/

clean:
	rm -rf bin

# The dashboard's screenshots in docs/screenshots (docs/guide/dashboard.md):
# each screen at desktop and phone width, taken by its browser tests.
screenshots:
	./scripts/chromium.sh
	mkdir -p docs/screenshots
	$(GO) test -tags $(TAGS) -count=1 -run 'TestBrowser' ./server/dashboard/ -dashboard.screenshots=$(CURDIR)/docs/screenshots
