# shellcheck shell=bash
# Sourced by the scripts that replay the docs' walkthroughs as written
# (scripts/readme-tour.sh: the README's; scripts/readme-federation.sh and
# scripts/readme-guide.sh: docs/guide's pages): it reads the fenced blocks
# of one section of a markdown file, runs each "$ command" line and
# compares what it prints with the lines under it in the file.
#
# What a block holds: "$ command" lines, each followed by what it prints.
# A command whose quotes are still open at the end of its line goes on
# over the next lines (a two-line daily-log). A "# ..." line standing
# alone before a "$ " line, at the start of a block or after a blank line,
# is the walkthrough's comment, not output. Blank lines at the end of an
# output are not compared. A "..." line in the README stands for any other
# lines. `export NAME=VALUE` sets the variable for the next commands; after
# a `sleep N`, the commands of the block are retried until they print what
# is shown (60 s) instead of sleeping. A block after a line
# "<!-- not replayed: WHY -->" is left out (WHY says what it needs that a
# replay has not: a browser, a second machine, a model).
#
# REPLAY_RECORD=1 in the environment runs every command without comparing
# and prints what each printed: the real output to paste into the file.
#
# The script that sources it sets:
#   replay_name       its name, for messages
#   replay_real       a path as the commands see it ...
#   replay_shown      ... and as the README shows it: the commands get
#                     replay_real for replay_shown, the output the reverse
#   replay_sed        sed -e expressions (an array) replacing what changes
#                     from run to run, both in the README and the output
#   replay_unordered  1: compare the lines in any order and each line's
#                     words in any order; 0 (default): lines as they are
#   replay_may_fail   an extended regex: commands that match it may exit
#                     non-zero (their error is what the README shows)
# and may define replay_after CMD, run after each command that matched.
#
# replay README START END runs the blocks between the line matching the
# extended regex START and the first line matching END, and returns 0 when
# every command ran and printed what is shown; it prints the transcript of
# what it ran, and on the first difference what the README shows against
# what the command printed, and returns 1.

replay_real="" replay_shown="" replay_unordered=0 replay_may_fail='^$'
replay_sed=()

# replay_blocks README START END prints the section's fenced blocks'
# lines, each block ended by a line holding only "@@".
# replay_need BIN... exits 2 (cannot run here) when one of bin/BIN is
# missing or 127.0.0.1:4321 is taken: both walkthroughs' first server
# listens there.
replay_need() {
	local b
	for b in "$@"; do
		if [ ! -x "bin/$b" ]; then
			echo "$replay_name: bin/$b is missing: run make build-core${replay_build:+ $replay_build} first" >&2
			exit 2
		fi
	done
	if (exec 3<>/dev/tcp/127.0.0.1/4321) 2>/dev/null; then
		echo "$replay_name: 127.0.0.1:4321 is in use: the walkthrough's first server listens there" >&2
		exit 2
	fi
}

replay_blocks() {
	awk -v start="$2" -v end="$3" '
		!on && $0 ~ start { on = 1; next }
		on && !fence && $0 ~ end { exit }
		on && !fence && /^<!-- not replayed/ { skip = 1; next }
		on && /^```/ { if (fence && !skip) print "@@"; if (fence) skip = 0; fence = !fence; next }
		on && fence && !skip { print }
	' "$1"
}

# replay_normalize turns output read on stdin into what is compared.
replay_normalize() {
	local out
	out=$(sed -E "${replay_sed[@]}" -e 's/[[:space:]]+$//')
	if [ "$replay_unordered" != 1 ]; then
		printf '%s\n' "$out"
		return
	fi
	printf '%s\n' "$out" | while IFS= read -r line; do
		# shellcheck disable=SC2086 # splitting into words is the point
		printf '%s\n' $line | sort | paste -sd' ' -
	done | sort
}

# replay_matches EXPECTED ACTUAL: the same lines, or, when EXPECTED has
# "..." lines, EXPECTED's other lines among ACTUAL's (in their order, but
# with replay_unordered).
replay_matches() {
	local want got
	want=$(printf '%s\n' "$1" | replay_normalize)
	got=$(printf '%s\n' "$2" | replay_normalize)
	if ! grep -qx '\.\.\.' <<<"$want"; then
		[ "$want" = "$got" ]
		return
	fi
	want=$(grep -vx '\.\.\.' <<<"$want")
	if [ "$replay_unordered" = 1 ]; then
		[ -z "$(comm -23 <(printf '%s\n' "$want") <(printf '%s\n' "$got"))" ]
		return
	fi
	# each wanted line in turn, each found after the one before
	awk 'NR == FNR { want[++n] = $0; next } i < n && $0 == want[i + 1] { i++ } END { exit i < n }' \
		<(printf '%s\n' "$want") <(printf '%s\n' "$got")
}

replay_fail() {
	printf '%s: FAILED at\n  $ %s\n%s\n--- %s shows:\n%s\n--- it printed (exit %s):\n%s\n' \
		"$replay_name" "$replay_cmd" "$1" "${replay_file#"$repo/"}" "$replay_expected" "$replay_rc" "$replay_output" >&2
	return 1
}

# replay_step runs replay_cmd and compares its output with replay_expected.
replay_step() {
	[ -n "$replay_cmd" ] || return 0
	case $replay_cmd in
	export\ *)
		eval "$replay_cmd"
		return
		;;
	sleep\ *)
		replay_retry=1 # wait for what the next commands show instead
		return
		;;
	esac
	local run=$replay_cmd deadline=$((SECONDS + 60))
	[ -n "$replay_shown" ] && run=${run//"$replay_shown"/"$replay_real"}
	# trailing blank lines separate one command's output from the next
	replay_expected=$(printf '%s\n' "$replay_expected")
	while :; do
		replay_output=$(bash -c "$run" 2>&1)
		replay_rc=$?
		[ -n "$replay_real" ] && replay_output=${replay_output//"$replay_real"/"$replay_shown"}
		[ "${REPLAY_RECORD:-}" = 1 ] && break
		if [ "$replay_rc" -ne 0 ] && [[ ! $replay_cmd =~ $replay_may_fail ]]; then
			[ "$replay_retry" = 1 ] && [ $SECONDS -lt $deadline ] && { sleep 1; continue; }
			replay_fail "the command failed"
			return
		fi
		replay_matches "$replay_expected" "$replay_output" && break
		[ "$replay_retry" = 1 ] && [ $SECONDS -lt $deadline ] && { sleep 1; continue; }
		replay_fail "the output differs"
		return
	done
	printf '$ %s\n%s\n' "$replay_cmd" "$replay_output"
	if declare -F replay_after >/dev/null; then
		replay_after "$replay_cmd"
	fi
}

# replay README START END: see the top of the file.
replay() {
	local blocks line comment="" blank=1
	replay_file=$1
	blocks=$(replay_blocks "$@")
	if [ -z "$blocks" ]; then
		echo "$replay_name: no walkthrough found in $1" >&2
		return 1
	fi
	replay_cmd="" replay_expected="" replay_retry=0 replay_steps=0
	while IFS= read -r line; do
		# a comment is known by the "$ " line after it
		if [ -n "$comment" ]; then
			[[ $line == '$ '* ]] || replay_expected+=${replay_expected:+$'\n'}$comment
			comment=""
		fi
		if [ -n "$replay_cmd" ] && [ -z "$replay_expected" ] && ! bash -n -c "$replay_cmd" 2>/dev/null; then
			replay_cmd+=$'\n'$line # its quotes are still open
			continue
		fi
		case $line in
		'$ '*)
			replay_step || return
			replay_cmd=${line#\$ } replay_expected="" replay_steps=$((replay_steps + 1))
			;;
		@@)
			replay_step || return
			replay_cmd="" replay_expected="" replay_retry=0 blank=1
			continue
			;;
		'# '*)
			if [ "$blank" = 1 ]; then
				comment=$line
				continue
			fi
			replay_expected+=${replay_expected:+$'\n'}$line
			;;
		*)
			replay_expected+=${replay_expected:+$'\n'}$line
			;;
		esac
		blank=0
		[ -z "$line" ] && blank=1
	done <<<"$blocks"
	replay_step
}

# replay_stop_servers ROOT: stops every memhost server of a home under ROOT,
# whether a step started it (memhost serve) or a command did on demand
# (server.autostart), so that ROOT can be removed.
replay_stop_servers() {
	local sock
	while IFS= read -r sock; do
		memhost --home "$(dirname "$(dirname "$sock")")" serve stop >/dev/null 2>&1
	done < <(find "$1" -name serve.sock -path '*/brain/*' 2>/dev/null)
}
