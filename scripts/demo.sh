#!/usr/bin/env bash
# The main job on the embedded defaults: a fresh home seeded with the sample
# notebook in examples/notebook, then the agent's everyday commands. Keyword
# search needs no model. Set MEMHOST_HOME to keep the home somewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/memhost
home=${MEMHOST_HOME:-$(mktemp -d /tmp/memhost-demo.XXXXXX)}
export MEMHOST_HOME=$home

run() { printf '\n$ memhost %s\n' "$*"; "$bin" "$@"; }

"$bin" init >/dev/null
cp -rn examples/notebook/. "$home/notebook/"
run init
run sync
run remember "Sarah Chen - Birthday: May 3"
run remember "add coffee beans to the shopping list"
run daily-log "Demo run: tried memhost from the README"
run recall "how can I call Sarah?"
run recall "meetings"
run recall "会议"
run get reference/contacts.md --start-line 3 --lines 3
run status

# Semantic search through a plugin: hello is the example provider (feature
# hashing, no model); the llama.cpp provider plugs in the same way.
run plugins list
run plugins use hello
run embed
run recall "sarah's mobile"
printf '\nThe home is %s: open %s/notebook in any editor.\n' "$home" "$home"
