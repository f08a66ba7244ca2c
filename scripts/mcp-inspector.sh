#!/bin/sh
# mcp-inspector.sh: memhost's MCP server checked by an independent client,
# the MCP Inspector's CLI (npm @modelcontextprotocol/inspector, pinned),
# over stdio (`memhost mcp`) and over streamable HTTP (`memhost serve`,
# /mcp): tools/list, with the Inspector's --strict schema checks, its size
# and its tools; remember then memory_search finding it, resources/read of
# the page written, links.
#
# tools/list is what every client hands the model in every session, so it
# fails with any --strict finding (warnings too), above BUDGET characters
# (of its JSON result, as the Inspector receives it), or when its tools
# are not TOOLS (mcp's TestInspectorScript holds TOOLS and BUDGET to the
# server's tools and to its own budget test).
#
# The Inspector is installed into bin/npm (not committed). Without npm, or
# when the registry cannot be reached, it says so and exits 0: a skip, not
# a failure. Usage: scripts/mcp-inspector.sh BIN_DIR (holding memhost and
# memhost-core).
set -eu

VERSION=2.12.0
BUDGET=12000
TOOLS="context conversation_search daily_log episodes fact_add facts health_history links memory_get memory_search memory_status mv notebook_write prune remember rollup skill_learn skill_review skills"
BIN=$(cd "${1:-bin}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX="$ROOT/bin/npm"
INSPECTOR="$PREFIX/node_modules/.bin/mcp-inspector"

skip() { echo "mcp-inspector: SKIPPED: $*"; exit 0; }

if ! "$INSPECTOR" --version 2>/dev/null | grep -q "$VERSION"; then
	command -v npm >/dev/null 2>&1 || skip "npm is not installed"
	echo "mcp-inspector: installing @modelcontextprotocol/inspector@$VERSION into bin/npm"
	mkdir -p "$PREFIX"
	if ! timeout 300 npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error \
		"@modelcontextprotocol/inspector@$VERSION" >"$PREFIX/install.log" 2>&1; then
		tail -n 5 "$PREFIX/install.log"
		skip "npm could not install the Inspector (registry unreachable?); see bin/npm/install.log"
	fi
fi

HOME_DIR=$(mktemp -d)
OUT=$(mktemp -d)
SERVE_PID=""
cleanup() {
	if [ -n "$SERVE_PID" ]; then "$BIN/memhost" --home "$HOME_DIR" serve stop >/dev/null 2>&1 || kill "$SERVE_PID" 2>/dev/null || true; fi
	rm -rf "$HOME_DIR" "$OUT"
}
trap cleanup EXIT INT TERM
export MCP_CATALOG_PATH="$OUT/catalog.json" # not the user's ~/.mcp-inspector

fail() { echo "mcp-inspector: FAIL: $*"; exit 1; }

# check TRANSPORT TARGET...: the calls against one server.
check() {
	name=$1
	shift
	insp() { timeout 60 "$INSPECTOR" --cli "$@"; }
	# --format json: the result and the --strict findings in one envelope.
	insp "$@" --method tools/list --strict --format json >"$OUT/tools.json" 2>"$OUT/strict.txt" ||
		fail "$name: tools/list: $(cat "$OUT/strict.txt")"
	node -e '
		const env = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		const findings = (env.schemaFindings || []).reduce((n, r) => n + r.findings.length, 0);
		const names = env.result.tools.map((t) => t.name).sort().join(" ");
		console.log(JSON.stringify(env.result).length, findings, env.result.tools.length, names);
	' "$OUT/tools.json" >"$OUT/measure.txt" || fail "$name: tools/list: cannot read the answer: $(head -c 500 "$OUT/tools.json")"
	read -r chars findings ntools names <"$OUT/measure.txt"
	echo "mcp-inspector: $name: tools/list: $ntools tools, $chars characters (budget $BUDGET), $findings --strict findings"
	[ "$findings" -eq 0 ] || fail "$name: tools/list: $findings --strict findings:
$(cat "$OUT/strict.txt")"
	[ "$chars" -le "$BUDGET" ] || fail "$name: tools/list is $chars characters, over the budget of $BUDGET"
	[ "$names" = "$TOOLS" ] || fail "$name: tools/list has the tools
  $names
want
  $TOOLS"
	fact="The $name test phrase is quokka-$$"
	insp "$@" --method tools/call --tool-name remember --tool-arg "text=$fact" category=knowledge file=inspector \
		>"$OUT/remember.json" || fail "$name: remember: $(cat "$OUT/remember.json")"
	grep -q '"path": "knowledge/inspector.md"' "$OUT/remember.json" || fail "$name: remember: $(cat "$OUT/remember.json")"
	insp "$@" --method tools/call --tool-name memory_search --tool-arg "query=quokka-$$ $name" >"$OUT/search.json" ||
		fail "$name: memory_search: $(cat "$OUT/search.json")"
	grep -q "$fact" "$OUT/search.json" || fail "$name: memory_search did not find what remember stored: $(cat "$OUT/search.json")"
	echo "mcp-inspector: $name: remember, then memory_search found it"
	insp "$@" --method resources/read --uri memhost://notebook/knowledge/inspector.md >"$OUT/read.json" ||
		fail "$name: resources/read: $(cat "$OUT/read.json")"
	grep -q "$fact" "$OUT/read.json" || fail "$name: resources/read: $(cat "$OUT/read.json")"
	echo "mcp-inspector: $name: resources/read memhost://notebook/knowledge/inspector.md"
	insp "$@" --method tools/call --tool-name links --tool-arg path=knowledge/inspector.md unresolved=true >"$OUT/links.json" ||
		fail "$name: links: $(cat "$OUT/links.json")"
	grep -q '"path": "knowledge/inspector.md"' "$OUT/links.json" && grep -q '"unresolved": \[\]' "$OUT/links.json" ||
		fail "$name: links: $(cat "$OUT/links.json")"
	echo "mcp-inspector: $name: links knowledge/inspector.md"
	# A page that is not there: a tool error the model can act on, not a
	# protocol failure (the Inspector exits 1 on a tool error).
	insp "$@" --method tools/call --tool-name memory_get --tool-arg path=knowledge/nope.md >"$OUT/get.json" 2>/dev/null || true
	grep -q '"isError": true' "$OUT/get.json" && grep -q 'no such page: knowledge/nope.md' "$OUT/get.json" ||
		fail "$name: memory_get of a missing page: $(cat "$OUT/get.json")"
	echo "mcp-inspector: $name: memory_get of a missing page is a tool error"
}

check stdio "$BIN/memhost" --home "$HOME_DIR" mcp

"$BIN/memhost" --home "$HOME_DIR" serve --detach --listen 127.0.0.1:0 >"$OUT/serve.txt" || fail "serve: $(cat "$OUT/serve.txt")"
SERVE_PID=$(sed -n 's/.*pid \([0-9]*\).*/\1/p' "$OUT/serve.txt" | head -n 1)
URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$OUT/serve.txt" | head -n 1)
[ -n "$URL" ] || fail "serve printed no URL: $(cat "$OUT/serve.txt")"
check http "$URL/mcp" --transport http

echo "mcp-inspector: OK (Inspector $VERSION, stdio and streamable HTTP)"
