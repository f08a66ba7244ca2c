#!/usr/bin/env bash
# Regenerates the README's tour: what a new user sees, on stdout. The user
# "ann" has a fresh home folder and this checkout's bin/ at ~/memhost/bin
# (as if cloned there); no model is installed and the machine is offline,
# and she has the model file she downloaded elsewhere (give its path as $1)
# in ~/Downloads. scripts/readme-tour.sh replays the README's copy.
#
# Offline: every HTTPS request goes through a proxy on a closed loopback
# port, so the model's download fails at once, as with no network. Her
# clock reads 2026-11-23 08:22 UTC, the README's day (MEMHOST_CLOCK_OFFSET
# moves memhost's calendar clock), so that the daily log, the text embedded
# and so the scores are the same from one run to the next.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:?usage: scripts/tour.sh PATH/TO/all-MiniLM-L6-v2-Q4_K_M.gguf}
root=$(mktemp -d /tmp/tour.XXXXXX)
trap 'rm -rf "$root"' EXIT
export HOME=$root/ann
for v in $(env | sed -n 's/^\(MEMHOST_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset NO_PROXY no_proxy
export HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 TZ=UTC
export MEMHOST_CLOCK_OFFSET=$(($(date -u -d 2026-11-23T08:22:00Z +%s) - $(date -u +%s)))s
mkdir -p "$HOME/memhost" "$HOME/Downloads"
cp -r bin "$HOME/memhost/bin"
cp "$model" "$HOME/Downloads/"
export PATH=$HOME/memhost/bin:$PATH
cd "$HOME"
run() {
	printf '$ memhost %s\n' "$1"
	shift
	memhost "$@" 2>&1 | sed "s#$HOME#~#g" || true
	echo
}
run "init" init
run 'remember "Sarah Chen - Mobile: 555-1234"' remember "Sarah Chen - Mobile: 555-1234"
run 'remember "Sarah prefers email over phone calls"' remember "Sarah prefers email over phone calls"
run 'remember "add oat milk to the shopping list"' remember "add oat milk to the shopping list"
run 'remember "Never schedule meetings before 10am"' remember "Never schedule meetings before 10am"
run 'remember "The staging server runs Postgres 16"' remember "The staging server runs Postgres 16"
run 'remember "the staging server runs postgres   16"' remember "the staging server runs postgres   16"
run 'daily-log "Sarah meeting prep
Looked up Sarah'"'"'s contact info; she moved to Acme Corp."' daily-log "Sarah meeting prep
Looked up Sarah's contact info; she moved to Acme Corp."
run 'recall "how can I call Sarah?"' recall "how can I call Sarah?"
# the first call's download attempt (offline: it fails at once) has ended
for _ in $(seq 300); do
	[ -e "$HOME/.memhost/models/.all-MiniLM-L6-v2-Q4_K_M.gguf.failed.json" ] && break
	sleep 0.1
done
run 'recall sarah --max-results 1' recall sarah --max-results 1
run 'models pull ~/Downloads/all-MiniLM-L6-v2-Q4_K_M.gguf' models pull "$HOME/Downloads/$(basename "$model")"
echo '# the first hybrid recall starts the plugin, loads the model and embeds every chunk waiting for a vector:'
run 'recall "how can I call Sarah?"' recall "how can I call Sarah?"
run 'recall "database version" --json' recall "database version" --json
run 'get reference/contacts.md --start-line 3 --lines 2' get reference/contacts.md --start-line 3 --lines 2
echo "The tomatoes need water every morning." >> "$HOME/.memhost/notebook/knowledge/garden.md"
printf '$ echo "The tomatoes need water every morning." >> ~/.memhost/notebook/knowledge/garden.md   # any editor\n'
run 'recall tomato' recall tomato
run 'session append --session chat-1 --role user "We adopted a puppy called Max"' session append --session chat-1 --role user "We adopted a puppy called Max"
run 'conversation-search "new dog"' conversation-search "new dog"
run 'status' status
run 'files' files
run 'plugins list' plugins list
run 'get ../secrets.md' get ../secrets.md
