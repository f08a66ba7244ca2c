#!/usr/bin/env bash
# Regenerates the README's tour: a fresh home with the default local model
# placed in models/ (give its path as $1), the commands of the tour, and
# their real output on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:?usage: scripts/tour.sh PATH/TO/all-MiniLM-L6-v2-Q4_K_M.gguf}
export MEMHOST_HOME=/tmp/tour/.memhost
rm -rf /tmp/tour
M=./bin/memhost
run() { printf '$ memhost %s\n' "$1"; shift; "$M" "$@" 2>&1; echo; }
run "init" init
mkdir -p "$MEMHOST_HOME/models" && cp "$model" "$MEMHOST_HOME/models/"
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
run 'recall "database version" --json' recall "database version" --json
run 'get reference/contacts.md --start-line 3 --lines 2' get reference/contacts.md --start-line 3 --lines 2
echo "The tomatoes need water every morning." >> "$MEMHOST_HOME/notebook/knowledge/garden.md"
printf '$ echo "The tomatoes need water every morning." >> ~/.memhost/notebook/knowledge/garden.md   # any editor\n'
run 'recall tomato' recall tomato
run 'session append --session chat-1 --role user "We adopted a puppy called Max"' session append --session chat-1 --role user "We adopted a puppy called Max"
run 'conversation-search "new dog"' conversation-search "new dog"
run 'status' status
run 'files' files
run 'plugins list' plugins list
run 'get ../secrets.md' get ../secrets.md
