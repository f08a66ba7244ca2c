#!/usr/bin/env bash
# Replays the git federation walkthroughs of docs/guide/federation.md as
# written: every fenced block of the page up to its test notes, command
# by command, in a fresh folder standing for /tmp/demo, with
# the binaries make build-core leaves in bin/. It fails when a command fails (but
# `health`, which exits 1 when degraded) or prints something else than the
# page shows. Compared: the lines, in any order (which server merges first
# decides where lines land), each line's words in any order; hashes, pids,
# ports other than 4321, dates, times and durations are left out. A "..."
# line in the page stands for any other lines. Commands after a `sleep`
# are retried until they print what is shown (60 s), instead of sleeping.
#
# The reading and comparing are scripts/lib/readme-replay.sh's.
#
# Exit status: 0 replayed, 1 a step differs or failed, 2 cannot run here
# (no bin/, or 127.0.0.1:4321 taken: the walkthrough's first server takes it).
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
readme=$repo/docs/guide/federation.md
# shellcheck source=scripts/lib/readme-replay.sh
. "$repo/scripts/lib/readme-replay.sh"
replay_name=readme-federation
replay_need memhost memhost-core

root=$(mktemp -d /tmp/readme-federation.XXXXXX)
demo=$root/demo
mkdir -p "$demo" "$root/home"
cleanup() {
	replay_stop_servers "$root"
	rm -rf "$root"
}
trap cleanup EXIT
for v in $(env | sed -n 's/^\(MEMHOST_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
# bin/ as make build-core leaves it: with the llama.cpp plugin (make build),
# the homes' search and health would depend on its model and the network.
mkdir "$root/bin"
for b in "$repo"/bin/memhost*; do
	[ "${b##*/}" = memhost-embeddings-local ] || ln "$b" "$root/bin/" 2>/dev/null || cp "$b" "$root/bin/"
done
export HOME=$root/home PATH=$root/bin:$PATH GIT_CONFIG_NOSYSTEM=1
unset NO_PROXY no_proxy # and nothing reaches the network
export HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9
cd "$demo"

replay_real=$demo replay_shown=/tmp/demo replay_unordered=1
replay_may_fail=' health($| )'
replay_sed=(
	-e 's/\b([0-9]+\.[0-9]+\.[0-9]+(-dev)?)\+[0-9a-f]{12}(-dirty)?/\1/g' # the commit a build records (go build -buildvcs)
	-e 's#127\.0\.0\.1:4321#LOOPBACK:DEFAULT#g'
	-e 's#127\.0\.0\.1:[0-9]+#LOOPBACK:PORT#g'
	-e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9:]+Z)?/DATE/g'
	-e 's/\b[0-9]{2}:[0-9]{2}\b/TIME/g'
	-e 's/\b[0-9a-f]{7,40}\b/HASH/g'
	-e 's/pid [0-9]+/pid N/g'
	-e 's/[0-9]+ ms\b/N ms/g'
	-e 's/memhost: [0-9]+ changes?/memhost: N changes/g'
)
replay "$readme" '^# Sharing a home between machines' '^`make test` runs the same' || exit 1
echo "$replay_name: $replay_steps steps replayed as docs/guide/federation.md shows them"
