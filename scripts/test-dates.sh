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
runs=(
	"2027-12-31T23:57:00Z UTC"
	"2027-03-28T00:57:00Z Europe/London"
	"2027-11-07T05:57:00Z America/New_York"
)
failed=()
for r in "${runs[@]}"; do
	at=${r% *} tz=${r#* }
	offset=$(( $(date -d "$at" +%s) - $(date +%s) ))s
	echo "== tests at $at in $tz (MEMHOST_CLOCK_OFFSET=$offset)"
	if ! TZ=$tz MEMHOST_CLOCK_OFFSET=$offset go test -tags sqlite_fts5 -count=1 "${pkgs[@]}"; then
		failed+=("$at $tz")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	printf 'tests failed with the clock at: %s\n' "${failed[@]}" >&2
	exit 1
fi
