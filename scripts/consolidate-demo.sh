#!/usr/bin/env bash
# memhost consolidate on a conversation with a contradiction, through the
# real memhost-generator-openai plugin — answered by a SCRIPTED STAND-IN
# (scripts/fakeopenai, the fake OpenAI-compatible server the tests use,
# with the answers in scripts/consolidate-demo.answers.json), not a model:
# the output shows what memhost does with a model's answers (a cut-off
# answer retried, a batch skipped after two bad answers, a newer employer
# superseding the old), not what a model would extract. Regenerates the
# README's consolidation transcript. Needs `make build-core`.
#
# With a real endpoint instead, leave out the stand-in and configure, e.g.:
#   memory.generator: {plugin: ollama, options: {ollama: {model: llama3.2}}}
#   memory.generator: {plugin: openai, options: {openai: {url: "https://api.deepseek.com/v1",
#                      model: deepseek-chat, apiKeyEnv: DEEPSEEK_API_KEY, responseFormat: json_object}}}
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/memhost
home=${MEMHOST_HOME:-$(mktemp -d /tmp/memhost-consolidate.XXXXXX)}
export MEMHOST_HOME=$home

go build -o "$home/fakeopenai" ./scripts/fakeopenai
"$home/fakeopenai" scripts/consolidate-demo.answers.json >"$home/fake.url" &
fake=$!
trap 'kill $fake 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$home/fake.url" ] && break; sleep 0.1; done
url=$(cat "$home/fake.url")

"$bin" init >/dev/null
cat >"$home/config.yaml" <<EOF2
memory:
  generator:
    plugin: openai
    options:
      openai: {url: "$url", model: scripted-stand-in, retries: "0"}
EOF2

run() { printf '$ memhost %s\n' "$*"; "$bin" "$@" 2>&1 || true; }
show() { printf '$ %s\n' "$*" | sed "s|$home|~/.memhost|g"; "$@"; }

"$bin" session append --session chat-1 --role user "My colleague Sarah Chen works at TechFlow as a designer." >/dev/null
"$bin" session append --session chat-1 --role assistant "Noted." >/dev/null
"$bin" session append --session chat-1 --role user "Sarah moved to Acme Corp last week." >/dev/null
"$bin" session append --session chat-2 --role user "The office wifi changed." >/dev/null

run consolidate
show cat "$home/notebook/knowledge/entities/sarah-chen.md"
run facts sarah-chen --history
run recall "where does Sarah work"
# A person's edit in any editor wins, and a second run adds nothing.
printf '$ sed -i "s/- designer/- lead designer/" ~/.memhost/notebook/knowledge/entities/sarah-chen.md   # any editor\n'
sed -i "s/- designer/- lead designer/" "$home/notebook/knowledge/entities/sarah-chen.md"
run facts sarah-chen
run consolidate
printf '$ memhost status | grep -E "^(generator|consolidated):"\n'
"$bin" status | grep -E '^(generator|consolidated):'
