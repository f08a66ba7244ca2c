#!/usr/bin/env bash
# Runs the test suite with memhost's calendar clock moved to other days
# (internal/clock, MEMHOST_CLOCK_OFFSET), each a few minutes before a
# boundary so that the run crosses it:
#   - year: the end of a month and of a year, in UTC;
#   - dst: a spring DST change (Europe/London, 01:00 UTC: clocks go
#     forward) and an autumn one (America/New_York, 06:00 UTC: clocks go
#     back).
# Every process of a run inherits the same offset, so time still moves
# forward from one process to the next.
#
# Usage: scripts/test-dates.sh [--race] [--days=all|year|dst] [PACKAGES...]
# (default: all three days, ./...; $GO is the go command, default go).
# --race runs the year's end with -race: `make test` runs its one -race
# pass of the suite there, so that the suite runs three times in all, not
# four (the real day is just another day: the README replays and the MCP
# Inspector run on it).
#
# The year's end runs the whole suite; the DST days run with -short, which
# skips or shortens what no date changes (a rendering's CPU-time ratio, a
# race stress loop, the crash harness's kill -9 rounds): the year's end has
# them, but for the ratio under --race (make test runs it on its own).
set -euo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go} race="" days=all
while [ $# -gt 0 ]; do
	case "$1" in
	--race) race=-race; shift ;;
	--days=*) days=${1#--days=}; shift ;;
	-*) echo "test-dates.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)
year="2027-12-31T23:57:00Z UTC full"
dst=("2027-03-28T00:57:00Z Europe/London short" "2027-11-07T05:57:00Z America/New_York short")
case "$days" in
all) runs=("$year" "${dst[@]}") ;;
year) runs=("$year") ;;
dst) runs=("${dst[@]}") ;;
*) echo "test-dates.sh: --days is all, year or dst, not $days" >&2; exit 2 ;;
esac
failed=()
for r in "${runs[@]}"; do
	read -r at tz kind <<<"$r"
	offset=$(( $(date -d "$at" +%s) - $(date +%s) ))s
	flags=(-count=1)
	env=(TZ="$tz" MEMHOST_CLOCK_OFFSET="$offset")
	if [ "$kind" = short ]; then
		flags+=(-short)
	elif [ -n "$race" ]; then
		flags+=("$race")
	fi
	shown="${env[*]:1}"
	[ ${#flags[@]} -eq 1 ] || shown+=" ${flags[*]:1}"
	echo "== tests at $at in $tz ($shown)"
	if ! env "${env[@]}" "$go" test -tags sqlite_fts5 "${flags[@]}" "${pkgs[@]}"; then
		failed+=("$at $tz")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	printf 'tests failed with the clock at: %s\n' "${failed[@]}" >&2
	exit 1
fi
