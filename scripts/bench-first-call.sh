#!/usr/bin/env bash
# The first command on a home without a server, with server.autostart off
# and on, alternating: a fresh home of one page each run; then the second
# command a second later (through the server the first one started, with
# autostart on). Prints the medians in microseconds.
# Usage: scripts/bench-first-call.sh [RUNS] (default 10; bin/ as make build-core leaves it)
set -euo pipefail
cd "$(dirname "$0")/.."
B=$PWD/bin/memhost
runs=${1:-10}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$runs"); do
	for mode in off on; do
		d=$(mktemp -d /tmp/first-call.XXXXXX)
		H=$d/h
		MEMHOST_SERVER_AUTOSTART=false "$B" --home "$H" remember "the heron nests by the lake" >/dev/null
		v=false
		[ "$mode" = on ] && v=true
		s=$(date +%s%N)
		MEMHOST_SERVER_AUTOSTART=$v "$B" --home "$H" recall heron >/dev/null
		e=$(date +%s%N)
		echo "first-$mode $(((e - s) / 1000))" >>"$out"
		sleep 1
		s=$(date +%s%N)
		MEMHOST_SERVER_AUTOSTART=$v "$B" --home "$H" recall heron >/dev/null
		e=$(date +%s%N)
		echo "second-$mode $(((e - s) / 1000))" >>"$out"
		"$B" --home "$H" serve stop >/dev/null 2>&1 || true
		rm -rf "$d"
	done
done
for m in first-off first-on second-off second-on; do
	grep "^$m " "$out" | awk '{print $2}' | sort -n | awk -v m="$m" '{a[NR]=$1} END {printf "%-10s median %d us of %d runs\n", m, a[int((NR+1)/2)], NR}'
done
