# memhost. Targets: build (bin/memhost), demo (build, then the main job on a
# fresh home), test (vet, gofmt, every test with -race), bench (figures for
# docs/benchmarks.md).
GO   ?= go
TAGS := sqlite_fts5

.PHONY: build demo test bench fmt clean

build:
	$(GO) build -tags $(TAGS) -o bin/memhost ./cmd/memhost

demo: build
	./scripts/demo.sh

test:
	$(GO) vet -tags $(TAGS) ./...
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) test -race -tags $(TAGS) ./...

# Benchmarks generate notebooks of 1k and 10k pages (about 100k chunks);
# expect several minutes on 2 cores.
bench:
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchtime 1x -timeout 60m ./host/ ./index/

fmt:
	gofmt -w .

clean:
	rm -rf bin
