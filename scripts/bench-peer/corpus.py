#!/usr/bin/env python3
"""Writes the benchmark corpus of scripts/bench-peer.sh: markdown pages of
English text built from WordNet (Debian's wordnet-base), and the queries.

    corpus.py WORDNET_DIR OUT_DIR PAGES QUERIES QUERY_FILE [SECTIONS]

Each page is a title (a synset's lemma) and SECTIONS (default ten) H2 sections, one per
synset: the page's own and the synsets it points to (hypernyms, hyponyms,
similar words, derivations...), filled up with random synsets. A section
is three to four lines of glosses and usage examples, about 50-70 words,
so a page reads like a small encyclopedia entry. Everything comes from a
fixed seed and WordNet's file order: the same PAGES give the same files,
byte for byte, and page i is the same page whatever PAGES is (a run with
EMBED_PAGES uses the first pages of the same corpus).

Queries are 1-3 consecutive content words (letters only, 4+ characters,
no stop word) taken from random sections, one query a line: words that
are in the corpus, so both tools find something.
"""
import os
import random
import re
import sys

POS_FILES = [("noun", "n"), ("verb", "v"), ("adj", "a"), ("adv", "r")]
POS_NAME = {"n": "noun", "v": "verb", "a": "adjective", "s": "adjective", "r": "adverb"}
# Pointer symbols worth a section, in order of preference: what a reader of
# an entry would look at next.
POINTERS = ["@", "@i", "~", "~i", "&", "^", "+", "=", "%p", "#p", "%m", "#m", "%s", "#s", "!", ";c", "-c"]
STOP = set("""a about above after again against all also am an and any are as at be because been
before being below between both but by can could did do does doing down during each few for from
further had has have having he her here hers herself him himself his how i if in into is it its
itself just more most my myself no nor not now of off on once only or other our ours ourselves
out over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which while
who whom why will with would you your yours yourself yourselves something someone somebody
especially usually often used make made makes kind like compare example noun verb adjective adverb""".split())


def load(wndir):
    """Synsets in WordNet's file order: key -> (lemmas, pos, definition,
    examples, pointers)."""
    synsets, order = {}, []
    for fname, _ in POS_FILES:
        with open(os.path.join(wndir, "data." + fname), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):  # the licence header
                    continue
                head, _, gloss = line.partition(" | ")
                parts = head.split()
                offset, ss_type = parts[0], parts[2]
                n = int(parts[3], 16)
                lemmas = [re.sub(r"\(.*\)$", "", parts[4 + 2 * i]).replace("_", " ") for i in range(n)]
                p = 4 + 2 * n
                pcount = int(parts[p])
                ptrs = []
                for i in range(pcount):
                    sym, off, pos = parts[p + 1 + 4 * i: p + 4 + 4 * i]
                    ptrs.append((sym, off + ("a" if pos == "s" else pos)))
                # A gloss is "definition; "example one"; "example two"".
                pieces = [s.strip() for s in gloss.strip().split(";")]
                definition = pieces[0]
                examples = [s.strip('" ') for s in pieces[1:] if s.startswith('"')]
                more = [s for s in pieces[1:] if not s.startswith('"') and s]
                if more:  # a definition with a semicolon of its own
                    definition = "; ".join([definition] + more)
                key = offset + ("a" if ss_type == "s" else ss_type)
                synsets[key] = (lemmas, ss_type, definition, examples, ptrs)
                order.append(key)
    return synsets, order


def sentence(s):
    s = s.strip()
    if not s:
        return s
    s = s[0].upper() + s[1:]
    return s if s[-1] in ".!?" else s + "."


def section(synsets, key, rng, keys):
    lemmas, pos, definition, examples, ptrs = synsets[key]
    name = lemmas[0]
    lines = []
    also = ", ".join(lemmas[1:4])
    lead = f"{name} ({POS_NAME[pos]}){', also ' + also if also else ''}: {definition}"
    lines.append(sentence(lead))
    if examples:
        lines.append("For example: " + "; ".join(f'"{e}"' for e in examples[:3]) + ".")
    hyper = [k for s, k in ptrs if s in ("@", "@i") and k in synsets]
    if hyper:
        h = synsets[hyper[0]]
        lines.append(sentence(f"a kind of {h[0][0]}, that is {h[2]}"))
    # A line about another word keeps sections from being too short and
    # mixes the vocabulary as real notes do.
    other = synsets[keys[rng.randrange(len(keys))]]
    lines.append(sentence(f"compare {other[0][0]}: {other[2]}"))
    return name, lines


def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:40] or "page"


def main():
    wndir, out, pages, nqueries, qfile = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    nsections = int(sys.argv[6]) if len(sys.argv) > 6 else 10
    synsets, order = load(wndir)
    # Page titles: synsets with a gloss worth reading, one page per lemma,
    # in an order fixed by the seed.
    keys = [k for k in order if len(synsets[k][2].split()) >= 6]
    rng = random.Random(30)
    titles = keys[:]
    rng.shuffle(titles)
    seen, page_keys = set(), []
    for k in titles:
        name = synsets[k][0][0].lower()
        if name not in seen:
            seen.add(name)
            page_keys.append(k)
    if pages > len(page_keys):
        sys.exit(f"corpus.py: WordNet has {len(page_keys)} distinct titles, fewer than PAGES={pages}")
    sections_text = []
    for i, k in enumerate(page_keys[:pages]):
        prng = random.Random(f"page-{i}")  # page i is the same whatever PAGES is
        related = [p for s in POINTERS for (sym, p) in synsets[k][4] if sym == s and p in synsets]
        chosen = [k]
        for p in related:
            if p not in chosen:
                chosen.append(p)
            if len(chosen) == nsections:
                break
        while len(chosen) < nsections:
            chosen.append(keys[prng.randrange(len(keys))])
        title = synsets[k][0][0]
        body = [f"# {title[0].upper() + title[1:]}\n"]
        for c in chosen:
            heading, lines = section(synsets, c, prng, keys)
            body.append(f"\n## {heading[0].upper() + heading[1:]}\n\n" + "\n".join(lines) + "\n")
            sections_text.append(" ".join(lines))
        # 100 pages a folder, as a notebook of that size would be organised.
        folder = os.path.join(out, f"{i // 100:03d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{i:05d}-{slug(title)}.md"), "w", encoding="utf-8") as f:
            f.write("".join(body))
    qrng = random.Random(31)
    queries = []
    while len(queries) < nqueries:
        words = [w for w in re.findall(r"[A-Za-z]+", sections_text[qrng.randrange(len(sections_text))])]
        words = [w.lower() for w in words if len(w) >= 4 and w.lower() not in STOP]
        if not words:
            continue
        n = qrng.choice([1, 2, 3])
        start = qrng.randrange(max(1, len(words) - n + 1))
        q = " ".join(words[start:start + n])
        if q not in queries:
            queries.append(q)
    with open(qfile, "w", encoding="utf-8") as f:
        f.write("\n".join(queries) + "\n")


if __name__ == "__main__":
    main()
