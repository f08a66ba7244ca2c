#!/usr/bin/env bash
# Replays the README's git federation walkthroughs as written: every fenced
# block of the section "Sharing a home between machines" up to its test
# notes, command by command, in a fresh folder standing for /tmp/demo, with
# the binaries of bin/ (make build-core). It fails when a command fails (but
# `health`, which exits 1 when degraded) or prints something else than the
# README shows. Compared: the lines, in any order (which server merges first
# decides where lines land), each line's words in any order; hashes, pids,
# ports other than 4321, dates, times and durations are left out. A "..."
# line in the README stands for any other lines. Commands after a `sleep`
# are retried until they print what is shown (60 s), instead of sleeping.
#
# Exit status: 0 replayed, 1 a step differs or failed, 2 cannot run here
# (no bin/, or 127.0.0.1:4321 taken: the walkthrough's first server takes it).
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
readme=$repo/README.md
if [ ! -x bin/memhost ] || [ ! -x bin/memhost-core ]; then
	echo "readme-federation: bin/memhost is missing: run make build-core first" >&2
	exit 2
fi
if (exec 3<>/dev/tcp/127.0.0.1/4321) 2>/dev/null; then
	echo "readme-federation: 127.0.0.1:4321 is in use: the walkthrough's first server listens there" >&2
	exit 2
fi

root=$(mktemp -d /tmp/readme-federation.XXXXXX)
demo=$root/demo
mkdir -p "$demo" "$root/home"
cleanup() {
	for h in "$demo"/*/; do
		[ -S "$h/brain/serve.sock" ] && memhost --home "$h" serve stop >/dev/null 2>&1
	done
	rm -rf "$root"
}
trap cleanup EXIT
for v in $(env | sed -n 's/^\(MEMHOST_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export HOME=$root/home PATH=$repo/bin:$PATH GIT_CONFIG_NOSYSTEM=1
cd "$demo"

# The blocks: "$ command" lines, each followed by what it prints; a line
# holding only "@@" ends a block.
blocks=$(awk '
	/^## Sharing a home between machines/ { on = 1; next }
	on && /^`make test` runs the same/ { exit }
	on && /^```/ { if (fence) print "@@"; fence = !fence; next }
	on && fence { print }
' "$readme")
if [ -z "$blocks" ]; then
	echo "readme-federation: no walkthrough found in $readme" >&2
	exit 1
fi

# normalize turns output into one sorted line per output line, each line's
# words sorted, with what changes from run to run replaced.
normalize() {
	sed -E \
		-e "s#$demo#/tmp/demo#g" \
		-e 's#127\.0\.0\.1:4321#LOOPBACK:DEFAULT#g' \
		-e 's#127\.0\.0\.1:[0-9]+#LOOPBACK:PORT#g' \
		-e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9:]+Z)?/DATE/g' \
		-e 's/\b[0-9]{2}:[0-9]{2}\b/TIME/g' \
		-e 's/\b[0-9a-f]{7,40}\b/HASH/g' \
		-e 's/pid [0-9]+/pid N/g' \
		-e 's/[0-9]+ ms\b/N ms/g' \
		-e 's/memhost: [0-9]+ changes?/memhost: N changes/g' |
		while IFS= read -r line; do
			# shellcheck disable=SC2086 # splitting into words is the point
			printf '%s\n' $line | sort | paste -sd' ' -
		done | sort
}

# matches EXPECTED ACTUAL: the same lines, or, when EXPECTED has a "..."
# line, every other line of EXPECTED among ACTUAL's.
matches() {
	local want got
	want=$(printf '%s\n' "$1" | normalize)
	got=$(printf '%s\n' "$2" | normalize)
	if grep -qx '\.\.\.' <<<"$want"; then
		want=$(grep -vx '\.\.\.' <<<"$want")
		[ -z "$(comm -23 <(printf '%s\n' "$want") <(printf '%s\n' "$got"))" ]
		return
	fi
	[ "$want" = "$got" ]
}

fail() {
	printf 'readme-federation: FAILED at\n  $ %s\n%s\n--- the README shows:\n%s\n--- it printed (exit %s):\n%s\n' "$cmd" "$1" "$expected" "$rc" "$output" >&2
	exit 1
}

step() {
	[ -n "$cmd" ] || return 0
	case $cmd in
	export\ *)
		eval "$cmd"
		return
		;;
	sleep\ *)
		retry=1 # wait for what the next commands show instead
		return
		;;
	esac
	local run=${cmd//\/tmp\/demo/$demo} deadline=$((SECONDS + 60))
	while :; do
		output=$(bash -c "$run" 2>&1)
		rc=$?
		output=${output//$demo//tmp/demo}
		if [ "$rc" -ne 0 ] && [[ ! $cmd =~ \ health($|\ ) ]]; then
			[ "$retry" = 1 ] && [ $SECONDS -lt $deadline ] && { sleep 1; continue; }
			fail "the command failed"
		fi
		matches "$expected" "$output" && break
		[ "$retry" = 1 ] && [ $SECONDS -lt $deadline ] && { sleep 1; continue; }
		fail "the output differs"
	done
	printf '$ %s\n%s\n' "$cmd" "$output"
}

cmd="" expected="" retry=0 steps=0
while IFS= read -r line; do
	case $line in
	'$ '*)
		step
		cmd=${line#\$ } expected="" steps=$((steps + 1))
		;;
	@@)
		step
		cmd="" expected="" retry=0
		;;
	*)
		expected+=${expected:+$'\n'}$line
		;;
	esac
done <<<"$blocks"
step
echo "readme-federation: $steps steps replayed as the README shows them"
