#!/usr/bin/env python3
"""N JSONL documents `{"id": "doc<i>", "text": ...}` of 80 words drawn from 20,000 (`w0` ...
`w19999`) by a fixed seed (random.Random(7)): unique texts of about 500 bytes, for loading a
database with `neardup index add` (tools/bench/index_in.sh INPUT=...). The first M documents
of a run with N > M are the documents of a run with M.

usage: make_word_docs.py N OUT.jsonl
"""
import json
import random
import sys


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(20000)]
    with open(out, "w") as f:
        for i in range(n):
            text = " ".join(rng.choice(vocabulary) for _ in range(80))
            f.write(json.dumps({"id": f"doc{i}", "text": text}) + "\n")


if __name__ == "__main__":
    main()
