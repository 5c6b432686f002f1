#!/usr/bin/env python3
"""`neardup pairs` against seomoz's C++ find_all (PyPI: simhash-pybind), side by side.

Both read the same file of 64-bit fingerprints (random, plus 10% near-copies with 0-3 bits
flipped and 1% exact duplicates: `index_bench gen`). seomoz runs find_all with 4 blocks at k = 3;
neardup runs `neardup pairs --k 3` on the file (parsing and writing JSON included). The script
reports both times and the ratio, then checks that neardup's pairs, as pairs of values, contain
every pair seomoz found, and that every extra pair joins two identical fingerprints (seomoz works
on a set of values, so it cannot report those).

Run it with the Python of a virtual environment holding simhash-pybind, kept outside the repo
(the package's module is called `simhash` and shadows the pure-Python package of that name):

    python3 -m venv /work/venv-pybind && /work/venv-pybind/bin/pip install simhash-pybind
    cargo build --release -p neardup && cargo build --release -p neardup-index --example index_bench
    /work/venv-pybind/bin/python tools/bench_pairs_vs_seomoz.py --n 1000000
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import simhash  # simhash-pybind


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="number of fingerprints")
    parser.add_argument("--k", type=int, default=3, help="Hamming distance")
    parser.add_argument("--blocks", type=int, default=4, help="seomoz's number of blocks")
    parser.add_argument("--neardup", default=os.path.join(root, "target/release/neardup"))
    parser.add_argument(
        "--gen", default=os.path.join(root, "target/release/examples/index_bench"),
        help="the index_bench example binary (writes the data set)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each tool (best kept)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "fps.txt")
        with open(data, "w") as f:
            subprocess.run([args.gen, "gen", str(args.n)], stdout=f, check=True)
        with open(data) as f:
            fps = [int(line) for line in f]
        print(f"{len(fps)} fingerprints, {len(set(fps))} distinct, k = {args.k}")

        seomoz_time, seomoz_pairs = float("inf"), None
        for _ in range(args.runs):
            start = time.perf_counter()
            found = simhash.find_all(fps, args.blocks, args.k)
            seomoz_time = min(seomoz_time, time.perf_counter() - start)
            seomoz_pairs = found

        out = os.path.join(tmp, "pairs.jsonl")
        neardup_time = float("inf")
        for _ in range(args.runs):
            with open(out, "w") as f:
                start = time.perf_counter()
                subprocess.run([args.neardup, "pairs", "--k", str(args.k), data],
                               stdout=f, check=True)
                neardup_time = min(neardup_time, time.perf_counter() - start)
        with open(out) as f:
            ours = [json.loads(line) for line in f]

    theirs = {(min(a, b), max(a, b)) for a, b in seomoz_pairs}
    ours_values = {}
    for p in ours:
        x, y = fps[p["a"]], fps[p["b"]]
        assert p["a"] < p["b"], p
        assert bin(x ^ y).count("1") == p["distance"] <= args.k, p
        ours_values.setdefault((min(x, y), max(x, y)), 0)
        ours_values[(min(x, y), max(x, y))] += 1
    missing = theirs - ours_values.keys()
    extra = ours_values.keys() - theirs
    extra_not_identical = [v for v in extra if v[0] != v[1]]
    identical_index_pairs = sum(1 for p in ours if fps[p["a"]] == fps[p["b"]])

    print(f"seomoz find_all ({args.blocks} blocks): {len(theirs)} pairs of values "
          f"in {seomoz_time:.3f} s (best of {args.runs})")
    print(f"neardup pairs: {len(ours)} pairs of lines ({len(ours_values)} pairs of values) "
          f"in {neardup_time:.3f} s (best of {args.runs}, whole process)")
    print(f"speed-up: {seomoz_time / neardup_time:.1f}x")
    print(f"pairs seomoz found that neardup missed: {len(missing)}")
    print(f"extra neardup pairs of values: {len(extra)}, of which between different values: "
          f"{len(extra_not_identical)}; pairs of lines holding identical values: "
          f"{identical_index_pairs}")
    ok = not missing and not extra_not_identical
    print("CHECK", "PASSED" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
