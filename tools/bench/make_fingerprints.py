#!/usr/bin/env python3
"""Write fingerprint JSON lines as `neardup fingerprint` writes them with the default profile
(64-bit SimHash and 256-bit digest in hex, feature and byte counts, as for texts of 200-455
bytes), for `neardup pairs` at scale, streaming, in constant memory (100 million lines: 15 GB).

Each line is, by default:
  - a new random fingerprint (about 89%);
  - a near copy of an earlier line (--near, 10%): its SimHash with 0-3 distinct bits flipped
    (uniformly: a quarter of them at distance 0), its own digest;
  - an exact copy of an earlier line (--exact, 1%): the same SimHash and digest (the same text).
Earlier lines are drawn from a reservoir sample of the new and near lines (copies of copies
make chains up to distance 6). At k = 3 `neardup pairs` finds every planted pair (a pair of
lines, named by their ids "0", "1", ...), plus a few among the random ones (about 1.2e4 at 100
million lines: C(n, 2) * 43745 / 2^64). What was planted is printed at the end. With --format
hex, each line is only the SimHash in 16 hex digits (what `pairs` also reads, naming lines by
their index from 0; 1.7 GB for 100 million), the same values for the same seed.

usage: make_fingerprints.py OUT --count N [--seed 1] [--near 0.10] [--exact 0.01]
                            [--format jsonl|hex]
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
    hex_only = args.format == "hex"
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
            digest = bits(256)
            reservoir.offer((simhash, digest))
        if hex_only:
            lines.append(f"{simhash:016x}\n")
        else:
            size = 200 + (digest & 255)
            lines.append(f'{{"id":"{n}","simhash":"{simhash:016x}","digest":"{digest:064x}",'
                         f'"features":{size - 4},"bytes":{size}}}\n')
        if len(lines) == BATCH:
            out.write("".join(lines))
            lines.clear()
    out.write("".join(lines))
    return counts, distances


def main():
    ap = generator_arguments(__doc__, "--count", exact=0.01, near=0.10)
    ap.add_argument("--format", choices=["jsonl", "hex"], default="jsonl",
                    help="fingerprint JSON lines, or only the SimHash in hex (16 digits a line)")
    args = parse_generator_arguments(ap)
    counts, distances = write_timed(args.out, f"{args.count} fingerprints",
                                    lambda out: write_fingerprints(out, args))
    print(f"planted: {counts['new']} new, {counts['exact copy']} exact copies (same digest), "
          f"{counts['near copy']} near copies (at distance 0/1/2/3 from their source: "
          f"{'/'.join(map(str, distances))})")


if __name__ == "__main__":
    main()
