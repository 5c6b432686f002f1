#!/usr/bin/env python3
"""Peer quality on labelled pairs: the numbers `neardup eval` is compared with.

    eval_peers.py PAIRS.jsonl --positive 3 --negative 0.5
        [--text-a-field text_a] [--text-b-field text_b] [--label-field label] [--json]

For every pair whose label is in --positive or --negative (labels compared as
numbers; others and null are ignored), computes:

  simhash-pypi      PyPI `simhash` 2.1.2, Simhash(a).distance(Simhash(b)) <= 3
                    (its defaults: char 4-grams of the lower-cased \\w text, md5, 64 bits)
  jaccard-w5        exact Jaccard of the sets of word 5-shingles >= 0.8
                    (words = str.split(); a text of fewer than 5 words is one shingle)
  minhash-w5        datasketch MinHash (128 permutations, seed 1) of the same
                    shingles, estimated Jaccard >= 0.8
  jaccard-c2        exact Jaccard of the sets of character bigrams (white space
                    removed) >= 0.5: a tokeniser-free peer for Chinese

and prints precision, recall and F1 per peer (a table, or JSON lines with
--json). Run with the peers venv (tools/peers/setup-venv.sh).
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib.metadata import version

from datasketch import MinHash
from simhash import Simhash


def word_shingles(text: str, width: int) -> set[str]:
    words = text.split()
    if not words:
        return set()
    if len(words) < width:
        return {" ".join(words)}
    return {" ".join(words[i : i + width]) for i in range(len(words) - width + 1)}


def char_bigrams(text: str) -> set[str]:
    chars = "".join(text.split())
    if len(chars) < 2:
        return {chars} if chars else set()
    return {chars[i : i + 2] for i in range(len(chars) - 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def minhash(shingles: set[str]) -> MinHash:
    m = MinHash(num_perm=128, seed=1)
    for s in shingles:
        m.update(s.encode("utf-8"))
    return m


def read_pairs(args: argparse.Namespace) -> list[tuple[bool, str, str]]:
    positive, negative = set(args.positive), set(args.negative)
    pairs = []
    with open(args.pairs, encoding="utf-8", newline="\n") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{args.pairs}:{lineno}: not JSON: {e}")
            label = obj.get(args.label_field)
            try:
                label = float(label)
            except (TypeError, ValueError):
                continue
            if label not in positive and label not in negative:
                continue
            a, b = obj.get(args.text_a_field), obj.get(args.text_b_field)
            if not isinstance(a, str) or not isinstance(b, str):
                sys.exit(f"{args.pairs}:{lineno}: missing text fields")
            pairs.append((label in positive, a, b))
    return pairs


def metrics(name: str, decisions: list[tuple[bool, bool]]) -> dict:
    tp = sum(p and d for p, d in decisions)
    fp = sum(not p and d for p, d in decisions)
    fn = sum(p and not d for p, d in decisions)
    tn = sum(not p and not d for p, d in decisions)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return {"peer": name, "precision": precision, "recall": recall, "f1": f1,
            "tp": tp, "fp": fp, "fn": fn, "tn": tn}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pairs")
    numbers = lambda s: [float(x) for x in s.split(",")]  # noqa: E731
    parser.add_argument("--positive", type=numbers, required=True)
    parser.add_argument("--negative", type=numbers, required=True)
    parser.add_argument("--text-a-field", default="text_a")
    parser.add_argument("--text-b-field", default="text_b")
    parser.add_argument("--label-field", default="label")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    pairs = read_pairs(args)
    peers = {
        f"simhash-pypi {version('simhash')} k<=3": [],
        "jaccard word 5-shingles >= 0.8": [],
        f"datasketch {version('datasketch')} minhash 128 w5 >= 0.8": [],
        "jaccard char bigrams >= 0.5": [],
    }
    names = list(peers)
    for positive, a, b in pairs:
        sa, sb = word_shingles(a, 5), word_shingles(b, 5)
        peers[names[0]].append((positive, Simhash(a).distance(Simhash(b)) <= 3))
        peers[names[1]].append((positive, jaccard(sa, sb) >= 0.8))
        peers[names[2]].append((positive, minhash(sa).jaccard(minhash(sb)) >= 0.8))
        peers[names[3]].append((positive, jaccard(char_bigrams(a), char_bigrams(b)) >= 0.5))
    rows = [metrics(name, decisions) for name, decisions in peers.items()]
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return
    print(f"{'peer':<44} {'P':>6} {'R':>6} {'F1':>6} {'TP':>4} {'FP':>4} {'FN':>4} {'TN':>4}")
    for r in rows:
        print(f"{r['peer']:<44} {r['precision']:>6.3f} {r['recall']:>6.3f} {r['f1']:>6.3f} "
              f"{r['tp']:>4} {r['fp']:>4} {r['fn']:>4} {r['tn']:>4}")


if __name__ == "__main__":
    main()
