#!/usr/bin/env bash
# Replays the README's tour as written, then its server example on the
# same home: every "$ ..." line of the fenced blocks of "## A tour" and
# "## The server and the dashboard", in the setting of a new user, ann,
# with a fresh home folder, this checkout's bin/ at ~/memhost/bin, the model file in ~/Downloads, an offline machine
# (HTTPS goes through a proxy on a closed loopback port, so the model's
# download fails at once) and a clock that reads 2026-11-23 08:22 UTC. It
# fails when a command fails or prints something else than the README
# shows, line for line. Left out of the comparison: durations (ms, the
# JSON's timings, "1s ago", uptime), the seconds of timestamps, the
# database's size, pids, a turn's id and the hashes that follow from it or
# from the build (the session file's, the plugins' SHA-256).
#
# Usage: scripts/readme-tour.sh [MODEL.gguf] (default: the MiniLM of
# ../shared/models, where the tests look for it). REPLAY_RECORD=1 prints
# what the commands print instead of comparing (scripts/lib/readme-replay.sh):
# how the README's tour is recorded again after a change.
# Exit status: 0 replayed, 1 a step differs or failed, 2 cannot run here
# (no bin/ with the llama.cpp plugin, no model file, or 127.0.0.1:4321
# taken: the server example listens there).
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
readme=$repo/README.md
# shellcheck source=scripts/lib/readme-replay.sh
. "$repo/scripts/lib/readme-replay.sh"
replay_name=readme-tour
model=${1:-$repo/../shared/models/all-MiniLM-L6-v2-Q4_K_M.gguf}
replay_build=build-local replay_need memhost memhost-core memhost-embeddings-local
if [ ! -f "$model" ]; then
	echo "$replay_name: no model file at $model: give the path of all-MiniLM-L6-v2-Q4_K_M.gguf" >&2
	exit 2
fi

root=$(mktemp -d /tmp/readme-tour.XXXXXX)
export HOME=$root/ann
cleanup() {
	replay_stop_servers "$root"
	rm -rf "$root"
}
trap cleanup EXIT
for v in $(env | sed -n 's/^\(MEMHOST_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset NO_PROXY no_proxy
export HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 TZ=UTC
MEMHOST_CLOCK_OFFSET=$(($(date -u -d 2026-11-23T08:22:00Z +%s) - $(date -u +%s)))s
export MEMHOST_CLOCK_OFFSET
mkdir -p "$HOME/memhost" "$HOME/Downloads"
cp -al bin "$HOME/memhost/bin" 2>/dev/null || cp -r bin "$HOME/memhost/bin"
cp "$model" "$HOME/Downloads/all-MiniLM-L6-v2-Q4_K_M.gguf"
export PATH=$HOME/memhost/bin:$PATH
cd "$HOME"

replay_real=$HOME replay_shown='~'
replay_sed=(
	-e 's/\b([0-9]+\.[0-9]+\.[0-9]+(-dev)?)\+[0-9a-f]{12}(-dirty)?/\1/g' # the commit a build records (go build -buildvcs)
	-e 's/[0-9]+ ms\b/N ms/g'
	-e 's/"([a-zA-Z]+Ms)": ?[0-9.]+/"\1": N/g'
	-e 's/\([0-9]+s ago\)/(N ago)/g'
	-e 's/^(uptime: +)[0-9a-z.]+$/\1N/'
	-e 's/(T[0-9]{2}:[0-9]{2}):[0-9]{2}(\.[0-9]+)?Z/\1:SSZ/g'
	-e 's/^(database: +)[0-9.]+ [KMG]?B$/\1SIZE/'
	-e 's/pid [0-9]+/pid N/g'
	-e 's/turn [0-9a-f]{12}/turn ID/g'
	-e 's#^(sessions/[^ ]+ +[0-9]+ +[a-z]+ +)[0-9a-f]{12}$#\1HASH#'
	-e 's#[0-9a-f]{12}( +~/memhost/bin/)#HASH\1#'
)
# The first recall starts the model's download in the background and
# answers at once: before the download has failed ("model download
# starting", as the README shows) or, on a busy machine, just after (why it
# failed). Either is right for the first; the next must say why.
replay_sed_after_first_recall=("${replay_sed[@]}")
replay_sed+=(-e 's/\(keyword search: model not downloaded \(offline\); memhost models pull FILE\|URL installs all-MiniLM-L6-v2-Q4_K_M.gguf;/(keyword search: model download starting;/')

replay_after() {
	local models=$HOME/.memhost/models deadline=$((SECONDS + 30))
	[[ $1 == 'memhost recall '* ]] || return 0
	replay_sed=("${replay_sed_after_first_recall[@]}")
	[ -e "$models/all-MiniLM-L6-v2-Q4_K_M.gguf" ] && return 0
	while [ ! -e "$models/.all-MiniLM-L6-v2-Q4_K_M.gguf.failed.json" ] && [ $SECONDS -lt $deadline ]; do
		sleep 0.1
	done
}

replay "$readme" '^## A tour' '^## ' || exit 1
steps=$replay_steps
replay "$readme" '^## The server and the dashboard' '^## ' || exit 1
steps=$((steps + replay_steps))
echo "$replay_name: $steps steps replayed as the README shows them"
