#!/usr/bin/env python3
"""Prints scripts/bench-peer.sh's markdown table from its measurements.

    report.py TIMES_TSV FACTS_TSV

TIMES_TSV lines (timeit.py): "measure:tool", wall s, CPU s, exit status.
FACTS_TSV lines: key, tool, value (sizes in bytes, chunk and token
counts, and "skip" reasons). Each cell is the median over the runs (over
the queries for recall); a tool without a figure gets "n/a".
"""
import collections
import statistics
import sys

TOOLS = ("qmd", "memhost")


def load(times_path, facts_path):
    times = collections.defaultdict(list)
    with open(times_path) as f:
        for line in f:
            label, wall, cpu, rc = line.rstrip("\n").split("\t")
            if rc == "0":
                times[label].append((float(wall), float(cpu)))
    facts = collections.defaultdict(list)
    with open(facts_path) as f:
        for line in f:
            key, tool, value = line.rstrip("\n").split("\t", 2)
            facts[(key, tool)].append(value)
    return times, facts


def main():
    times, facts = load(sys.argv[1], sys.argv[2])

    def med(measure, tool, which=0):
        v = [t[which] for t in times.get(f"{measure}:{tool}", [])]
        return statistics.median(v) if v else None

    def fact(key, tool):
        v = [float(x) for x in facts.get((key, tool), [])]
        return statistics.median(v) if v else None

    def note(key):
        return facts.get((key, "-"), [""])[0]

    rows = []

    def row(name, values, fmt, ratio=True):
        cells = [fmt(v) if v is not None else "n/a" for v in values]
        r = ""
        if ratio and None not in values and values[1]:
            r = f"{values[0] / values[1]:.2f}"
        rows.append(f"| {name} | {cells[0]} | {cells[1]} | {r or 'n/a'} |")

    def secs(v):
        return f"{v:.3f} s" if v < 10 else f"{v:.1f} s"

    def ms(v):
        return f"{v * 1000:.0f} ms" if v >= 0.1 else f"{v * 1000:.1f} ms"

    def mb(v):
        return f"{v / 1e6:.1f} MB"

    def num(v):
        return f"{v:,.0f}"

    pages, epages, esections = note("pages"), note("embed_pages"), note("embed_sections")
    runs, queries = note("runs"), note("queries")
    t = lambda m, w=0: [med(m, x, w) for x in TOOLS]
    f = lambda k: [fact(k, x) for x in TOOLS]
    row(f"index from scratch, keyword only ({pages} pages): wall", t("index"), secs)
    row("  same: CPU (user+sys, process tree)", t("index", 1), secs)
    row("index size on disk, keyword only", f("index_bytes"), mb)
    row("no-change re-index: wall", t("reindex"), ms)
    row("re-index after editing 10 pages: wall", t("edit10"), ms)
    row(f"CLI keyword recall, one-shot process (median of {queries} queries): wall", t("recall"), ms)
    row("  same: CPU", t("recall", 1), ms)
    row(f"embedding {epages} pages of {esections} sections from scratch: wall", t("embed"), secs)
    row("  same: CPU (user+sys, process tree)", t("embed", 1), secs)
    row("  texts embedded (chunks)", f("embed_texts"), num)
    row("  tokens embedded (MiniLM tokenizer, [CLS]/[SEP] included)", f("embed_tokens"), num)
    row("  texts cut to the model's 512-token context", f("embed_truncated"), num, ratio=False)
    tok, wall, cpu = f("embed_tokens"), t("embed"), t("embed", 1)
    per = lambda a, b: [x / y if x is not None and y else None for x, y in zip(a, b)]
    row("  tokens per wall-second", per(tok, wall), num)
    row("  tokens per CPU-second", per(tok, cpu), num)
    row(f"index size on disk after embedding {epages} pages", f("embed_bytes"), mb)
    print("| measure | QMD | memhost | ratio (QMD/memhost) |")
    print("| --- | --- | --- | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
