#!/usr/bin/env bash
# Measures the README's build figures: `make demo` and `make test` from an
# empty Go build cache (modules already downloaded), then again warm. Run it
# on an idle machine from a fresh clone; it uses a cache of its own and
# leaves yours alone. Prints one line per run: target, cache, seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=$(mktemp -d /tmp/memhost-gocache.XXXXXX)
trap 'chmod -R u+w "$cache" 2>/dev/null; rm -rf "$cache"' EXIT
export GOCACHE=$cache
measure() {
	local target=$1 state=$2 start end
	rm -rf bin
	start=$(date +%s.%N)
	make "$target" >"/tmp/buildtime-$target-$state.log" 2>&1 || { echo "make $target failed: /tmp/buildtime-$target-$state.log" >&2; exit 1; }
	end=$(date +%s.%N)
	awk -v t="$target" -v s="$state" -v a="$start" -v b="$end" 'BEGIN { printf "make %-5s %-5s cache: %6.0f s\n", t, s, b - a }'
}
measure demo empty
measure demo warm
rm -rf "$cache"/* # empty again for the test run
measure test empty
measure test warm
