#!/usr/bin/env bash
# Regenerates the README's tour: what a new user sees, on stdout. The user
# "ann" has a fresh home folder and this checkout's bin/ at ~/memhost/bin
# (as if cloned there); no model is installed and the machine is offline
# (run it where huggingface.co cannot be reached, or the first recall
# downloads the model instead), and she has the model file she downloaded
# elsewhere (give its path as $1) in ~/Downloads.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:?usage: scripts/tour.sh PATH/TO/all-MiniLM-L6-v2-Q4_K_M.gguf}
root=$(mktemp -d /tmp/tour.XXXXXX)
trap 'rm -rf "$root"' EXIT
export HOME=$root/ann
unset MEMHOST_HOME MEMHOST_NO_SERVER
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
sleep 1 # the first call's download attempt (offline: it fails at once) has ended
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
