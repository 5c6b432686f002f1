#!/usr/bin/env python3
"""The Python package `neardup` against its Python peers, in one run on the same texts, end to
end from Python strings (reading the corpus is not timed).

1. SimHash: `neardup.compat.Simhash(text).value` (one object per text, the drop-in) and
   `neardup.compat.python_simhash_many(texts)` (batch, parallel) against the PyPI package
   `simhash` (`Simhash(text).value`); the values must be equal.
2. MinHash + LSH, the dedup candidate search: a 128-value signature per text of its word
   5-shingles, then every pair sharing an LSH band at threshold 0.8. neardup: one
   `Fingerprinter.minhash_many` (parallel, GIL released) and `minhash_candidate_pairs`;
   datasketch: `MinHash.update_batch` per text, `MinHashLSH.insert` then `query` per text;
   rensa: `RMinHash.update` per text, `RMinHashLSH(num_bands=16)` insert then query. (The
   three hash families differ, so the candidate pairs are close, not equal; their counts are
   printed.)

usage: python_peers.py [CORPUS.jsonl] [--max-mb 20]
       (CORPUS defaults to /work/bench-data/rustdoc.jsonl; make one with
        tools/bench/make_rustdoc_jsonl.py /tmp/rustdoc.jsonl --max-mb 20)
Prints one line per measurement (neardup's: the best of 3 runs) and the ratios.
"""
import argparse
import json
import os
import time

WIDTH = 5
THRESHOLD = 0.8
NUM_PERM = 128
REPEAT = 3


def read(path, max_mb):
    texts, size = [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            text = json.loads(line)["text"]
            texts.append(text)
            size += len(text.encode("utf-8"))
            if size >= max_mb * 1e6:
                break
    return texts, size


def timed(name, size, fn, repeat=1):
    """The result of `fn` and its best time of `repeat` runs (neardup's runs take a fraction of
    a second, so one spike of load on a shared machine would decide a single one; the peers'
    take seconds, and run once)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    print(f"{name:<44} {best:8.2f} s {size / 1e6 / best:9.1f} MB/s", flush=True)
    return result, best


def shingles(text):
    """Word 5-shingles as neardup's `word-shingles` profile makes them (lower case, white-space
    words), for the peers."""
    words = text.lower().split()
    return {" ".join(words[i : i + WIDTH]) for i in range(max(1, len(words) - WIDTH + 1))}


def simhash_section(texts, size):
    import simhash

    from neardup import compat

    theirs, t_theirs = timed("simhash (PyPI) Simhash(text).value", size, lambda: [simhash.Simhash(t).value for t in texts])
    ours, t_ours = timed("neardup.compat.Simhash(text).value", size, lambda: [compat.Simhash(t).value for t in texts], REPEAT)
    many, t_many = timed("neardup.compat.python_simhash_many(texts)", size, lambda: compat.python_simhash_many(texts), REPEAT)
    assert ours == theirs, "values differ"
    assert [int(v) for v in many] == theirs, "batch values differ"
    print(f"  values equal on {len(texts)} texts")
    return {"simhash_drop_in": t_theirs / t_ours, "simhash_batch": t_theirs / t_many}


def datasketch_lsh(texts):
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    sigs = []
    for i, text in enumerate(texts):
        m = MinHash(num_perm=NUM_PERM)
        m.update_batch([s.encode("utf-8") for s in shingles(text)])
        lsh.insert(i, m)
        sigs.append(m)
    return {(min(i, j), max(i, j)) for i, m in enumerate(sigs) for j in lsh.query(m) if j != i}


def rensa_lsh(texts):
    from rensa import RMinHash, RMinHashLSH

    lsh = RMinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, num_bands=16)
    sigs = []
    for i, text in enumerate(texts):
        m = RMinHash(num_perm=NUM_PERM, seed=42)
        m.update(list(shingles(text)))
        lsh.insert(i, m)
        sigs.append(m)
    return {(min(i, j), max(i, j)) for i, m in enumerate(sigs) for j in lsh.query(m) if j != i}


def neardup_lsh(texts):
    import neardup

    profile = dict(neardup.Fingerprinter("web").profile)
    profile.update(
        name="word5-minhash",
        normalize={**profile["normalize"], "unicode": "none", "fold_fullwidth": False},
        tokenizer="words",
        features={"kind": "word-shingles", "width": WIDTH},
        minhash={"num_perm": NUM_PERM, "seed": 1},
    )
    sigs = neardup.Fingerprinter(profile).minhash_many(texts)
    pairs = neardup.minhash_candidate_pairs(sigs, threshold=THRESHOLD)
    return {(int(a), int(b)) for a, b in pairs}


def minhash_section(texts, size):
    ours, t_ours = timed("neardup minhash_many + candidate pairs", size, lambda: neardup_lsh(texts), REPEAT)
    theirs, t_ds = timed("datasketch MinHash + MinHashLSH", size, lambda: datasketch_lsh(texts))
    rensa, t_rensa = timed("rensa RMinHash + RMinHashLSH", size, lambda: rensa_lsh(texts))
    print(f"  candidate pairs: neardup {len(ours)}, datasketch {len(theirs)}, rensa {len(rensa)}")
    return {"minhash_lsh_vs_datasketch": t_ds / t_ours, "minhash_lsh_vs_rensa": t_rensa / t_ours}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default="/work/bench-data/rustdoc.jsonl")
    ap.add_argument("--max-mb", type=float, default=20)
    args = ap.parse_args()
    texts, size = read(args.corpus, args.max_mb)
    print(f"{len(texts)} texts, {size / 1e6:.1f} MB, {os.cpu_count()} CPUs")
    ratios = simhash_section(texts, size)
    ratios.update(minhash_section(texts, size))
    print("ratios (peer time / neardup time):")
    for name, ratio in ratios.items():
        print(f"  {name:<28} {ratio:7.1f}x")


if __name__ == "__main__":
    main()
