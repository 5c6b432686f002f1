#!/usr/bin/env python3
"""Grow a JSONL corpus of real text to a target size with planted near-duplicates.

Every document of BASE.jsonl is written once; then, round after round, perturbed copies are
written (a few percent of the words dropped, swapped or replaced by a word from elsewhere in
the corpus, and a line added or not), until OUT reaches the target size. The copies are near
duplicates of known originals, so a dedup benchmark on it has real text and real work.

usage: make_text_corpus.py BASE.jsonl OUT.jsonl [--target-mb 1000] [--seed 1]
"""
import argparse
import json
import random


def perturb(words, rng, vocabulary):
    out = list(words)
    edits = max(1, int(len(out) * rng.uniform(0.005, 0.05)))
    for _ in range(edits):
        if not out:
            break
        i = rng.randrange(len(out))
        choice = rng.random()
        if choice < 0.4:
            del out[i]
        elif choice < 0.7:
            out[i] = rng.choice(vocabulary)
        else:
            j = rng.randrange(len(out))
            out[i], out[j] = out[j], out[i]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("out")
    ap.add_argument("--target-mb", type=float, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    docs = [json.loads(line) for line in open(args.base, encoding="utf-8")]
    vocabulary = [w for d in docs[:2000] for w in d["text"].split()[:50]]
    target = args.target_mb * 1e6
    written = 0
    with open(args.out, "w", encoding="utf-8") as out:
        def emit(doc_id, text):
            nonlocal written
            line = json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n"
            out.write(line)
            written += len(line.encode("utf-8"))
        for d in docs:
            emit(d["id"], d["text"])
        copy = 0
        while written < target:
            d = docs[rng.randrange(len(docs))]
            copy += 1
            emit(f"{d['id']}#copy{copy}", " ".join(perturb(d["text"].split(), rng, vocabulary)))
    print(f"{written / 1e6:.0f} MB, {len(docs)} originals, {copy} perturbed copies")


if __name__ == "__main__":
    main()
