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

# The host process: one server owns the home; the same commands forward to
# it through brain/serve.sock and answer in a few milliseconds. (The demo
# takes any free port; the default is 127.0.0.1:4321.)
run serve --detach --listen 127.0.0.1:0
trap '"$bin" serve stop >/dev/null 2>&1 || true' EXIT
run recall "how can I call Sarah?"
run serve status
run serve stop
trap - EXIT
printf '\nThe home is %s: open %s/notebook in any editor.\n' "$home" "$home"
