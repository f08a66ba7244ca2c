#!/usr/bin/env bash
# Runs the test suite (without -race) with memhost's calendar clock moved to
# other days (internal/clock, MEMHOST_CLOCK_OFFSET), each a few minutes
# before a boundary so that the run crosses it:
#   - the end of a month and of a year, in UTC;
#   - a spring DST change (Europe/London, 01:00 UTC: clocks go forward);
#   - an autumn DST change (America/New_York, 06:00 UTC: clocks go back).
# Every process of a run inherits the same offset, so time still moves
# forward from one process to the next. Usage: scripts/test-dates.sh
# [PACKAGES...] (default ./...).
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)
# The first run is the whole suite; the other two (DST changes) run with
# -short, which skips or shortens what no date changes (a rendering's
# CPU-time ratio, a race stress loop, the crash harness's kill -9 rounds):
# the first run and make test's -race run have them.
runs=(
	"2027-12-31T23:57:00Z UTC full"
	"2027-03-28T00:57:00Z Europe/London short"
	"2027-11-07T05:57:00Z America/New_York short"
)
failed=()
for r in "${runs[@]}"; do
	read -r at tz kind <<<"$r"
	offset=$(( $(date -d "$at" +%s) - $(date +%s) ))s
	flags=(-count=1)
	env=(TZ="$tz" MEMHOST_CLOCK_OFFSET="$offset")
	if [ "$kind" = short ]; then
		flags+=(-short)
	fi
	echo "== tests at $at in $tz (${env[*]:1}${flags[1]:+ ${flags[1]}})"
	if ! env "${env[@]}" go test -tags sqlite_fts5 "${flags[@]}" "${pkgs[@]}"; then
		failed+=("$at $tz")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	printf 'tests failed with the clock at: %s\n' "${failed[@]}" >&2
	exit 1
fi
