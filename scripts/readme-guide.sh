#!/usr/bin/env bash
# Replays the pages of docs/guide as written: every "$ ..." line of each
# page's fenced blocks (but those after "<!-- not replayed: WHY -->"), a
# page on a fresh home of its own, ~/.memhost of a new user whose clock
# reads 2026-11-23 08:22 UTC, on an offline machine, with the binaries of
# bin/ but the llama.cpp plugin (so that search is keyword-only and does not
# depend on a model). It fails when a command fails (but `health`, which
# exits 1 when degraded, and `get ../`, whose error the page shows) or
# prints something else than the page shows. Left out of the comparison:
# durations, the seconds of timestamps, pids, turn ids and the hashes that
# follow from the clock (any 12 hex digits, a transcript's size), the width of a table's columns. federation.md has scripts/readme-federation.sh,
# with two servers.
#
# Usage: scripts/readme-guide.sh [PAGE.md...] (default: every page).
# REPLAY_RECORD=1 prints what the commands print instead of comparing.
# Exit status: 0 replayed, 1 a step differs or failed, 2 cannot run here
# (no bin/, or 127.0.0.1:4321 taken: a page's server listens there).
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
# shellcheck source=scripts/lib/readme-replay.sh
. "$repo/scripts/lib/readme-replay.sh"
replay_name=readme-guide
replay_need memhost memhost-core
pages=("$@")
if [ ${#pages[@]} -eq 0 ]; then
	for p in docs/guide/*.md; do
		case ${p##*/} in README.md | federation.md) continue ;; esac
		pages+=("$p")
	done
fi

root=$(mktemp -d /tmp/readme-guide.XXXXXX)
cleanup() {
	replay_stop_servers "$root"
	rm -rf "$root"
}
trap cleanup EXIT
for v in $(env | sed -n 's/^\(MEMHOST_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset NO_PROXY no_proxy
export HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 TZ=UTC GIT_CONFIG_NOSYSTEM=1
mkdir "$root/bin"
for b in "$repo"/bin/memhost*; do
	[ "${b##*/}" = memhost-embeddings-local ] || ln "$b" "$root/bin/" 2>/dev/null || cp "$b" "$root/bin/"
done
export PATH=$root/bin:$PATH

replay_may_fail='^memhost (health|get \.\./|prune |consolidate$|--home [^ ]+ import [^ ]*bad)'
replay_sed=(
	-e 's/\b([0-9]+\.[0-9]+\.[0-9]+(-dev)?)\+[0-9a-f]{12}(-dirty)?/\1/g' # the commit a build records (go build -buildvcs)
	-e 's/[0-9]+ ms\b/N ms/g'
	-e 's/"([a-zA-Z]+Ms)": ?[0-9.]+/"\1": N/g'
	-e 's/\([0-9]+s ago\)/(N ago)/g'
	-e 's/seen [0-9]+s ago/seen Ns ago/g'
	-e 's/(T[0-9]{2}:[0-9]{2}):[0-9]{2}(\.[0-9]+)?Z/\1:SSZ/g'
	-e 's/\b([0-9]{2}:[0-9]{2}):[0-9]{2}\b/\1:SS/g'
	-e 's/pid [0-9]+/pid N/g'
	-e 's/\b[0-9a-f]{64}\b/SHA256/g'
	-e 's/\b[0-9a-f]{12}\b/ID/g'
	-e 's/   +/  /g'
	-e 's/ [0-9]+ bytes$/ N bytes/'
	-e 's/(database|vault|index)(: +| )[0-9.]+ [kKMG]?B/\1\2SIZE/g'
)

steps=0
for page in "${pages[@]}"; do
	name=${page##*/}
	export HOME=$root/${name%.md}
	mkdir -p "$HOME"
	# each page starts at 08:22:00, and has a minute before its clock reads 08:23
	MEMHOST_CLOCK_OFFSET=$(($(date -u -d 2026-11-23T08:22:00Z +%s) - $(date -u +%s)))s
	export MEMHOST_CLOCK_OFFSET
	cd "$HOME" || exit 1
	replay_real=$HOME replay_shown='~'
	echo "== $page"
	if ! replay_blocks "$repo/$page" '^# ' '^<!-- end of the replay -->$' | grep -q '^\$ '; then
		echo "(no commands to replay)"
		cd "$repo" || exit 1
		continue
	fi
	replay "$repo/$page" '^# ' '^<!-- end of the replay -->$' || exit 1
	steps=$((steps + replay_steps))
	cd "$repo" || exit 1
done
echo "$replay_name: $steps steps replayed as docs/guide shows them"
