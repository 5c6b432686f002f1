#!/usr/bin/env python3
"""Write fingerprint JSON lines as `neardup fingerprint` writes them (default profile: 64-bit
SimHash in hex, XXH3-128 digest, feature and byte counts), for `neardup pairs` at scale,
streaming, in constant memory.

Each line is, by default:
  - a new random fingerprint (about 89%);
  - a near copy of an earlier line (--near, 10%): its SimHash with 0-3 distinct bits flipped
    (uniformly: a quarter of them at distance 0), its own digest;
  - an exact copy of an earlier line (--exact, 1%): the same SimHash and digest (the same text).
Earlier lines are drawn from a reservoir sample of the new and near lines (copies of copies
make chains up to distance 6). At k = 3 `neardup pairs` finds every planted pair (a pair of
lines, named by their ids "0", "1", ...), plus a few among the random ones (about 1.2e4 at 100
million lines: C(n, 2) * 43745 / 2^64). What was planted is printed at the end.

usage: make_fingerprints.py OUT.jsonl --count N [--seed 1] [--near 0.10] [--exact 0.01]
"""
import random

from make_news_leads import Reservoir, generator_arguments, parse_generator_arguments, write_timed

BATCH = 8192


def write_fingerprints(out, args):
    """Writes args.count lines to `out`; returns the counts of each kind and of near distances."""
    rng = random.Random(args.seed)
    rand, bits = rng.random, rng.getrandbits
    reservoir = Reservoir(rng)
    counts = {"new": 0, "exact copy": 0, "near copy": 0}
    distances = [0, 0, 0, 0]
    exact, exact_or_near = args.exact, args.exact + args.near
    lines = []
    for n in range(args.count):
        draw = rand() if reservoir.items else 1.0
        if draw < exact:
            simhash, digest = reservoir.pick()
            counts["exact copy"] += 1
        else:
            if draw < exact_or_near:
                simhash = reservoir.pick()[0]
                flipped = rng.sample(range(64), int(rand() * 4))
                for bit in flipped:
                    simhash ^= 1 << bit
                distances[len(flipped)] += 1
                counts["near copy"] += 1
            else:
                simhash = bits(64)
                counts["new"] += 1
            digest = bits(128)
            reservoir.offer((simhash, digest))
        features = 40 + (digest & 63)
        lines.append(f'{{"id":"{n}","simhash":"{simhash:016x}","digest":"{digest:032x}",'
                     f'"features":{features},"bytes":{features * 7}}}\n')
        if len(lines) == BATCH:
            out.write("".join(lines))
            lines.clear()
    out.write("".join(lines))
    return counts, distances


def main():
    ap = generator_arguments(__doc__, "--count", exact=0.01, near=0.10)
    args = parse_generator_arguments(ap)
    counts, distances = write_timed(args.out, f"{args.count} fingerprints",
                                    lambda out: write_fingerprints(out, args))
    print(f"planted: {counts['new']} new, {counts['exact copy']} exact copies (same digest), "
          f"{counts['near copy']} near copies (at distance 0/1/2/3 from their source: "
          f"{'/'.join(map(str, distances))})")


if __name__ == "__main__":
    main()
