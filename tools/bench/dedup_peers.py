#!/usr/bin/env python3
"""Dedup a JSONL corpus with the Python peers, timed, for a side-by-side comparison with
`neardup dedup` on the same input (tools/bench/dedup.sh runs both).

- datasketch: MinHash (128 permutations) of word 5-shingles, MinHashLSH at threshold 0.8;
  a document is a duplicate when the index already holds a candidate (online dedup).
- simhash: the PyPI package's Simhash(text) (character 4-grams) and SimhashIndex with k = 3;
  a document is a duplicate when get_near_dups finds anything.

usage: dedup_peers.py CORPUS.jsonl [--limit N]
Prints one JSON line per peer: {"peer", "documents", "bytes", "seconds", "mb_per_s", "removed"}.
"""
import argparse
import json
import time


def shingles(text, width=5):
    words = text.lower().split()
    return {" ".join(words[i:i + width]) for i in range(max(1, len(words) - width + 1))}


def run_datasketch(texts):
    from datasketch import MinHash, MinHashLSH
    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    removed = 0
    for i, text in enumerate(texts):
        m = MinHash(num_perm=128)
        m.update_batch([s.encode("utf-8") for s in shingles(text)])
        if lsh.query(m):
            removed += 1
        else:
            lsh.insert(str(i), m)
    return removed


def run_simhash(texts):
    from simhash import Simhash, SimhashIndex
    index = SimhashIndex([], k=3)
    removed = 0
    for i, text in enumerate(texts):
        s = Simhash(text)
        if index.get_near_dups(s):
            removed += 1
        else:
            index.add(str(i), s)
    return removed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--limit", type=int)
    args = ap.parse_args()
    texts = []
    with open(args.corpus, encoding="utf-8") as f:
        for line in f:
            texts.append(json.loads(line)["text"])
            if args.limit and len(texts) >= args.limit:
                break
    size = sum(len(t.encode("utf-8")) for t in texts)
    for name, run in [("datasketch MinHashLSH 0.8", run_datasketch), ("simhash 2.1.2 SimhashIndex k=3", run_simhash)]:
        start = time.perf_counter()
        removed = run(texts)
        seconds = time.perf_counter() - start
        print(json.dumps({"peer": name, "documents": len(texts), "bytes": size, "seconds": round(seconds, 3),
                          "mb_per_s": round(size / seconds / 1e6, 3), "removed": removed}), flush=True)


if __name__ == "__main__":
    main()
