#!/usr/bin/env bash
# Times a one-shot CLI recall (`memhost --no-server recall`) on a home as
# installed offline: the local plugin beside memhost, no model in the
# models folder, and its last download recorded as failed (offline), so
# the download is not due again for a while. Usage:
#
#   scripts/bench-offline-recall.sh BIN_DIR [BIN_DIR...]
#
# Each BIN_DIR holds memhost, memhost-core and memhost-embeddings-local
# (make build's bin/, or a copy from another commit). One home of PAGES
# (default 1000) generated pages is shared; the builds' runs alternate,
# RUNS (default 9) each after one warm-up, and each build's median and
# range are printed, with the median CPU time and the reason its recall
# gave.
set -euo pipefail
pages=${PAGES:-1000}
runs=${RUNS:-9}
[ $# -ge 1 ] || { echo "usage: $0 BIN_DIR [BIN_DIR...]" >&2; exit 2; }
home=$(mktemp -d /tmp/memhost-offline-recall.XXXXXX)
trap 'rm -rf "$home"' EXIT
export MEMHOST_HOME=$home

# PAGES pages of 12 short sections each, from a fixed vocabulary and seed.
python3 - "$home/notebook/knowledge" "$pages" <<'PY'
import os, random, sys
out, n = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
rng = random.Random(30)
words = ("lantern river kettle garden planning budget invoice harbour meeting recipe "
         "sarah contact phone travel ticket museum library orchard bicycle repair "
         "morning evening winter summer report draft review deploy server backup "
         "cello violin concert garden compost tomato pepper basil market bakery").split()
for i in range(n):
    with open(os.path.join(out, f"page-{i:04d}.md"), "w") as f:
        f.write(f"# Page {i}\n")
        for s in range(12):
            f.write(f"\n## Section {s}\n")
            f.write(" ".join(rng.choice(words) for _ in range(40)) + ".\n")
PY
# The default model absent, its download failed offline a minute ago for
# the sixth time in a row: the next try is 16 minutes away.
mkdir -p "$home/models"
at=$(date -u -d '1 minute ago' +%Y-%m-%dT%H:%M:%SZ)
printf '{"name":"all-MiniLM-L6-v2-Q4_K_M.gguf","at":"%s","error":"dial tcp: lookup huggingface.co: no such host","offline":true,"count":6}\n' "$at" \
	>"$home/models/.all-MiniLM-L6-v2-Q4_K_M.gguf.failed.json"
"$1/memhost" --no-server sync >/dev/null

# Wall time and CPU time (user + system of memhost and every process it
# waited for, its plugin included) of each run, alternating builds.
python3 - "$runs" "$pages" "$@" <<'PY'
import json, resource, statistics, subprocess, sys, time
runs, pages, dirs = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
q = ["--no-server", "recall", "lantern harbour"]
wall = {d: [] for d in dirs}
cpu = {d: [] for d in dirs}
for d in dirs:
    subprocess.run([d + "/memhost"] + q, stdout=subprocess.DEVNULL, check=True)  # warm-up
for _ in range(runs):
    for d in dirs:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([d + "/memhost"] + q, stdout=subprocess.DEVNULL, check=True)
        t1 = time.perf_counter()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall[d].append((t1 - t0) * 1000)
        cpu[d].append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000)
for d in dirs:
    r = json.loads(subprocess.run([d + "/memhost"] + q + ["--json"], capture_output=True, check=True).stdout)
    print(f"{d}: {pages} pages, {runs} runs: wall median {statistics.median(wall[d]):.1f} ms "
          f"(min {min(wall[d]):.1f}, max {max(wall[d]):.1f}), CPU median {statistics.median(cpu[d]):.1f} ms; "
          f"{r['mode']}: {r.get('reason', '')}")
PY
